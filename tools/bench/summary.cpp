#include "bench/summary.hpp"

#include <fmt/format.h>

namespace folsom::bench {

void Summary::compute() {
    const double d = duration_s > 0 ? duration_s : 1e-9;
    ops_per_sec = static_cast<double>(counts.ops) / d;
    keys_per_sec = static_cast<double>(counts.keys) / d;
    cpu_us_per_op =
        counts.ops ? (cpu_user_s + cpu_sys_s) * 1e6 / static_cast<double>(counts.ops) : 0;
    if (floor) {
        const double fd = floor->elapsed_s > 0 ? floor->elapsed_s : 1e-9;
        floor_ops_per_sec = static_cast<double>(floor->ops) / fd;
        floor_cpu_us_per_op = floor->ops ? (floor->cpu_user_s + floor->cpu_sys_s) * 1e6 /
                                               static_cast<double>(floor->ops)
                                         : 0;
        floor_ratio = floor_cpu_us_per_op > 0 ? cpu_us_per_op / floor_cpu_us_per_op : 0;
    }
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
    fmt::print(out, "  cpu us/op      {:.3f}  (client user {:.2f} s + sys {:.2f} s)\n",
               s.cpu_us_per_op, s.cpu_user_s, s.cpu_sys_s);
    if (w.op == Op::mget)
        fmt::print(out, "  cpu us/key     {:.4f}\n",
                   s.cpu_us_per_op / static_cast<double>(w.batch ? w.batch : 1));
    const auto& l = s.latency_us;
    fmt::print(out,
               "  latency us     p50 {:.1f}  p90 {:.1f}  p99 {:.1f}  p99.9 {:.1f}  max {:.1f}"
               "  (mean {:.1f}{})\n",
               l.p50, l.p90, l.p99, l.p999, l.max, l.mean,
               s.latency_every > 1
                   ? fmt::format("; 1 request in {} timed, {} in all", s.latency_every,
                                 s.latency_ns ? s.latency_ns->count() : 0)
                   : "");
}

void print_floor(std::FILE* out, const Summary& s) {
    if (!s.floor) return;
    const auto& w = s.workload;
    const FloorResult& f = *s.floor;
    fmt::print(out,
               "\nfloor: the same {}s through a raw blocking socket to {}, no library (ascii "
               "get lines, {} request{} per send, one connection)\n",
               to_string(w.op), s.floor_server, w.depth, w.depth == 1 ? "" : "s");
    fmt::print(out, "  {} {} ops in {:.2f} s ({:.0f} ops/s, {} sends){}\n", to_string(w.op), f.ops,
               f.elapsed_s, s.floor_ops_per_sec, f.sends, f.interrupted ? " (interrupted)" : "");
    fmt::print(out, "                 {:>10} {:>10} {:>13}\n", "folsom", "floor", "folsom/floor");
    fmt::print(out, "  cpu us/op      {:>10.3f} {:>10.3f} {:>12.2f}x\n", s.cpu_us_per_op,
               s.floor_cpu_us_per_op, s.floor_ratio);
    if (w.op == Op::mget) {
        const auto b = static_cast<double>(w.batch ? w.batch : 1);
        fmt::print(out, "  cpu us/key     {:>10.4f} {:>10.4f}\n", s.cpu_us_per_op / b,
                   s.floor_cpu_us_per_op / b);
    }
    fmt::print(out, "  floor cpu      user {:.2f} s + sys {:.2f} s\n", f.cpu_user_s, f.cpu_sys_s);
}

}  // namespace folsom::bench
