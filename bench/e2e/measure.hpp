// How the end-to-end benchmark measures one case: a warmup run that also calibrates the
// operation count, then several timed repetitions; the median of each figure is reported.
//
// Client CPU is getrusage(RUSAGE_SELF) user + system time: every thread of this process (the
// client's I/O runs on the calling thread; nothing else runs meanwhile) and none of memcached's,
// which is another process. Throughput is operations per wall-clock second.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace folsom::bench {

struct Plan {
    double seconds_per_rep = 0.3;  ///< calibrated operations per repetition aim at this wall time
    int reps = 5;
    std::uint64_t calibration_ops = 2000;  ///< warmup size; the calibration is timed on it
    std::uint64_t min_ops = 1000;
    std::uint64_t max_ops = 5'000'000;
    std::uint64_t fixed_ops = 0;  ///< when set, no calibration: every repetition does this many
};

struct Measurement {
    double cpu_us_per_op = 0;  ///< median over repetitions
    double sys_share = 0;      ///< median share of that CPU spent in the kernel (0..1)
    double ops_per_s = 0;      ///< median
    double allocs_per_op = 0;  ///< median; operator new calls only
    /// Medians of the client's context switches per operation (getrusage): `sleeps` are
    /// voluntary (it blocked: in recv, poll, epoll_wait), `preemptions` involuntary (another
    /// task -- memcached, on the same CPU -- was run in its place, e.g. when woken by a send).
    /// They tell how a round trip went: a blocking client sleeps once per request; an
    /// asynchronous one either is preempted at its send (and then finds the reply with a
    /// direct read) or sleeps in epoll_wait (one more system call and an event loop turn).
    double sleeps_per_op = 0;
    double preemptions_per_op = 0;
    std::uint64_t ops = 0;  ///< per repetition
    int reps = 0;
};

/// A case body: performs about `ops` operations and returns how many it did. Throws on any
/// failed operation (a benchmark of failures measures nothing).
using CaseBody = std::function<std::uint64_t(std::uint64_t ops)>;

Measurement measure(const Plan& plan, const CaseBody& body);

}  // namespace folsom::bench
