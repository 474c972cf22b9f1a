// ASCII decoder microbenchmark: the three cases of Folsom PR #247's JMH benchmark (one 64-byte
// hit, a batch of 16 hits, a miss), decoded from a reused buffer by a reused decoder, with no
// sockets and no scheduling.
//
// Every case has a baseline, scan/<case>, that only memchr-scans the same bytes for "\r\n":
// the least any line-based decoder could do. decode/<case> reports its time as a multiple of
// that scan (counter x_scan), so the figure means something across machines.
//
// Allocation is counted by replacing the global operator new/delete (alloc_counter.cpp): allocs/op
// is allocations per operation, bytes/op the bytes they requested (JMH's B/op). The decoder
// promises 0 for both.
#include "folsom/protocol/ascii_decoder.hpp"

#include "alloc_counter.hpp"  // replaces operator new/delete in this binary

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <string>
#include <string_view>
#include <vector>

namespace {

using folsom::protocol::ascii::Decoder;
using folsom::protocol::ascii::ParseResult;
using folsom::protocol::ascii::ParseState;
using folsom::protocol::ascii::Reply;
// Thread CPU time, not wall time, for the x_scan ratio: on a shared machine a preempted run
// would otherwise skew the ratio (Google Benchmark's own CPU column measures the same way).
struct Clock {
    using duration = std::chrono::nanoseconds;
    using time_point = std::chrono::time_point<Clock, duration>;
    static time_point now() noexcept {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return time_point(duration(std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec));
    }
};

// ---- the seed's three responses ------------------------------------------------------------

std::string hit(int i) {
    char key[16];
    std::snprintf(key, sizeof key, "key:%06d", i);
    std::string value(64, '\0');
    for (std::size_t j = 0; j < value.size(); ++j)
        value[j] = static_cast<char>('a' + (static_cast<std::size_t>(i) + j) % 26);
    return std::string("VALUE ") + key + " 0 64\r\n" + value + "\r\n";
}

enum class Case { single_hit, batch16, miss };

const std::string& response(Case c) {
    static const std::string single = hit(1) + "END\r\n";
    static const std::string batch = [] {
        std::string s;
        for (int i = 1; i <= 16; ++i)
            s += hit(i);
        return s + "END\r\n";
    }();
    static const std::string miss = "END\r\n";
    switch (c) {
        case Case::single_hit:
            return single;
        case Case::batch16:
            return batch;
        case Case::miss:
            return miss;
    }
    return miss;
}

std::size_t expected_replies(Case c) {
    switch (c) {
        case Case::single_hit:
            return 2;
        case Case::batch16:
            return 17;
        case Case::miss:
            return 1;
    }
    return 0;
}

// ---- the two loops -------------------------------------------------------------------------

// Baseline: find every "\r\n" in the response with memchr, nothing else.
inline std::size_t scan_once(const char* data, std::size_t size) {
    const char* p = data;
    const char* const end = data + size;
    std::size_t lines = 0;
    while (p < end) {
        const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
        if (nl == nullptr) break;
        const char* q = static_cast<const char*>(nl);
        lines += (q > data && q[-1] == '\r');
        p = q + 1;
    }
    return lines;
}

// Decodes the whole response, one reply per call, as a connection's read loop does.
inline std::size_t decode_once(Decoder& decoder, Reply& reply, const char* data, std::size_t size) {
    std::string_view in(data, size);
    std::size_t replies = 0;
    while (!in.empty()) {
        const ParseResult r = decoder.parse(in, reply);
        if (r.state != ParseState::complete) [[unlikely]]
            return 0;
        benchmark::DoNotOptimize(reply);
        in.remove_prefix(r.consumed);
        ++replies;
    }
    return replies;
}

// Scan time per operation for `c`, measured once per process outside any timed region
// (median of 9 runs of ~5 ms), so decode/<case> can report its ratio whatever the filter.
double scan_ns_per_op(Case c) {
    static double cache[3] = {0, 0, 0};
    double& ns = cache[static_cast<int>(c)];
    if (ns != 0) return ns;
    const std::string& bytes = response(c);
    std::vector<double> runs;
    std::size_t iters = 1024;
    while (runs.size() < 9) {
        const auto t0 = Clock::now();
        for (std::size_t i = 0; i < iters; ++i) {
            const char* data = bytes.data();
            benchmark::DoNotOptimize(data);
            std::size_t lines = scan_once(data, bytes.size());
            benchmark::DoNotOptimize(lines);
        }
        const double elapsed = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
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

void report_allocations(benchmark::State& state, std::size_t allocs, std::size_t bytes) {
    state.counters["allocs/op"] =
        benchmark::Counter(static_cast<double>(allocs), benchmark::Counter::kAvgIterations);
    state.counters["bytes/op"] =
        benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kAvgIterations);
}

void BM_scan(benchmark::State& state, Case c) {
    const std::string& bytes = response(c);
    const std::size_t allocs0 = folsom::bench::allocations(),
                      bytes0 = folsom::bench::allocated_bytes();
    for (auto _ : state) {
        const char* data = bytes.data();
        benchmark::DoNotOptimize(data);  // opaque each time: the scan cannot be hoisted
        std::size_t lines = scan_once(data, bytes.size());
        benchmark::DoNotOptimize(lines);
    }
    report_allocations(state, folsom::bench::allocations() - allocs0,
                       folsom::bench::allocated_bytes() - bytes0);
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes.size()));
}

void BM_decode(benchmark::State& state, Case c) {
    const std::string& bytes = response(c);
    const double scan_ns = scan_ns_per_op(c);
    Decoder decoder;
    Reply reply;
    if (decode_once(decoder, reply, bytes.data(), bytes.size()) != expected_replies(c)) {
        state.SkipWithError("the response did not decode as expected");
        return;
    }
    const std::size_t allocs0 = folsom::bench::allocations(),
                      bytes0 = folsom::bench::allocated_bytes();
    const auto t0 = Clock::now();
    for (auto _ : state) {
        const char* data = bytes.data();
        benchmark::DoNotOptimize(data);
        std::size_t replies = decode_once(decoder, reply, data, bytes.size());
        benchmark::DoNotOptimize(replies);
    }
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() /
                      static_cast<double>(std::max<std::int64_t>(state.iterations(), 1));
    report_allocations(state, folsom::bench::allocations() - allocs0,
                       folsom::bench::allocated_bytes() - bytes0);
    state.counters["x_scan"] = ns / scan_ns;  // decode time as a multiple of the bare scan
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes.size()));
}

BENCHMARK_CAPTURE(BM_scan, single_hit, Case::single_hit);
BENCHMARK_CAPTURE(BM_decode, single_hit, Case::single_hit);
BENCHMARK_CAPTURE(BM_scan, batch16, Case::batch16);
BENCHMARK_CAPTURE(BM_decode, batch16, Case::batch16);
BENCHMARK_CAPTURE(BM_scan, miss, Case::miss);
BENCHMARK_CAPTURE(BM_decode, miss, Case::miss);

}  // namespace

BENCHMARK_MAIN();
