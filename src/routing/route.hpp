// Route: one node of a resolved route tree (routes.hpp describes the configuration; this is
// what it becomes when the client connects).
//
// A route takes one single-key request — one part of a caller's Operation — and sends it on:
// to a pool's servers, to several children (fanout.hpp), or to one child it selects. Whatever
// it does, the part ends with exactly one on_complete, as with ClientCore::submit. Multi-key
// retrieval parts are split into single keys above the tree (route_core.cpp), so no route
// handles more than one key.
//
// Routes are built once and immutable afterwards: the request path does no map lookup and no
// string work (but the prefix selector's compare against prefixes sorted at load).
#pragma once

#include "folsom/detail/operation.hpp"
#include "folsom/routes.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace folsom::routing {

/// What one route counts (Client::route_stats reads them).
struct RouteCounters {
    RouteCounters(std::string n, RouteType t) : name(std::move(n)), type(t) {}
    const std::string name;
    const RouteType type;
    std::atomic<std::uint64_t> requests{0};         ///< requests this route was asked to send
    std::atomic<std::uint64_t> failovers{0};        ///< sends to a child after the first (failover)
    std::atomic<std::uint64_t> shadow_requests{0};  ///< copies sent to shadows
    std::atomic<std::uint64_t> shadow_errors{0};    ///< shadow copies that failed
};

class Route {
  public:
    explicit Route(RouteCounters& counters) noexcept : counters_(counters) {}
    virtual ~Route() = default;
    Route(const Route&) = delete;
    Route& operator=(const Route&) = delete;

    /// Sends `r` (one key in r.key; r.keys empty or that one key) as part `part` of `op`.
    /// Thread-safe. `r`'s views are valid only during the call, except r.value, which the
    /// caller's operation keeps until its part completes (and while it is pinned).
    virtual void send(detail::Operation& op, std::uint32_t part, const detail::Request& r) = 0;

    /// The server (RouteCore's index) `key` reaches for `code` when nothing fails: the
    /// first pool on the path. For Client::server_for and traces.
    virtual std::size_t server_for(std::string_view key, detail::OpCode code) const noexcept = 0;

    RouteCounters& counters() const noexcept { return counters_; }

  protected:
    void count_request() const noexcept {
        counters_.requests.fetch_add(1, std::memory_order_relaxed);
    }

  private:
    RouteCounters& counters_;
};

/// Gets and their kin: requests whose miss is an answer (MissFailoverRoute and WarmUpRoute
/// act on it).
constexpr bool is_get_like(detail::OpCode c) noexcept {
    return detail::is_retrieval(c) || c == detail::OpCode::meta_get;
}

/// Requests that change what a server stores with an exptime (FailoverRoute's
/// failover_exptime caps it).
constexpr bool has_write_exptime(detail::OpCode c) noexcept {
    return detail::is_store(c) || c == detail::OpCode::meta_set || c == detail::OpCode::touch ||
           c == detail::OpCode::gat || c == detail::OpCode::gats;
}

/// NullRoute's reply for `code` (mcrouter's default reply): a miss for gets, not_found for
/// delete, touch and counters, not_stored for stores.
detail::Completion default_reply(detail::OpCode code) noexcept;

}  // namespace folsom::routing
