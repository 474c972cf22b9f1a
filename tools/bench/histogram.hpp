// Histogram: an HDR-style log-linear latency histogram.
//
// Values (nanoseconds in the bench, but any unit works) are counted in buckets whose width
// grows with the value: exact below 256, then 128 buckets per power of two, so every recorded
// value is reported within 1/128 (< 0.8%) of itself — two significant decimal digits — from
// 1 ns up to `max_trackable` (about 2.4 hours in nanoseconds). Larger values are clamped (and
// still counted) so a stuck request can never index out of range.
//
// The bucket array lives inside the object: record() never allocates and costs a few
// instructions. One thread records (the I/O thread that owns it); any thread may read or
// merge it concurrently (the progress line merges every worker's histogram once a second).
// That is why the counters are atomics updated with relaxed load+store, not fetch_add: with a
// single writer there is no lost update, no locked instruction on the hot path, and no data
// race for the readers.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace folsom::bench {

class Histogram {
  public:
    static constexpr unsigned sub_bucket_bits = 7;  // 128 buckets per power of two
    static constexpr std::uint64_t linear_limit = std::uint64_t{1} << (sub_bucket_bits + 1);
    static constexpr unsigned max_exponent = 43;  // 2^43 ns ~ 2.4 h
    static constexpr std::uint64_t max_trackable = (std::uint64_t{1} << (max_exponent + 1)) - 1;
    static constexpr std::size_t bucket_count =
        linear_limit + (max_exponent - sub_bucket_bits) * (std::size_t{1} << sub_bucket_bits);

    Histogram() noexcept;
    Histogram(const Histogram&) = delete;
    Histogram& operator=(const Histogram&) = delete;

    /// Counts one value. Single writer; never allocates.
    void record(std::uint64_t value) noexcept;

    /// Adds every count of `other` into this histogram (other may be recording meanwhile).
    void merge(const Histogram& other) noexcept;
    void reset() noexcept;

    std::uint64_t count() const noexcept { return count_.load(std::memory_order_relaxed); }
    /// Exact smallest and largest value recorded (0 when empty).
    std::uint64_t min() const noexcept;
    std::uint64_t max() const noexcept { return max_.load(std::memory_order_relaxed); }
    double mean() const noexcept;

    /// The value at percentile p (0..100): the highest value equivalent to the bucket holding
    /// the ceil(p% * count)-th smallest value, capped at the exact max. 0 when empty.
    std::uint64_t value_at_percentile(double p) const noexcept;

    /// Bucket geometry (exposed for tests and for drawing the distribution).
    static std::size_t bucket_index(std::uint64_t value) noexcept;
    static std::uint64_t bucket_lowest(std::size_t index) noexcept;
    static std::uint64_t bucket_highest(std::size_t index) noexcept;
    std::uint64_t bucket_value_count(std::size_t index) const noexcept {
        return counts_[index].load(std::memory_order_relaxed);
    }

    /// One point of the percentile curve: `percentile` of the values are <= `value`.
    struct Point {
        double percentile;
        std::uint64_t value;
    };
    /// The percentile curve at every non-empty bucket (allocates; for reports, not hot paths).
    std::vector<Point> percentile_curve() const;

  private:
    static void bump(std::atomic<std::uint64_t>& a, std::uint64_t by) noexcept {
        a.store(a.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
    }

    std::array<std::atomic<std::uint64_t>, bucket_count> counts_;
    std::atomic<std::uint64_t> count_{0};
    std::atomic<std::uint64_t> sum_{0};
    std::atomic<std::uint64_t> min_{~std::uint64_t{0}};
    std::atomic<std::uint64_t> max_{0};
};

}  // namespace folsom::bench
