#include "routing/config/weighted_pools.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace folsom::routing {
namespace {

/// The name of server i's own pool.
std::string server_pool_name(const std::string& pool, std::size_t i) {
    return pool + "[" + std::to_string(i) + "]";
}

void rewrite(RouteSpec& r, const std::map<std::string, const PoolSpec*>& weighted) {
    for (auto& s : r.shadows)
        for (auto& t : s.target)
            rewrite(t, weighted);
    for (auto& c : r.children)
        rewrite(c, weighted);
    if (r.type != RouteType::pool) return;
    const auto it = weighted.find(r.pool);
    if (it == weighted.end()) return;
    const PoolSpec& pool = *it->second;
    RouteSpec hash;
    hash.type = RouteType::hash;
    hash.name = r.name;  // the metrics label stays the pool route's
    hash.hash_func = "WeightedCh3";
    hash.weights = pool.weights;
    for (std::size_t i = 0; i < pool.servers.size(); ++i) {
        RouteSpec child;
        child.type = RouteType::pool;
        child.pool = server_pool_name(pool.name, i);
        if (!r.name.empty()) child.name = r.name + ".servers[" + std::to_string(i) + "]";
        hash.children.push_back(std::move(child));
    }
    r = std::move(hash);
}

}  // namespace

RouteConfig expand_weighted_pools(const RouteConfig& config) {
    std::map<std::string, const PoolSpec*> weighted;
    std::set<std::string> names;
    for (const PoolSpec& p : config.pools) {
        names.insert(p.name);
        if (!p.weights.empty()) weighted.emplace(p.name, &p);
    }
    if (weighted.empty()) return config;
    RouteConfig out;
    for (const PoolSpec& p : config.pools) {
        if (p.weights.empty()) {
            out.pools.push_back(p);
            continue;
        }
        for (std::size_t i = 0; i < p.servers.size(); ++i) {
            PoolSpec one = p;
            one.name = server_pool_name(p.name, i);
            if (names.count(one.name) != 0)
                throw RouteConfigError("pools." + one.name,
                                       "this name is taken by server " + std::to_string(i) +
                                           " of weighted pool '" + p.name + "'");
            one.servers = {p.servers[i]};
            one.weights.clear();
            out.pools.push_back(std::move(one));
        }
    }
    out.route = config.route;
    rewrite(out.route, weighted);
    return out;
}

}  // namespace folsom::routing
