/// @file
/// folsom::Metrics — per-server telemetry hooks the client calls on its request path.
///
/// Set Options::metrics to an implementation (the built-in one is MetricsRegistry,
/// metrics_registry.hpp) and the client reports, for every server: each request it completes
/// (operation, outcome or error, keys and hits, latency), requests outstanding, bytes written
/// and read, and connection events (connects, disconnects, reconnect attempts, failed
/// connects). With no Metrics set, the cost is one null check per hook.
///
/// Counting rules (what "one request" means):
///   * One record per command on the wire: a single-key operation is one record; a multi-get
///     is one record per server (or per chunk of a long key list) it touched; stats, version
///     and flush_all one per server.
///   * The record goes to the server the command was sent to, when it completed there. A
///     request lost with its connection and then retried (Options::retry_idempotent) is
///     reported with RequestRecord::retried set; its retry is reported as a request of its own
///     (on whichever server it went to), so every request is counted once as completed.
///   * Requests refused before they were queued on a connection (invalid key, value too
///     large, not connected) have RequestRecord::sent false and no latency. Requests that
///     never reached a server at all (overloaded, or no server to route to) carry
///     Metrics::no_server.
///
/// Thread-safety: every hook may be called concurrently from any thread (callers' threads and
/// the I/O threads), and must not block, allocate or throw. add_server() is the exception:
/// it is called when a server joins a client (at connect, or when discovery adds one), may
/// allocate, and may be called concurrently with the other hooks. One Metrics may be shared
/// by several clients. Lifetime: the client holds a shared_ptr to it.
#pragma once

#include "folsom/error.hpp"
#include "folsom/export.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <system_error>

namespace folsom {

/// The operation a request record is about (the memcached command family).
enum class MetricOp : std::uint8_t {
    get,          ///< get
    gets,         ///< gets (get with cas)
    gat,          ///< gat (get and touch)
    gats,         ///< gats (gat with cas)
    set,          ///< set
    add,          ///< add
    replace,      ///< replace
    append,       ///< append
    prepend,      ///< prepend
    cas,          ///< cas
    del,          ///< delete
    incr,         ///< incr
    decr,         ///< decr
    touch,        ///< touch
    flush_all,    ///< flush_all
    stats,        ///< stats
    version,      ///< version
    verbosity,    ///< verbosity
    noop,         ///< noop (binary and meta)
    meta_get,     ///< mg with stampede flags (Client::meta_get)
    meta_set,     ///< ms (Client::meta_set)
    meta_delete,  ///< md (Client::meta_delete)
};
/// Number of MetricOp values (for arrays indexed by operation).
inline constexpr std::size_t metric_op_count = 22;

/// The operation's name as memcached spells the command ("get", "delete", "flush_all", ...).
FOLSOM_EXPORT std::string_view to_string(MetricOp op) noexcept;

/// How a request ended: the reply's meaning, or `error` (then RequestRecord::error says which).
enum class Outcome : std::uint8_t {
    hit,              ///< a retrieval that returned at least one value
    miss,             ///< a retrieval that returned no value
    ok,               ///< OK, or a numeric reply (incr/decr), version, stats
    stored,           ///< STORED
    not_stored,       ///< NOT_STORED
    exists,           ///< EXISTS (cas mismatch)
    not_found,        ///< NOT_FOUND
    deleted,          ///< DELETED
    touched,          ///< TOUCHED
    value_too_large,  ///< the server refused a value as too large
    out_of_memory,    ///< the server could not store for lack of memory
    error,            ///< failed: see RequestRecord::error
    sent,             ///< a quiet ascii write (noreply): written, outcome unknown
};
/// Number of Outcome values.
inline constexpr std::size_t outcome_count = 13;

/// The outcome's label ("hit", "miss", "stored", ..., "error").
FOLSOM_EXPORT std::string_view to_string(Outcome o) noexcept;

/// A short, stable label for an error: the errc enumerator's name ("timeout", "invalid_key",
/// "connection_lost", ...) for folsom errors, "other" for anything else.
FOLSOM_EXPORT std::string_view error_label(std::error_code ec) noexcept;

/// Largest folsom::errc value metrics keep apart; larger codes are counted as "other".
inline constexpr std::size_t max_error_label = 31;

/// What happened to one connection of a server.
enum class ConnectionEvent : std::uint8_t {
    connected,          ///< a connect (with its TLS/SASL handshake) succeeded
    disconnected,       ///< a connected connection was lost (I/O error, timeout, bad reply)
    reconnect_attempt,  ///< a connect attempt after a failure (the first connect is not one)
    connect_failed,     ///< a connect attempt failed (refused, timed out, handshake refused)
};
/// Number of ConnectionEvent values.
inline constexpr std::size_t connection_event_count = 4;

/// The event's name ("connected", "disconnected", "reconnect_attempt", "connect_failed").
FOLSOM_EXPORT std::string_view to_string(ConnectionEvent e) noexcept;

/// One completed request (see the counting rules in metrics.hpp). Plain data, valid only
/// during the Metrics::request_completed call.
struct FOLSOM_EXPORT RequestRecord {
    std::uint32_t server = 0;       ///< id from Metrics::add_server, or Metrics::no_server
    MetricOp op = MetricOp::get;    ///< the command
    Outcome outcome = Outcome::ok;  ///< how it ended
    std::error_code error{};        ///< when outcome == Outcome::error: why
    bool sent = false;              ///< it was queued on a connection (request_sent was called)
    bool retried = false;           ///< lost with its connection; a retry follows
    std::uint32_t keys = 0;         ///< retrievals: keys asked for
    std::uint32_t hits = 0;         ///< retrievals: keys that returned a value
    std::chrono::nanoseconds latency{0};  ///< from queueing to completion (0 when !sent)
};

/// The hooks a client calls; implement them to feed your own metrics system, or use
/// MetricsRegistry. Every hook except add_server must be wait-free in spirit: no lock, no
/// allocation, no exception, no I/O (it runs on the client's request path).
class FOLSOM_EXPORT Metrics {
  public:
    /// The server id of requests that never reached a server (overloaded, nothing to route to).
    static constexpr std::uint32_t no_server = 0xffffffffu;

    virtual ~Metrics() = default;

    /// A server ("host:port") joins a client. Returns the id the other hooks will name it by.
    /// Called again with the same name (another client sharing this Metrics, or a server that
    /// discovery brings back), it may return the same id, so that one server is one series.
    virtual std::uint32_t add_server(std::string_view name) = 0;

    /// A request was queued on a connection of `server` (it is now outstanding).
    virtual void request_sent(std::uint32_t server, MetricOp op) noexcept = 0;

    /// A request completed (or was refused before being sent, or was lost and will be retried:
    /// see RequestRecord). Called before the request's result is handed to the caller.
    virtual void request_completed(const RequestRecord& record) noexcept = 0;

    /// `bytes` were written to one of `server`'s connections.
    virtual void bytes_sent(std::uint32_t server, std::size_t bytes) noexcept = 0;

    /// `bytes` were read from one of `server`'s connections.
    virtual void bytes_received(std::uint32_t server, std::size_t bytes) noexcept = 0;

    /// One of `server`'s connections changed (see ConnectionEvent).
    virtual void connection_event(std::uint32_t server, ConnectionEvent event) noexcept = 0;
};

}  // namespace folsom
