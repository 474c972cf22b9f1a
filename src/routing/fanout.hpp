// Fan-out: the one mechanism behind every route that sends a request to more than one child
// (AllSync, AllAsync, AllMajority, AllFastest, AllInitial, Failover, MissFailover, WarmUp).
//
// A fan-out is an Operation of its own (FanoutOp, fanout.cpp) standing between the caller's
// part and the children: each child's send is one of its parts. It records each child's reply,
// and after every event asks its policy whether the caller can be answered now, with which
// child's reply, or whether the next child must be tried. The caller's part is answered exactly
// once, whatever the children do (fail at once, answer late, never answer before their timeout,
// answer after the caller was answered); the fan-out lives until its last child is done and
// is then freed.
//
// Values: a child whose reply the policy commits to as it arrives (the fastest, the initial
// child, the failover child being tried) has its value handed to the caller straight from the
// connection's buffer. Policies that choose among replies only once several are in (AllSync,
// AllMajority) copy each child's value until then; WarmUp copies the warm value it fills the
// cold route with.
//
// Request bytes: the key is copied into the fan-out (children after the first are sent after
// the caller's call has returned). The value stays the caller's (its operation keeps it until
// answered, and pins forwarded from the children keep it while a write still reads it), except
// for a policy that may send after the caller's call returned (failover, warm-up) with a value
// the caller only lent (Request::value_is_stable unset): that one is copied.
#pragma once

#include "routing/route.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

namespace folsom::routing {

class RouteTree;  // route_tree.hpp

enum class FanoutPolicy : std::uint8_t {
    all_sync,       ///< all at once; when all are in, the worst reply
    all_async,      ///< all at once; NullRoute's reply at once, children unheard
    all_majority,   ///< all at once; once half + 1 agree, else the worst when all are in
    all_fastest,    ///< all at once; the first non-error reply, else the last error
    all_initial,    ///< all at once; the first child's reply
    failover,       ///< one at a time while the reply is an error
    miss_failover,  ///< as failover, and on a miss for gets
    warm_up,        ///< gets: cold, then warm on a miss, filling cold from warm's hit
};

/// How one fan-out route sends: its policy, children and parameters. Lives as long as the
/// route tree.
struct FanoutPlan {
    /// The tree the children belong to: a fan-out keeps it alive until its last child is done
    /// (children may still be in flight after the caller was answered and let go of the
    /// client).
    const RouteTree* tree = nullptr;
    FanoutPolicy policy = FanoutPolicy::all_sync;
    std::span<Route* const> children;
    RouteCounters* counters = nullptr;
    /// failover / miss_failover: cap on the exptime of writes sent to a child after the first.
    std::optional<std::uint32_t> failover_exptime;
    /// warm_up: exptime of the fill written into the cold child.
    std::uint32_t fill_exptime = 0;
};

/// Sends `r` (one key) along `plan` as part `part` of `op`: op.on_complete(part, ...) follows
/// exactly once.
void fan_out(const FanoutPlan& plan, detail::Operation& op, std::uint32_t part,
             const detail::Request& r);

}  // namespace folsom::routing
