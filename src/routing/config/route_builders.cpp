// The folsom::routes builders: route trees written in code rather than JSON. They only fill
// in a RouteSpec; RouteConfig::validate (run by Client::connect) judges the result, so a tree
// built here and one read from JSON are held to the same rules. Names stay empty (the runtime
// labels an unnamed route with its path) unless routes::named gives one.
#include "folsom/routes.hpp"

#include <utility>

namespace folsom::routes {
namespace {

RouteSpec with_children(RouteType type, std::vector<RouteSpec> children) {
    RouteSpec r;
    r.type = type;
    r.children = std::move(children);
    return r;
}

RouteSpec selector(RouteType type, std::vector<std::pair<std::string, RouteSpec>> policies,
                   std::optional<RouteSpec> fallback) {
    RouteSpec r;
    r.type = type;
    r.selectors.reserve(policies.size());
    r.children.reserve(policies.size() + (fallback ? 1 : 0));
    for (auto& [selector_name, route] : policies) {
        r.selectors.push_back(std::move(selector_name));
        r.children.push_back(std::move(route));
    }
    if (fallback) {
        r.children.push_back(std::move(*fallback));
        r.has_default = true;
    }
    return r;
}

}  // namespace

RouteSpec pool(std::string name, std::vector<ShadowSpec> shadows, std::string hash) {
    RouteSpec r;
    r.type = RouteType::pool;
    r.pool = std::move(name);
    r.shadows = std::move(shadows);
    r.hash_func = std::move(hash);
    return r;
}

ShadowSpec shadow(RouteSpec target, double key_fraction_begin, double key_fraction_end) {
    ShadowSpec s;
    s.target.push_back(std::move(target));
    s.key_fraction_begin = key_fraction_begin;
    s.key_fraction_end = key_fraction_end;
    return s;
}

RouteSpec all_sync(std::vector<RouteSpec> children) {
    return with_children(RouteType::all_sync, std::move(children));
}

RouteSpec all_async(std::vector<RouteSpec> children) {
    return with_children(RouteType::all_async, std::move(children));
}

RouteSpec all_majority(std::vector<RouteSpec> children) {
    return with_children(RouteType::all_majority, std::move(children));
}

RouteSpec all_fastest(std::vector<RouteSpec> children) {
    return with_children(RouteType::all_fastest, std::move(children));
}

RouteSpec all_initial(std::vector<RouteSpec> children) {
    return with_children(RouteType::all_initial, std::move(children));
}

RouteSpec failover(std::vector<RouteSpec> children, std::optional<std::uint32_t> failover_exptime) {
    auto r = with_children(RouteType::failover, std::move(children));
    r.failover_exptime = failover_exptime;
    return r;
}

RouteSpec miss_failover(std::vector<RouteSpec> children,
                        std::optional<std::uint32_t> failover_exptime) {
    auto r = with_children(RouteType::miss_failover, std::move(children));
    r.failover_exptime = failover_exptime;
    return r;
}

RouteSpec warm_up(RouteSpec cold, RouteSpec warm, std::uint32_t exptime) {
    std::vector<RouteSpec> children;
    children.reserve(2);
    children.push_back(std::move(cold));
    children.push_back(std::move(warm));
    auto r = with_children(RouteType::warm_up, std::move(children));
    r.exptime = exptime;
    return r;
}

RouteSpec prefix_selector(std::vector<std::pair<std::string, RouteSpec>> policies,
                          std::optional<RouteSpec> wildcard) {
    return selector(RouteType::prefix_selector, std::move(policies), std::move(wildcard));
}

RouteSpec operation_selector(std::vector<std::pair<std::string, RouteSpec>> policies,
                             std::optional<RouteSpec> default_policy) {
    return selector(RouteType::operation_selector, std::move(policies), std::move(default_policy));
}

RouteSpec hash(std::vector<RouteSpec> children, std::string hash_func, std::string salt,
               std::vector<double> weights) {
    auto r = with_children(RouteType::hash, std::move(children));
    r.hash_func = std::move(hash_func);
    r.salt = std::move(salt);
    r.weights = std::move(weights);
    return r;
}

RouteSpec null() {
    RouteSpec r;
    r.type = RouteType::null;
    return r;
}

RouteSpec error(std::string message) {
    RouteSpec r;
    r.type = RouteType::error;
    r.error_message = std::move(message);
    return r;
}

RouteSpec named(std::string name, RouteSpec route) {
    route.name = std::move(name);
    return route;
}

}  // namespace folsom::routes
