// Ticks: the clock `folsom bench` reads once per request (a completion's time is its latency's
// end and the next request's start), so its cost is charged to every operation.
//
// steady_clock::now() goes through the vDSO, a noticeable share of a pipelined get's whole
// client cost. When the kernel keeps its own time with the TSC (its clocksource is
// "tsc": invariant, and synchronized across CPUs, or the kernel would not have chosen it),
// the bench reads the TSC itself (rdtsc, cheaper than the vDSO call) and converts a duration in
// ticks to nanoseconds with two multiplications by a factor calibrated against steady_clock.
// Anywhere else the ticks are steady_clock's nanoseconds.
#pragma once

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define FOLSOM_BENCH_TSC 1
#else
#define FOLSOM_BENCH_TSC 0
#endif

namespace folsom::bench {

class Ticks {
  public:
    /// steady_clock's nanoseconds.
    Ticks() = default;

    /// The TSC when the kernel's clocksource is "tsc", calibrated against steady_clock over
    /// `span` (the longer, the closer); steady_clock otherwise.
    static Ticks calibrated(std::chrono::milliseconds span = std::chrono::milliseconds(10)) {
        Ticks t;
        if (!kernel_uses_tsc()) return t;
        return measured(span);
    }

    /// The TSC, calibrated over `span`, whatever the kernel uses (for tests; x86 only, else
    /// steady_clock).
    static Ticks measured(std::chrono::milliseconds span) {
        Ticks t;
#if FOLSOM_BENCH_TSC
        using Steady = std::chrono::steady_clock;
        const auto s0 = Steady::now();
        const std::uint64_t c0 = __rdtsc();
        std::this_thread::sleep_for(span);
        const auto s1 = Steady::now();
        const std::uint64_t c1 = __rdtsc();
        const double ns = std::chrono::duration<double, std::nano>(s1 - s0).count();
        if (c1 <= c0 || ns <= 0) return t;  // a TSC that does not count: keep steady_clock
        const double ns_per_tick = ns / static_cast<double>(c1 - c0);
        if (ns_per_tick >= 1.0) return t;  // below 1 GHz: to_ns's factor would not fit
        t.tsc_ = true;
        t.ns_per_tick_q32_ = static_cast<std::uint64_t>(ns_per_tick * 4294967296.0 + 0.5);
        t.ticks_per_ns_ = 1.0 / ns_per_tick;
#else
        (void)span;
#endif
        return t;
    }

    /// Whether now() reads the TSC.
    bool tsc() const noexcept {
        return tsc_;
    }

    /// The time in ticks (only differences mean anything).
    std::uint64_t now() const noexcept {
#if FOLSOM_BENCH_TSC
        if (tsc_) return __rdtsc();
#endif
        return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              std::chrono::steady_clock::now().time_since_epoch())
                                              .count());
    }

    /// A duration of `ticks` ticks, in nanoseconds.
    std::uint64_t to_ns(std::uint64_t ticks) const noexcept {
        if (!tsc_) return ticks;
        // ticks * q / 2^32 without a 128-bit product: q < 2^32 (a TSC above 1 GHz), so
        // neither part overflows.
        return (ticks >> 32) * ns_per_tick_q32_ +
               (((ticks & 0xffffffffu) * ns_per_tick_q32_) >> 32);
    }

    /// A duration of `ns` nanoseconds, in ticks.
    std::uint64_t from_ns(double ns) const noexcept {
        if (ns <= 0) return 0;
        const double ticks = tsc_ ? ns * ticks_per_ns_ : ns;
        return ticks >= 1.8e19 ? ~std::uint64_t{0} : static_cast<std::uint64_t>(ticks);
    }

    /// Whether the kernel's clocksource is the TSC.
    static bool kernel_uses_tsc() {
#if FOLSOM_BENCH_TSC
        std::ifstream f("/sys/devices/system/clocksource/clocksource0/current_clocksource");
        std::string source;
        return f >> source && source == "tsc";
#else
        return false;
#endif
    }

  private:
    bool tsc_ = false;
    std::uint64_t ns_per_tick_q32_ = std::uint64_t{1} << 32;  // 32.32 fixed point
    double ticks_per_ns_ = 1.0;
};

}  // namespace folsom::bench
