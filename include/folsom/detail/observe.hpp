// Mapping of the client's internal vocabulary onto the observability one (metrics.hpp,
// tracing.hpp), shared by the connection's request meter and the operations' spans.
// Internal; included by async_op.hpp.
#pragma once

#include "folsom/detail/operation.hpp"
#include "folsom/meta.hpp"
#include "folsom/metrics.hpp"
#include "folsom/results.hpp"
#include "folsom/status.hpp"
#include "folsom/tracing.hpp"
#include "folsom/value.hpp"

#include <cstdint>
#include <optional>
#include <system_error>
#include <tuple>
#include <vector>

namespace folsom::detail {

static_assert(static_cast<std::size_t>(OpCode::meta_delete) + 1 == metric_op_count,
              "MetricOp mirrors OpCode");
static_assert(static_cast<int>(MetricOp::del) == static_cast<int>(OpCode::del));
static_assert(static_cast<int>(MetricOp::touch) == static_cast<int>(OpCode::touch));
static_assert(static_cast<int>(MetricOp::meta_get) == static_cast<int>(OpCode::meta_get));

constexpr MetricOp to_metric_op(OpCode c) noexcept {
    return static_cast<MetricOp>(c);
}

constexpr Outcome to_outcome(Status s) noexcept {
    switch (s) {
        case Status::ok:
            return Outcome::ok;
        case Status::stored:
            return Outcome::stored;
        case Status::not_stored:
            return Outcome::not_stored;
        case Status::exists:
            return Outcome::exists;
        case Status::not_found:
            return Outcome::not_found;
        case Status::deleted:
            return Outcome::deleted;
        case Status::touched:
            return Outcome::touched;
        case Status::value_too_large:
            return Outcome::value_too_large;
        case Status::out_of_memory:
            return Outcome::out_of_memory;
        case Status::sent:
            return Outcome::sent;
    }
    return Outcome::ok;
}

// ---- how each kind of operation result ends its span ------------------------------------

/// A retrieval: its error, else a hit when `hits()` (asked only without an error) counts a
/// value, else a miss.
template <class CountHits>
SpanEnd retrieval_end(std::error_code ec, CountHits hits) noexcept {
    SpanEnd e;
    e.error = ec;
    if (e.error) {
        e.outcome = Outcome::error;
        return e;
    }
    e.hits = hits();
    e.outcome = e.hits ? Outcome::hit : Outcome::miss;
    return e;
}

inline SpanEnd span_end_of(const std::tuple<std::error_code, std::optional<Value>>& r) noexcept {
    return retrieval_end(std::get<0>(r), [&] { return std::get<1>(r) ? 1 : 0; });
}

inline SpanEnd span_end_of(const std::tuple<std::error_code, Status>& r) noexcept {
    SpanEnd e;
    e.error = std::get<0>(r);
    e.outcome = e.error ? Outcome::error : to_outcome(std::get<1>(r));
    return e;
}

inline SpanEnd span_end_of(
    const std::tuple<std::error_code, std::optional<std::uint64_t>>& r) noexcept {
    SpanEnd e;
    e.error = std::get<0>(r);
    e.outcome = e.error ? Outcome::error : std::get<1>(r) ? Outcome::ok : Outcome::not_found;
    return e;
}

/// A meta get: a hit when it returned a value (a vivified stub counts: it is a value).
inline SpanEnd span_end_of(const std::tuple<std::error_code, MetaGetResult>& r) noexcept {
    return retrieval_end(std::get<0>(r), [&] { return std::get<1>(r).value ? 1 : 0; });
}

/// A multi-get: a hit when any key returned a value; an error only when the whole operation
/// failed (keys that failed on their own show in MultiGetResult::errors, not here).
inline SpanEnd span_end_of(const std::tuple<std::error_code, MultiGetResult>& r) noexcept {
    return retrieval_end(std::get<0>(r), [&] {
        std::size_t hits = 0;
        for (const auto& v : std::get<1>(r).values)
            hits += v ? 1 : 0;
        return hits;
    });
}

/// A zero-copy multi-get, as above.
inline SpanEnd span_end_of(const std::tuple<std::error_code, MultiGetViewResult>& r) noexcept {
    return retrieval_end(std::get<0>(r), [&] { return std::get<1>(r).hits; });
}

/// A multi-key write: an error only when every key failed (per-key outcomes are in the
/// result, and in the per-server request metrics).
inline SpanEnd span_end_of(const std::tuple<std::error_code, MultiWriteResult>& r) noexcept {
    SpanEnd e;
    e.error = std::get<0>(r);
    e.outcome = e.error ? Outcome::error : Outcome::ok;
    return e;
}

/// A request to every server: an error only when every server failed.
template <class T>
SpanEnd span_end_of(const std::tuple<std::error_code, std::vector<NodeResult<T>>>& r) noexcept {
    SpanEnd e;
    e.error = std::get<0>(r);
    e.outcome = e.error ? Outcome::error : Outcome::ok;
    return e;
}

}  // namespace folsom::detail
