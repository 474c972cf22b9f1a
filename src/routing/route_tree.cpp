#include "routing/route_tree.hpp"

#include "routing/routes/fanout_route.hpp"
#include "routing/routes/fixed_reply_routes.hpp"
#include "routing/routes/pool_route.hpp"
#include "routing/routes/selector_routes.hpp"

#include <cmath>
#include <set>

namespace folsom::routing {
namespace {

FanoutPolicy policy_of(RouteType t) {
    switch (t) {
        case RouteType::all_sync:
            return FanoutPolicy::all_sync;
        case RouteType::all_async:
            return FanoutPolicy::all_async;
        case RouteType::all_majority:
            return FanoutPolicy::all_majority;
        case RouteType::all_fastest:
            return FanoutPolicy::all_fastest;
        case RouteType::all_initial:
            return FanoutPolicy::all_initial;
        case RouteType::failover:
            return FanoutPolicy::failover;
        case RouteType::miss_failover:
            return FanoutPolicy::miss_failover;
        default:
            return FanoutPolicy::warm_up;
    }
}

/// HashRoute's function by its mcrouter name (validate() allowed only these).
HashFunction hash_function(const std::string& name) {
    if (name == "WeightedCh3") return HashFunction::weighted_ch3;
    if (name == "Crc32") return HashFunction::crc32;
    if (name == "Md5") return HashFunction::md5;
    return HashFunction::ch3;
}

/// A key fraction as a bound on 32-bit key hashes.
std::uint64_t hash_bound(double fraction) {
    return static_cast<std::uint64_t>(std::llround(fraction * 4294967296.0));
}

}  // namespace

std::shared_ptr<RouteTree> RouteTree::build(const RouteConfig& config,
                                            std::vector<std::vector<ServerAddress>> pool_servers,
                                            const PoolFactory& make_pool) {
    std::shared_ptr<RouteTree> t(new RouteTree());
    for (std::size_t p = 0; p < config.pools.size(); ++p) {
        const std::size_t n = pool_servers[p].size();
        t->first_server_.push_back(t->servers_.size());
        for (std::size_t i = 0; i < n; ++i)
            t->servers_.push_back({p, i});
        t->pools_.push_back(make_pool(p, std::move(pool_servers[p])));
        t->pool_names_.push_back(config.pools[p].name);
    }
    t->root_ = &t->resolve(config.route, "route");
    return t;
}

RouteCounters& RouteTree::counters_for(const RouteSpec& spec, const std::string& path) {
    return counters_.emplace_back(spec.name.empty() ? path : spec.name, spec.type);
}

Route& RouteTree::no_match() {
    if (!no_match_) {
        RouteCounters& c = counters_.emplace_back("(no route matches)", RouteType::error);
        routes_.push_back(std::make_unique<ErrorRoute>(c, "no route matches the request"));
        no_match_ = routes_.back().get();
    }
    return *no_match_;
}

Route& RouteTree::resolve(const RouteSpec& spec, const std::string& path) {
    auto child_path = [&](std::size_t i) { return path + ".children[" + std::to_string(i) + "]"; };
    std::vector<Route*> children;
    std::unique_ptr<Route> made;
    switch (spec.type) {
        case RouteType::pool: {
            std::size_t p = 0;
            while (pool_names_[p] != spec.pool)
                ++p;  // validate() made sure it is there
            std::vector<PoolRoute::Shadow> shadows;
            for (std::size_t i = 0; i < spec.shadows.size(); ++i) {
                const ShadowSpec& s = spec.shadows[i];
                Route& target =
                    resolve(s.target.front(), path + ".shadows[" + std::to_string(i) + "].target");
                shadows.push_back(
                    {&target, hash_bound(s.key_fraction_begin), hash_bound(s.key_fraction_end)});
            }
            RouteCounters& c = counters_for(spec, path);
            made = std::make_unique<PoolRoute>(c, *this, *pools_[p], first_server_[p],
                                               std::move(shadows));
            break;
        }
        case RouteType::all_sync:
        case RouteType::all_async:
        case RouteType::all_majority:
        case RouteType::all_fastest:
        case RouteType::all_initial:
        case RouteType::failover:
        case RouteType::miss_failover:
        case RouteType::warm_up: {
            for (std::size_t i = 0; i < spec.children.size(); ++i) {
                std::string p = spec.type != RouteType::warm_up ? child_path(i)
                                : i == 0                        ? path + ".cold"
                                                                : path + ".warm";
                children.push_back(&resolve(spec.children[i], p));
            }
            FanoutPlan plan;
            plan.tree = this;
            plan.policy = policy_of(spec.type);
            plan.failover_exptime = spec.failover_exptime;
            plan.fill_exptime = spec.exptime;
            RouteCounters& c = counters_for(spec, path);
            made = std::make_unique<FanoutRoute>(c, plan, std::move(children));
            break;
        }
        case RouteType::prefix_selector:
        case RouteType::operation_selector: {
            const bool by_prefix = spec.type == RouteType::prefix_selector;
            std::vector<std::pair<std::string, Route*>> policies;
            for (std::size_t i = 0; i < spec.selectors.size(); ++i)
                policies.emplace_back(
                    spec.selectors[i],
                    &resolve(spec.children[i],
                             path + (by_prefix ? ".policies." : ".operation_policies.") +
                                 spec.selectors[i]));
            Route* fallback = spec.has_default
                                  ? &resolve(spec.children.back(),
                                             path + (by_prefix ? ".wildcard" : ".default_policy"))
                                  : nullptr;
            RouteCounters& c = counters_for(spec, path);
            if (by_prefix)
                made = std::make_unique<PrefixSelectorRoute>(c, std::move(policies), fallback,
                                                             no_match());
            else
                made = std::make_unique<OperationSelectorRoute>(c, policies, fallback, no_match());
            break;
        }
        case RouteType::hash: {
            for (std::size_t i = 0; i < spec.children.size(); ++i)
                children.push_back(&resolve(spec.children[i], child_path(i)));
            if (spec.salt.size() > 256)
                throw RouteConfigError(path + ".salt", "longer than 256 bytes");
            RouteCounters& c = counters_for(spec, path);
            made = std::make_unique<HashRoute>(
                c, std::move(children), hash_function(spec.hash_func), spec.salt, spec.weights);
            break;
        }
        case RouteType::null:
            made = std::make_unique<NullRoute>(counters_for(spec, path));
            break;
        case RouteType::error:
            made = std::make_unique<ErrorRoute>(counters_for(spec, path), spec.error_message);
            break;
    }
    routes_.push_back(std::move(made));
    return *routes_.back();
}

const std::string& RouteTree::server_name(std::size_t i) const noexcept {
    const ServerRef& s = servers_[i];
    return pools_[s.pool]->server_name(s.local);
}

std::vector<std::size_t> RouteTree::broadcast_servers() const {
    std::vector<std::size_t> out;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < servers_.size(); ++i)
        if (seen.insert(server_name(i)).second) out.push_back(i);
    return out;
}

void RouteTree::submit_to_server(std::size_t i, detail::Operation& op, std::uint32_t part,
                                 const detail::Request& r) const {
    if (i >= servers_.size()) {
        op.on_complete(part, detail::failure(make_error_code(errc::not_connected)));
        return;
    }
    const ServerRef& s = servers_[i];
    pools_[s.pool]->submit(s.local, op, part, r);
}

std::vector<RouteStats> RouteTree::stats() const {
    std::vector<RouteStats> out;
    for (const RouteCounters& c : counters_) {
        RouteStats s;
        s.name = c.name;
        s.type = c.type;
        s.requests = c.requests.load(std::memory_order_relaxed);
        s.failovers = c.failovers.load(std::memory_order_relaxed);
        s.shadow_requests = c.shadow_requests.load(std::memory_order_relaxed);
        s.shadow_errors = c.shadow_errors.load(std::memory_order_relaxed);
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace folsom::routing
