// The tables `folsom bench` prints after a run from the client's own counters: per server
// with --metrics (folsom::MetricsRegistry: one row per server, and a total row when there are
// several), and per route with --config (Client::route_stats()).
#pragma once

#include "folsom/metrics_registry.hpp"
#include "folsom/routes.hpp"

#include <string>
#include <vector>

namespace folsom::bench {

/// The table as text, one line per server plus a header (and a total line for 2+ servers).
/// Latency columns are in microseconds.
std::string format_metrics_table(const MetricsSnapshot& snapshot);

/// The route table: a header and one line per route (name, mcrouter's type name, requests,
/// failovers, shadow requests, shadow errors), in the order `stats` lists them. A tree of one
/// PoolRoute has no route counters (the client serves it as a plain pool): `stats` is empty
/// and the table says so in one line.
std::string format_route_table(const std::vector<RouteStats>& stats);

}  // namespace folsom::bench
