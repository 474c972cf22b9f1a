// The routes that send to several children (AllSync, AllAsync, AllMajority, AllFastest,
// AllInitial, Failover, MissFailover, WarmUp): each is a FanoutPlan (fanout.hpp) run per
// request.
#pragma once

#include "routing/fanout.hpp"
#include "routing/route.hpp"

#include <vector>

namespace folsom::routing {

class FanoutRoute final : public Route {
  public:
    /// `plan.children` and `plan.counters` are set here (to `children` and `counters`).
    FanoutRoute(RouteCounters& counters, FanoutPlan plan, std::vector<Route*> children)
        : Route(counters), children_(std::move(children)), plan_(plan) {
        plan_.children = children_;
        plan_.counters = &counters;
    }

    void send(detail::Operation& op, std::uint32_t part, const detail::Request& r) override {
        // WarmUpRoute: everything but gets goes to the cold route alone.
        if (plan_.policy == FanoutPolicy::warm_up && !is_get_like(r.code)) {
            count_request();
            children_.front()->send(op, part, r);
            return;
        }
        fan_out(plan_, op, part, r);
    }
    std::size_t server_for(std::string_view key, detail::OpCode code) const noexcept override {
        return children_.front()->server_for(key, code);
    }

  private:
    const std::vector<Route*> children_;
    FanoutPlan plan_;
};

}  // namespace folsom::routing
