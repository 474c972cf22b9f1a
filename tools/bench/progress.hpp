// Progress: the once-a-second line of a running bench — throughput over the last second and
// the p99 latency so far. On a terminal the line is redrawn in place (\r); otherwise (a pipe,
// a CI log) each tick is its own plain line, so logs stay readable.
#pragma once

#include "bench/workload.hpp"

#include <cstdint>
#include <cstdio>

namespace folsom::bench {

class Progress {
  public:
    /// `redraw`: true when `out` is a terminal.
    Progress(std::FILE* out, bool redraw) : out_(out), redraw_(redraw) {}

    void tick(const Tick& t);
    /// Ends a redrawn line, so what follows starts on a fresh one.
    void finish();

  private:
    std::FILE* out_;
    bool redraw_;
    bool drawn_ = false;
    double last_s_ = 0;
    std::uint64_t last_ops_ = 0;
};

}  // namespace folsom::bench
