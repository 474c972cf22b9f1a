// bench::Histogram (tools/bench): bucket geometry, two significant digits everywhere, exact
// percentiles of known distributions, merging, clamping, and no allocation on record. And the
// bench's other per-request pieces: key texts written without a format string (KeyText,
// KeyTable, pick_key) and the clock it reads per timed request (Ticks).
#include "bench/histogram.hpp"
#include "bench/keys.hpp"
#include "bench/ticks.hpp"
#include "support/counting_operator_new.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <thread>

// record() must never allocate: support/counting_operator_new.hpp counts every operator new.

namespace {

using folsom::bench::Histogram;

TEST(BenchHistogram, ExactBelowTheLinearLimit) {
    for (std::uint64_t v = 0; v < Histogram::linear_limit; ++v) {
        const auto i = Histogram::bucket_index(v);
        EXPECT_EQ(Histogram::bucket_lowest(i), v);
        EXPECT_EQ(Histogram::bucket_highest(i), v);
    }
}

TEST(BenchHistogram, BucketsTileTheRangeWithTwoSignificantDigits) {
    for (std::size_t i = 0; i < Histogram::bucket_count; ++i) {
        const std::uint64_t lo = Histogram::bucket_lowest(i);
        const std::uint64_t hi = Histogram::bucket_highest(i);
        ASSERT_LE(lo, hi);
        ASSERT_EQ(Histogram::bucket_index(lo), i);
        ASSERT_EQ(Histogram::bucket_index(hi), i);
        if (i + 1 < Histogram::bucket_count) {
            ASSERT_EQ(Histogram::bucket_lowest(i + 1), hi + 1);
        }
        // Exact below the linear limit; above, a bucket is at most 1/128 of its values wide:
        // < 1% error, two significant digits.
        if (i < Histogram::linear_limit) {
            ASSERT_EQ(lo, hi);
            continue;
        }
        ASSERT_LE(static_cast<double>(hi - lo + 1) / static_cast<double>(lo), 1.0 / 128 + 1e-12)
            << "bucket " << i;
    }
    EXPECT_EQ(Histogram::bucket_highest(Histogram::bucket_count - 1), Histogram::max_trackable);
    // Microseconds to minutes, in nanoseconds, fit with room to spare.
    EXPECT_GE(Histogram::max_trackable, std::uint64_t{3600} * 1'000'000'000);
}

TEST(BenchHistogram, EmptyReportsZeros) {
    auto h = std::make_unique<Histogram>();
    EXPECT_EQ(h->count(), 0u);
    EXPECT_EQ(h->min(), 0u);
    EXPECT_EQ(h->max(), 0u);
    EXPECT_EQ(h->value_at_percentile(50), 0u);
    EXPECT_EQ(h->mean(), 0.0);
    EXPECT_TRUE(h->percentile_curve().empty());
}

TEST(BenchHistogram, PercentilesOfAUniformDistribution) {
    auto h = std::make_unique<Histogram>();
    for (std::uint64_t v = 1; v <= 100000; ++v)
        h->record(v);
    EXPECT_EQ(h->count(), 100000u);
    EXPECT_EQ(h->min(), 1u);
    EXPECT_EQ(h->max(), 100000u);
    EXPECT_DOUBLE_EQ(h->mean(), 50000.5);
    for (double p : {1.0, 10.0, 50.0, 90.0, 99.0, 99.9}) {
        const double exact = p * 1000;
        const double got = static_cast<double>(h->value_at_percentile(p));
        EXPECT_GE(got, exact) << p;  // the highest equivalent value: never under-reports
        EXPECT_LE(got, exact * (1 + 1.0 / 128)) << p;
    }
    EXPECT_EQ(h->value_at_percentile(100), 100000u);
    EXPECT_EQ(h->value_at_percentile(0), 1u);
}

TEST(BenchHistogram, SmallValuesAreExact) {
    auto h = std::make_unique<Histogram>();
    for (int i = 0; i < 90; ++i)
        h->record(10);
    for (int i = 0; i < 9; ++i)
        h->record(20);
    h->record(200);
    EXPECT_EQ(h->value_at_percentile(50), 10u);
    EXPECT_EQ(h->value_at_percentile(90), 10u);
    EXPECT_EQ(h->value_at_percentile(90.5), 20u);
    EXPECT_EQ(h->value_at_percentile(99), 20u);
    EXPECT_EQ(h->value_at_percentile(99.9), 200u);
}

TEST(BenchHistogram, MaxIsExactAndCapsPercentiles) {
    auto h = std::make_unique<Histogram>();
    h->record(1'234'567);  // in a bucket ~ 8 wide: the bucket's top is above the value
    EXPECT_EQ(h->max(), 1'234'567u);
    EXPECT_EQ(h->value_at_percentile(100), 1'234'567u);
    EXPECT_EQ(h->value_at_percentile(50), 1'234'567u);
}

TEST(BenchHistogram, HugeValuesAreClampedNotLost) {
    auto h = std::make_unique<Histogram>();
    h->record(std::numeric_limits<std::uint64_t>::max());
    h->record(Histogram::max_trackable + 1);
    EXPECT_EQ(h->count(), 2u);
    EXPECT_EQ(h->bucket_value_count(Histogram::bucket_count - 1), 2u);
    EXPECT_EQ(h->value_at_percentile(50), Histogram::max_trackable);
}

TEST(BenchHistogram, MergeEqualsRecordingEverythingInOne) {
    auto a = std::make_unique<Histogram>();
    auto b = std::make_unique<Histogram>();
    auto all = std::make_unique<Histogram>();
    std::mt19937_64 rng(42);
    std::lognormal_distribution<double> latency(std::log(200'000.0), 0.8);  // ~200 µs in ns
    for (int i = 0; i < 50000; ++i) {
        const auto v = static_cast<std::uint64_t>(latency(rng));
        (i % 3 ? *a : *b).record(v);
        all->record(v);
    }
    auto merged = std::make_unique<Histogram>();
    merged->merge(*a);
    merged->merge(*b);
    EXPECT_EQ(merged->count(), all->count());
    EXPECT_EQ(merged->min(), all->min());
    EXPECT_EQ(merged->max(), all->max());
    EXPECT_DOUBLE_EQ(merged->mean(), all->mean());
    for (std::size_t i = 0; i < Histogram::bucket_count; ++i)
        ASSERT_EQ(merged->bucket_value_count(i), all->bucket_value_count(i));
    for (double p : {50.0, 90.0, 99.0, 99.9, 100.0})
        EXPECT_EQ(merged->value_at_percentile(p), all->value_at_percentile(p));
    merged->reset();
    EXPECT_EQ(merged->count(), 0u);
    EXPECT_EQ(merged->value_at_percentile(99), 0u);
}

TEST(BenchHistogram, PercentileCurveEndsAtOneHundredAndTheMax) {
    auto h = std::make_unique<Histogram>();
    for (std::uint64_t v = 1; v <= 1000; ++v)
        h->record(v * 1000);
    const auto curve = h->percentile_curve();
    ASSERT_FALSE(curve.empty());
    EXPECT_DOUBLE_EQ(curve.back().percentile, 100.0);
    EXPECT_EQ(curve.back().value, 1'000'000u);
    for (std::size_t i = 1; i < curve.size(); ++i) {
        EXPECT_GT(curve[i].percentile, curve[i - 1].percentile);
        EXPECT_GT(curve[i].value, curve[i - 1].value);
    }
}

TEST(BenchHistogram, RecordNeverAllocates) {
    auto h = std::make_unique<Histogram>();
    const std::size_t before = folsom::test::heap_allocations();
    std::uint64_t v = 1;
    for (int i = 0; i < 200000; ++i) {
        h->record(v);
        v = v * 6364136223846793005ULL + 1442695040888963407ULL;
        v >>= (i % 40);
    }
    EXPECT_EQ(folsom::test::heap_allocations(), before);
    EXPECT_EQ(h->count(), 200000u);
}

TEST(BenchHistogram, ReadersMayMergeWhileOneThreadRecords) {
    // The progress line merges worker histograms while they record: no torn state, and the
    // merged count never exceeds what was recorded.
    auto h = std::make_unique<Histogram>();
    std::atomic<bool> done{false};
    std::thread writer([&] {
        for (std::uint64_t i = 1; i <= 300000; ++i)
            h->record(i % 5000 + 100);
        done = true;
    });
    auto scratch = std::make_unique<Histogram>();
    std::uint64_t last = 0;
    while (!done) {
        scratch->reset();
        scratch->merge(*h);
        EXPECT_GE(scratch->count(), last);
        EXPECT_LE(scratch->count(), 300000u);
        last = scratch->count();
    }
    writer.join();
    scratch->reset();
    scratch->merge(*h);
    EXPECT_EQ(scratch->count(), 300000u);
}

// ---- key texts ------------------------------------------------------------------------------

using folsom::bench::KeyTable;
using folsom::bench::KeyText;
using folsom::bench::pick_key;

/// What the bench wrote before (fmt "k{:0{}}"): "k" and n zero-padded to the width of keys-1.
std::string reference_key(std::uint64_t n, std::uint64_t keys) {
    const std::string digits = std::to_string(n);
    const std::size_t width = std::to_string(keys - 1).size();
    return "k" + std::string(width - digits.size(), '0') + digits;
}

std::string written(const KeyText& t, std::uint64_t n) {
    std::string s(t.size(), '?');
    t.write(s.data(), n);
    return s;
}

const std::uint64_t key_spaces[] = {1,     2,      9,       10,        11,           99,
                                    100,   101,    1000,    10000,     12345,        100000,
                                    99999, 123457, 1000000, 123456789, 1000000000000};

TEST(BenchKeys, EveryWidthWritesWhatTheFormatStringWrote) {
    std::mt19937_64 rng(7);
    for (const std::uint64_t keys : key_spaces) {
        SCOPED_TRACE(keys);
        const KeyText t(keys);
        EXPECT_EQ(t.size(), reference_key(0, keys).size());
        for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, keys / 2, keys - 1})
            if (n < keys) {
                EXPECT_EQ(written(t, n), reference_key(n, keys));
            }
        for (int i = 0; i < 200; ++i) {
            const std::uint64_t n = rng() % keys;
            EXPECT_EQ(written(t, n), reference_key(n, keys));
        }
    }
}

TEST(BenchKeys, RunsCountUpWrapAndKeepTheirSeparators) {
    // Runs that carry over several digits, wrap from keys-1 to 0, and are written back to back
    // (stride 0) or one per "get" line slot (stride size+1, separated by spaces).
    struct Run {
        std::uint64_t keys, first;
        std::size_t count;
    };
    for (const Run r : {Run{10, 3, 10}, Run{1000, 995, 12}, Run{100, 9, 95}, Run{100000, 99990, 20},
                        Run{1000000000000, 999999999990, 15}, Run{1, 0, 3}, Run{7, 6, 1}}) {
        for (const std::size_t extra : {std::size_t{0}, std::size_t{1}, std::size_t{3}}) {
            SCOPED_TRACE(testing::Message()
                         << r.keys << " from " << r.first << " x" << r.count << " +" << extra);
            const KeyText t(r.keys);
            const std::size_t stride = t.size() + extra;
            const std::size_t guard = 16;
            std::string buf(r.count * stride + KeyText::slack + guard, '#');
            t.write_run(buf.data(), r.first, r.count, r.keys, extra ? stride : 0, ' ');
            std::string expect;
            for (std::size_t i = 0; i < r.count; ++i)
                expect += reference_key((r.first + i) % r.keys, r.keys) + std::string(extra, ' ');
            EXPECT_EQ(buf.substr(0, expect.size()), expect);
            // Nothing past the slack is touched.
            EXPECT_EQ(buf.substr(buf.size() - guard), std::string(guard, '#'));
        }
    }
}

TEST(BenchKeys, TableHoldsEveryKeyOfASmallKeySpaceAndNoneOfALargeOne) {
    const KeyTable small(10000);
    ASSERT_TRUE(small.texts());
    for (std::uint64_t n = 0; n < 10000; ++n)
        ASSERT_EQ(small.at(n), reference_key(n, 10000)) << n;
    const KeyTable large(1000000000);  // 10 bytes each: far over the table's MiB
    EXPECT_FALSE(large.texts());
    EXPECT_EQ(large.text().size(), 10u);
    EXPECT_FALSE(KeyTable(1000, 100).texts());  // over a given limit
}

TEST(BenchKeys, PickedKeysAreInRangeAndSpreadEvenly) {
    std::mt19937_64 rng(11);
    for (const std::uint64_t keys : {std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{10000},
                                     std::uint64_t{0xffffffff}, std::uint64_t{1} << 40}) {
        for (int i = 0; i < 10000; ++i)
            ASSERT_LT(pick_key(rng(), keys), keys) << keys;
    }
    EXPECT_EQ(pick_key(~std::uint64_t{0}, 10), 9u);
    EXPECT_EQ(pick_key(0, 10), 0u);
    std::uint64_t seen[10] = {};
    for (int i = 0; i < 100000; ++i)
        ++seen[pick_key(rng(), 10)];
    for (const std::uint64_t n : seen) {
        EXPECT_GT(n, 9000u);
        EXPECT_LT(n, 11000u);
    }
}

// ---- the clock --------------------------------------------------------------------------------

using folsom::bench::Ticks;

TEST(BenchTicks, SteadyClockTicksAreNanoseconds) {
    const Ticks t;
    EXPECT_FALSE(t.tsc());
    EXPECT_EQ(t.to_ns(123456789), 123456789u);
    EXPECT_EQ(t.from_ns(2.5e9), 2500000000u);
    const std::uint64_t a = t.now();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::uint64_t b = t.now();
    EXPECT_GE(b - a, 20000000u);
}

TEST(BenchTicks, TheTscCountsNanosecondsAsTheSteadyClockDoes) {
    const Ticks t = Ticks::measured(std::chrono::milliseconds(20));
    if (!t.tsc()) GTEST_SKIP() << "no TSC on this machine (or one below 1 GHz)";
    using Steady = std::chrono::steady_clock;
    const auto s0 = Steady::now();
    const std::uint64_t c0 = t.now();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::uint64_t c1 = t.now();
    const auto s1 = Steady::now();
    const double steady_ns = std::chrono::duration<double, std::nano>(s1 - s0).count();
    const auto tsc_ns = static_cast<double>(t.to_ns(c1 - c0));
    EXPECT_NEAR(tsc_ns / steady_ns, 1.0, 0.02) << tsc_ns << " ns by the TSC, " << steady_ns;
    // Conversions both ways agree, and hours of ticks do not overflow.
    EXPECT_NEAR(static_cast<double>(t.to_ns(t.from_ns(1e9))), 1e9, 1e3);
    const std::uint64_t day = t.from_ns(86400e9);
    EXPECT_NEAR(static_cast<double>(t.to_ns(day)), 86400e9, 86400e9 * 1e-6);
}

}  // namespace
