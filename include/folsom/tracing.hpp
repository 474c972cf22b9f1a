/// @file
/// folsom::Tracer — a hook that opens one span per client operation.
///
/// Set Options::tracer and every operation started on the client (get, set, get_multi, stats,
/// ...) calls Tracer::start_span once, before anything is sent, and ends that span exactly
/// once, with the operation's outcome or error, just before the result is handed to the
/// caller. A request that fails before it is sent (invalid key, overloaded, not connected)
/// still has its span. With no tracer set, the cost is one null check per operation.
///
/// This header depends on nothing: bridge it to OpenTelemetry, or any tracing system, in a
/// few lines (docs/observability.md has a sketch; examples/09_trace_spans.cpp logs spans).
///
/// Threads: start_span runs on the thread that starts the operation; Span::end on the thread
/// that completes it (usually the client's I/O thread, or the initiating thread when the
/// request failed before being sent), possibly concurrently with other spans. Neither may
/// block for long or throw. Lifetime: the client holds a shared_ptr to the tracer; a span is
/// destroyed right after its end() call.
#pragma once

#include "folsom/export.hpp"
#include "folsom/metrics.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <system_error>

namespace folsom {

/// What an operation is, as it starts. Views are valid only during Tracer::start_span.
struct FOLSOM_EXPORT SpanStart {
    /// The operation ("get", "set", "delete", "get_multi", "stats", ...).
    std::string_view operation;
    /// The key (the first key for a multi-key operation; empty for stats/version/flush_all).
    std::string_view key;
    /// Keys in the operation (1 for single-key operations, 0 for stats/version/flush_all).
    std::size_t key_count = 0;
    /// "host:port" of the server the key is routed to when the operation starts (with a retry
    /// after failover the answer may come from another one); empty for operations that span
    /// several servers (multi-gets, stats, ...) or when no server is known.
    std::string_view server;
};

/// How an operation ended. Valid only during Span::end.
struct FOLSOM_EXPORT SpanEnd {
    /// The outcome: hit/miss for retrievals (hit: at least one value), the Status of stores,
    /// deletes and touches, ok for the others, or Outcome::error.
    Outcome outcome = Outcome::ok;
    std::error_code error{};  ///< set when outcome == Outcome::error
    std::size_t hits = 0;     ///< retrievals: keys that returned a value
};

/// One operation's span: ended exactly once, then destroyed.
class FOLSOM_EXPORT Span {
  public:
    virtual ~Span() = default;
    /// The operation completed (successfully or not). Called once; must not throw.
    virtual void end(const SpanEnd& result) noexcept = 0;
};

/// Opens spans; set one in Options::tracer.
class FOLSOM_EXPORT Tracer {
  public:
    virtual ~Tracer() = default;
    /// An operation starts. Returning nullptr is allowed (the operation is then not traced,
    /// e.g. when sampled out); an exception propagates to the caller that started it.
    virtual std::unique_ptr<Span> start_span(const SpanStart& start) = 0;
};

}  // namespace folsom
