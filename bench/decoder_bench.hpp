// The decoder microbenchmark's shared machinery: the three cases of Folsom PR #247's JMH
// benchmark (one 64-byte hit, a batch of 16 hits, a miss), and the two timed loops every
// protocol runs over them — a baseline that only finds where replies end, and the decoder.
//
// A protocol plugs in as a traits struct:
//   using Decoder = ...; using Reply = ...;     its decoder and reply types
//   static const std::string& response(Case);   the bytes a server sends for the case, as the
//                                               library asks for it over that protocol
//   static std::size_t replies(Case);           how many replies those bytes hold
//   static std::size_t baseline(const char*, std::size_t);   the least any decoder of the
//                                               protocol must do: find each reply's end
//
// decode/<case> reports its time as a multiple of the baseline (counter x_base, measured on
// the same machine in the same process), so the figure means something across machines; and
// the allocations it made per operation (allocs/op, bytes/op) and per reply (allocs/reply).
// The decoders promise 0: a run that allocates is reported as an error.
#pragma once

#include "alloc_counter.hpp"  // the binary's operator new/delete count allocations

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

namespace folsom::bench {

enum class Case { single_hit, batch16, miss };

/// "key:000001" ... : the seed's keys.
inline std::string seed_key(int i) {
    char key[16];
    std::snprintf(key, sizeof key, "key:%06d", i);
    return key;
}

/// The 64-byte value of key i.
inline std::string seed_value(int i) {
    std::string value(64, '\0');
    for (std::size_t j = 0; j < value.size(); ++j)
        value[j] = static_cast<char>('a' + (static_cast<std::size_t>(i) + j) % 26);
    return value;
}

// Thread CPU time, not wall time, for the x_base ratio: on a shared machine a preempted run
// would otherwise skew the ratio (Google Benchmark's own CPU column measures the same way).
struct ThreadClock {
    using duration = std::chrono::nanoseconds;
    using time_point = std::chrono::time_point<ThreadClock, duration>;
    static time_point now() noexcept {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return time_point(duration(std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec));
    }
};

/// Decodes the whole response, one reply per call, as a connection's read loop does. The
/// number of replies, or 0 when one did not decode completely.
template <class P>
inline std::size_t decode_once(typename P::Decoder& decoder, typename P::Reply& reply,
                               const char* data, std::size_t size) {
    std::string_view in(data, size);
    std::size_t replies = 0;
    while (!in.empty()) {
        const auto r = decoder.parse(in, reply);
        if (r.state != decltype(r.state)::complete) [[unlikely]]
            return 0;
        benchmark::DoNotOptimize(reply);
        in.remove_prefix(r.consumed);
        ++replies;
    }
    return replies;
}

/// Baseline time per operation of case `c`, measured once per process outside any timed
/// region (median of 9 runs of ~5 ms), so decode/<case> can report its ratio whatever the
/// filter.
template <class P>
double baseline_ns_per_op(Case c) {
    static double cache[3] = {0, 0, 0};
    double& ns = cache[static_cast<int>(c)];
    if (ns != 0) return ns;
    const std::string& bytes = P::response(c);
    std::vector<double> runs;
    std::size_t iters = 1024;
    while (runs.size() < 9) {
        const auto t0 = ThreadClock::now();
        for (std::size_t i = 0; i < iters; ++i) {
            const char* data = bytes.data();
            benchmark::DoNotOptimize(data);
            std::size_t ends = P::baseline(data, bytes.size());
            benchmark::DoNotOptimize(ends);
        }
        const double elapsed =
            std::chrono::duration<double, std::nano>(ThreadClock::now() - t0).count();
        if (elapsed < 5e6) {
            iters *= 2;
            continue;
        }
        runs.push_back(elapsed / static_cast<double>(iters));
    }
    std::nth_element(runs.begin(), runs.begin() + 4, runs.end());
    ns = runs[4];
    return ns;
}

inline void report_allocations(benchmark::State& state, std::uint64_t allocs, std::uint64_t bytes,
                               std::size_t replies_per_op) {
    state.counters["allocs/op"] =
        benchmark::Counter(static_cast<double>(allocs), benchmark::Counter::kAvgIterations);
    state.counters["bytes/op"] =
        benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kAvgIterations);
    state.counters["allocs/reply"] =
        static_cast<double>(allocs) /
        (static_cast<double>(std::max<std::int64_t>(state.iterations(), 1)) *
         static_cast<double>(replies_per_op));
}

/// The baseline loop alone (its own row, for reference).
template <class P>
void bm_baseline(benchmark::State& state, Case c) {
    const std::string& bytes = P::response(c);
    const std::uint64_t allocs0 = allocations(), bytes0 = allocated_bytes();
    for (auto _ : state) {
        const char* data = bytes.data();
        benchmark::DoNotOptimize(data);  // opaque each time: the loop cannot be hoisted
        std::size_t ends = P::baseline(data, bytes.size());
        benchmark::DoNotOptimize(ends);
    }
    report_allocations(state, allocations() - allocs0, allocated_bytes() - bytes0, P::replies(c));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes.size()));
}

/// The decoder over the case's bytes, with a reused decoder, reply and input buffer.
template <class P>
void bm_decode(benchmark::State& state, Case c) {
    const std::string& bytes = P::response(c);
    const double base_ns = baseline_ns_per_op<P>(c);
    typename P::Decoder decoder;
    typename P::Reply reply;
    if (decode_once<P>(decoder, reply, bytes.data(), bytes.size()) != P::replies(c) ||
        P::baseline(bytes.data(), bytes.size()) != P::replies(c)) {
        state.SkipWithError("the response did not decode as expected");
        return;
    }
    const std::uint64_t allocs0 = allocations(), bytes0 = allocated_bytes();
    const auto t0 = ThreadClock::now();
    for (auto _ : state) {
        const char* data = bytes.data();
        benchmark::DoNotOptimize(data);
        std::size_t replies = decode_once<P>(decoder, reply, data, bytes.size());
        benchmark::DoNotOptimize(replies);
    }
    const double ns = std::chrono::duration<double, std::nano>(ThreadClock::now() - t0).count() /
                      static_cast<double>(std::max<std::int64_t>(state.iterations(), 1));
    const std::uint64_t allocs = allocations() - allocs0;
    report_allocations(state, allocs, allocated_bytes() - bytes0, P::replies(c));
    state.counters["x_base"] = ns / base_ns;  // decode time as a multiple of the baseline
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes.size()));
    if (allocs != 0) state.SkipWithError("the decoder allocated: it promises 0 per reply");
}

/// Registers <name>/baseline/<case> and <name>/decode/<case> for the three cases.
template <class P>
bool register_decoder_benchmarks(const char* name, const char* baseline_name) {
    const std::pair<const char*, Case> cases[] = {
        {"single_hit", Case::single_hit}, {"batch16", Case::batch16}, {"miss", Case::miss}};
    for (const auto& [case_name, c] : cases) {
        const Case k = c;
        benchmark::RegisterBenchmark(
            (std::string(name) + "/" + baseline_name + "/" + case_name).c_str(),
            [k](benchmark::State& s) { bm_baseline<P>(s, k); });
        benchmark::RegisterBenchmark((std::string(name) + "/decode/" + case_name).c_str(),
                                     [k](benchmark::State& s) { bm_decode<P>(s, k); });
    }
    return true;
}

}  // namespace folsom::bench
