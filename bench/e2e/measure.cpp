#include "e2e/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <sys/resource.h>
#include <vector>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define FOLSOM_BENCH_TOGGLE_COLLECT() CALLGRIND_TOGGLE_COLLECT
#else
#define FOLSOM_BENCH_TOGGLE_COLLECT() \
    do {                              \
    } while (0)
#endif

#include "alloc_counter.hpp"

namespace folsom::bench {
namespace {

struct CpuSeconds {
    double user = 0;
    double sys = 0;
    double sleeps = 0;       // voluntary context switches
    double preemptions = 0;  // involuntary ones
};

CpuSeconds cpu_seconds() {
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    auto s = [](const timeval& tv) {
        return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
    };
    return {s(ru.ru_utime), s(ru.ru_stime), static_cast<double>(ru.ru_nvcsw),
            static_cast<double>(ru.ru_nivcsw)};
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

Measurement measure(const Plan& plan, const CaseBody& body) {
    using Clock = std::chrono::steady_clock;
    std::uint64_t ops = plan.fixed_ops;
    {
        // Warmup: connections, server-side slabs, the client's recycled memory, caches.
        const auto t0 = Clock::now();
        const std::uint64_t done = body(plan.calibration_ops);
        const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
        if (ops == 0) {
            const double per_op = wall / static_cast<double>(std::max<std::uint64_t>(done, 1));
            const double want = plan.seconds_per_rep / std::max(per_op, 1e-9);
            ops = static_cast<std::uint64_t>(std::clamp(want, static_cast<double>(plan.min_ops),
                                                        static_cast<double>(plan.max_ops)));
        }
    }
    std::vector<double> cpu, sys_share, rate, allocs, sleeps, preemptions;
    Measurement m;
    for (int r = 0; r < plan.reps; ++r) {
        const std::uint64_t a0 = allocations();
        const CpuSeconds c0 = cpu_seconds();
        const auto t0 = Clock::now();
        FOLSOM_BENCH_TOGGLE_COLLECT();
        const std::uint64_t done = body(ops);
        FOLSOM_BENCH_TOGGLE_COLLECT();
        const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
        const CpuSeconds c1 = cpu_seconds();
        const double sys = c1.sys - c0.sys;
        const double c = (c1.user - c0.user) + sys;
        const std::uint64_t a = allocations() - a0;
        if (done == 0) throw std::runtime_error("a repetition did no operation");
        const auto n = static_cast<double>(done);
        cpu.push_back(c / n * 1e6);
        sys_share.push_back(c > 0 ? sys / c : 0);
        rate.push_back(n / wall);
        allocs.push_back(static_cast<double>(a) / n);
        sleeps.push_back((c1.sleeps - c0.sleeps) / n);
        preemptions.push_back((c1.preemptions - c0.preemptions) / n);
        m.ops = done;
    }
    m.cpu_us_per_op = median(cpu);
    m.sys_share = median(sys_share);
    m.ops_per_s = median(rate);
    m.allocs_per_op = median(allocs);
    m.sleeps_per_op = median(sleeps);
    m.preemptions_per_op = median(preemptions);
    m.reps = plan.reps;
    return m;
}

}  // namespace folsom::bench
