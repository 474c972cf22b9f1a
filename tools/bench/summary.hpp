// Summary: the result of one `folsom bench` run, as printed and as written to JSON and HTML.
// Field names match the JSON keys, so the three reports say the same thing the same way.
#pragma once

#include "folsom/routes.hpp"

#include "bench/floor.hpp"
#include "bench/histogram.hpp"
#include "bench/workload.hpp"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace folsom::bench {

struct LatencySummary {  // microseconds
    double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, mean = 0;
};

struct Summary {
    Workload workload;
    std::string protocol;
    std::vector<std::string> servers;
    std::vector<std::string> server_versions;
    bool embedded_server = false;
    std::string config;              ///< --config: the route configuration file ("" without)
    std::vector<RouteStats> routes;  ///< with --config: what each route did, measured phase
    int cpu = -1;                    ///< --cpu: the CPU the process was pinned to, or -1

    std::uint64_t preload_sets = 0;  ///< sets sent by --preload (not measured)
    double duration_s = 0;           ///< measured phase: first request to last completion
    Counts counts;
    double ops_per_sec = 0;
    double keys_per_sec = 0;
    double cpu_us_per_op = 0;  ///< (user + sys CPU of this process) / ops
    double cpu_user_s = 0;
    double cpu_sys_s = 0;
    bool interrupted = false;
    LatencySummary latency_us;
    std::uint32_t latency_every = 1;              ///< one request in this many per slot was timed
    std::shared_ptr<const Histogram> latency_ns;  ///< the full distribution (for the HTML plot)

    /// --floor: the same workload through a raw socket, and what it cost.
    std::optional<FloorResult> floor;
    std::string floor_server;  ///< the server the floor's socket talked to
    double floor_ops_per_sec = 0;
    double floor_cpu_us_per_op = 0;  ///< (user + sys CPU of the floor's loop) / its ops
    double floor_ratio = 0;          ///< cpu_us_per_op / floor_cpu_us_per_op

    /// Derives the rates and percentiles from the raw counts and the histogram.
    void compute();
};

/// The human-readable summary (what `folsom bench` prints at the end).
void print_summary(std::FILE* out, const Summary& s);

/// With --floor: the floor's run and its client CPU next to folsom's, with their ratio.
void print_floor(std::FILE* out, const Summary& s);

}  // namespace folsom::bench
