#include "bench/summary.hpp"

#include <fmt/format.h>

namespace folsom::bench {

void Summary::compute() {
    const double d = duration_s > 0 ? duration_s : 1e-9;
    ops_per_sec = static_cast<double>(counts.ops) / d;
    keys_per_sec = static_cast<double>(counts.keys) / d;
    cpu_us_per_op =
        counts.ops ? (cpu_user_s + cpu_sys_s) * 1e6 / static_cast<double>(counts.ops) : 0;
    if (latency_ns) {
        auto us = [&](double p) {
            return static_cast<double>(latency_ns->value_at_percentile(p)) / 1000.0;
        };
        latency_us.p50 = us(50);
        latency_us.p90 = us(90);
        latency_us.p99 = us(99);
        latency_us.p999 = us(99.9);
        latency_us.max = static_cast<double>(latency_ns->max()) / 1000.0;
        latency_us.mean = latency_ns->mean() / 1000.0;
    }
}

void print_summary(std::FILE* out, const Summary& s) {
    const auto& w = s.workload;
    fmt::print(out, "\n{} {} ops in {:.2f} s{}\n", to_string(w.op), s.counts.ops, s.duration_s,
               s.interrupted ? " (interrupted)" : "");
    fmt::print(out, "  ops/s          {:.0f}\n", s.ops_per_sec);
    fmt::print(out, "  keys/s         {:.0f}\n", s.keys_per_sec);
    fmt::print(out, "  hits           {}\n", s.counts.hits);
    fmt::print(out, "  misses         {}\n", s.counts.misses);
    fmt::print(out, "  sets           {}\n", s.counts.sets);
    fmt::print(out, "  errors         {}\n", s.counts.errors);
    for (const auto& [msg, n] : s.counts.errors_by_message)
        fmt::print(out, "    {:>10}  {}\n", n, msg);
    fmt::print(out, "  cpu us/op      {:.2f}  (client user {:.2f} s + sys {:.2f} s)\n",
               s.cpu_us_per_op, s.cpu_user_s, s.cpu_sys_s);
    const auto& l = s.latency_us;
    fmt::print(out,
               "  latency us     p50 {:.1f}  p90 {:.1f}  p99 {:.1f}  p99.9 {:.1f}  max {:.1f}"
               "  (mean {:.1f})\n",
               l.p50, l.p90, l.p99, l.p999, l.max, l.mean);
}

}  // namespace folsom::bench
