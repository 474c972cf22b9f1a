#include "bench/metrics_table.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace folsom::bench {

std::string format_metrics_table(const MetricsSnapshot& snapshot) {
    std::size_t width = std::string_view("server").size();
    for (const auto& s : snapshot.servers)
        width = std::max(width, s.name.size());
    auto row = [width](std::string& out, const ServerSnapshot& s, std::string_view name) {
        out += fmt::format(
            "{:<{}} {:>10} {:>10} {:>10} {:>7} {:>9.1f} {:>9.1f} {:>12} {:>12} "
            "{:>10}\n",
            name, width, s.requests, s.hits, s.misses, s.errors, s.latency.p50 * 1e6,
            s.latency.p99 * 1e6, s.bytes_sent, s.bytes_received, s.reconnect_attempts);
    };
    std::string out = "\nper-server metrics (client side):\n";
    out += fmt::format("{:<{}} {:>10} {:>10} {:>10} {:>7} {:>9} {:>9} {:>12} {:>12} {:>10}\n",
                       "server", width, "requests", "hits", "misses", "errors", "p50 us", "p99 us",
                       "bytes out", "bytes in", "reconnects");
    for (const auto& s : snapshot.servers)
        row(out, s, s.name);
    if (snapshot.servers.size() > 1) row(out, snapshot.totals, "total");
    if (snapshot.unrouted.requests)
        out +=
            fmt::format("never sent (overloaded or no server): {}\n", snapshot.unrouted.requests);
    return out;
}

std::string format_route_table(const std::vector<RouteStats>& stats) {
    std::string out = "\nroutes (client side):\n";
    if (stats.empty())
        return out + "one PoolRoute: no route counters (--metrics has the per-server table)\n";
    std::size_t name_width = std::string_view("route").size();
    std::size_t type_width = std::string_view("type").size();
    for (const auto& s : stats) {
        name_width = std::max(name_width, s.name.size());
        type_width = std::max(type_width, route_type_name(s.type).size());
    }
    out += fmt::format("{:<{}} {:<{}} {:>10} {:>10} {:>15} {:>13}\n", "route", name_width, "type",
                       type_width, "requests", "failovers", "shadow requests", "shadow errors");
    for (const auto& s : stats)
        out += fmt::format("{:<{}} {:<{}} {:>10} {:>10} {:>15} {:>13}\n", s.name, name_width,
                           route_type_name(s.type), type_width, s.requests, s.failovers,
                           s.shadow_requests, s.shadow_errors);
    return out;
}

}  // namespace folsom::bench
