#include "bench/progress.hpp"

#include <fmt/format.h>

namespace folsom::bench {

void Progress::tick(const Tick& t) {
    const double dt = t.elapsed_s - last_s_;
    const double rate = dt > 0 ? static_cast<double>(t.ops - last_ops_) / dt : 0.0;
    last_s_ = t.elapsed_s;
    last_ops_ = t.ops;
    const double p99_us =
        t.latency_ns ? static_cast<double>(t.latency_ns->value_at_percentile(99)) / 1000.0 : 0.0;
    const std::string line = fmt::format("{:6.1f} s  {:>10.0f} ops/s  p99 {:8.1f} us  errors {}",
                                         t.elapsed_s, rate, p99_us, t.errors);
    if (redraw_) {
        // Pad so a shorter line fully covers the previous one.
        fmt::print(out_, "\r{:<70}", line);
        drawn_ = true;
    } else {
        fmt::print(out_, "{}\n", line);
    }
    std::fflush(out_);
}

void Progress::finish() {
    if (redraw_ && drawn_) fmt::print(out_, "\n");
    drawn_ = false;
    std::fflush(out_);
}

}  // namespace folsom::bench
