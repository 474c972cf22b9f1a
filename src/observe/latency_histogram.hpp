// LatencyHistogram: a lock-free log-linear histogram of nanosecond latencies (internal; used by
// MetricsRegistry).
//
// Values below 16 ns have a bucket each; above, every power of two is split into 8 equal
// buckets, so a bucket's upper bound is at most 12.5% above any value in it. Recording is one
// relaxed fetch_add on a bucket (plus one on the sum); nothing allocates after construction.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace folsom::detail {

class LatencyHistogram {
  public:
    static constexpr int sub_bits = 3;                     // 8 buckets per power of two
    static constexpr int max_exponent = 40;                // 2^40 ns: ~18 minutes
    static constexpr std::size_t linear = 2u << sub_bits;  // values 0..15 exactly
    static constexpr std::size_t bucket_count =
        linear + (max_exponent - sub_bits) * (std::size_t{1} << sub_bits);

    static constexpr std::size_t bucket_of(std::uint64_t ns) noexcept {
        if (ns < linear) return static_cast<std::size_t>(ns);
        const int e = std::bit_width(ns) - 1;  // >= sub_bits + 1
        if (e >= max_exponent + 1) return bucket_count - 1;
        const std::uint64_t mantissa = (ns >> (e - sub_bits)) - (std::uint64_t{1} << sub_bits);
        const std::size_t i =
            linear + static_cast<std::size_t>(e - sub_bits - 1) * (std::size_t{1} << sub_bits) +
            static_cast<std::size_t>(mantissa);
        return std::min(i, bucket_count - 1);
    }
    /// The largest value that falls in bucket `i`.
    static constexpr std::uint64_t upper_bound(std::size_t i) noexcept {
        if (i < linear) return i;
        const std::size_t j = i - linear;
        const int e = static_cast<int>(j >> sub_bits) + sub_bits + 1;
        const std::uint64_t mantissa =
            (j & ((std::size_t{1} << sub_bits) - 1)) + (std::uint64_t{1} << sub_bits);
        return ((mantissa + 1) << (e - sub_bits)) - 1;
    }

    void record(std::uint64_t ns) noexcept {
        buckets_[bucket_of(ns)].fetch_add(1, std::memory_order_relaxed);
        sum_ns_.fetch_add(ns, std::memory_order_relaxed);
    }

    void reset() noexcept {
        for (auto& b : buckets_)
            b.store(0, std::memory_order_relaxed);
        sum_ns_.store(0, std::memory_order_relaxed);
    }

    /// A plain copy, for computing quantiles.
    struct Counts {
        std::array<std::uint64_t, bucket_count> buckets{};
        std::uint64_t count = 0;
        std::uint64_t sum_ns = 0;

        void merge(const Counts& o) noexcept {
            for (std::size_t i = 0; i < bucket_count; ++i)
                buckets[i] += o.buckets[i];
            count += o.count;
            sum_ns += o.sum_ns;
        }
        /// Upper bound of the bucket holding the q-quantile (0 < q <= 1), in ns; 0 if empty.
        std::uint64_t quantile(double q) const noexcept {
            if (count == 0) return 0;
            // The rank of the q-quantile, 1-based: the smallest r with r >= q * count.
            auto rank = static_cast<std::uint64_t>(q * static_cast<double>(count));
            if (static_cast<double>(rank) < q * static_cast<double>(count)) ++rank;
            rank = std::clamp<std::uint64_t>(rank, 1, count);
            std::uint64_t seen = 0;
            for (std::size_t i = 0; i < bucket_count; ++i) {
                seen += buckets[i];
                if (seen >= rank) return upper_bound(i);
            }
            return upper_bound(bucket_count - 1);
        }
    };

    Counts read() const noexcept {
        Counts c;
        for (std::size_t i = 0; i < bucket_count; ++i) {
            c.buckets[i] = buckets_[i].load(std::memory_order_relaxed);
            c.count += c.buckets[i];
        }
        c.sum_ns = sum_ns_.load(std::memory_order_relaxed);
        return c;
    }

  private:
    std::array<std::atomic<std::uint64_t>, bucket_count> buckets_{};
    std::atomic<std::uint64_t> sum_ns_{0};
};

}  // namespace folsom::detail
