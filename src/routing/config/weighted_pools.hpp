// A pool with mcrouter's "weights" places keys by WeightedCh3 over its servers. folsom's
// HashRoute already places keys so among its children, so such a pool is run as a HashRoute
// over one-server pools: expand_weighted_pools rewrites a validated config that way before its
// tree is built.
#pragma once

#include "folsom/routes.hpp"

namespace folsom::routing {

/// `config` (validated) with every pool that has weights replaced by one pool per server
/// (named "<pool>[<i>]", with the pool's other options), and every pool route to it by a
/// HashRoute "WeightedCh3" over those, carrying the weights and the pool route's name.
/// Throws RouteConfigError when such a name is already a pool's.
RouteConfig expand_weighted_pools(const RouteConfig& config);

}  // namespace folsom::routing
