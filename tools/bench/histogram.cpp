#include "bench/histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace folsom::bench {

Histogram::Histogram() noexcept {
    for (auto& c : counts_)
        c.store(0, std::memory_order_relaxed);
}

std::size_t Histogram::bucket_index(std::uint64_t value) noexcept {
    value = std::min(value, max_trackable);
    if (value < linear_limit) return static_cast<std::size_t>(value);
    // Exponent e >= sub_bucket_bits + 1; keep the sub_bucket_bits bits below the leading one.
    const unsigned e = 63u - static_cast<unsigned>(std::countl_zero(value));
    const std::uint64_t sub = (value >> (e - sub_bucket_bits)) & ((1u << sub_bucket_bits) - 1);
    return static_cast<std::size_t>(
        linear_limit + (e - sub_bucket_bits - 1) * (std::uint64_t{1} << sub_bucket_bits) + sub);
}

std::uint64_t Histogram::bucket_lowest(std::size_t index) noexcept {
    if (index < linear_limit) return index;
    const std::size_t rel = index - linear_limit;
    const unsigned e = static_cast<unsigned>(rel >> sub_bucket_bits) + sub_bucket_bits + 1;
    const std::uint64_t sub = rel & ((std::size_t{1} << sub_bucket_bits) - 1);
    return (std::uint64_t{1} << e) | (sub << (e - sub_bucket_bits));
}

std::uint64_t Histogram::bucket_highest(std::size_t index) noexcept {
    if (index < linear_limit) return index;
    const std::size_t rel = index - linear_limit;
    const unsigned e = static_cast<unsigned>(rel >> sub_bucket_bits) + sub_bucket_bits + 1;
    return bucket_lowest(index) + (std::uint64_t{1} << (e - sub_bucket_bits)) - 1;
}

void Histogram::record(std::uint64_t value) noexcept {
    bump(counts_[bucket_index(value)], 1);
    bump(count_, 1);
    bump(sum_, value);
    if (value < min_.load(std::memory_order_relaxed)) min_.store(value, std::memory_order_relaxed);
    if (value > max_.load(std::memory_order_relaxed)) max_.store(value, std::memory_order_relaxed);
}

void Histogram::merge(const Histogram& other) noexcept {
    // Read the bucket counts first and derive the total from them, so a merge taken while the
    // other side records is self-consistent (percentiles never see more count than buckets).
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < bucket_count; ++i) {
        const std::uint64_t c = other.counts_[i].load(std::memory_order_relaxed);
        if (c == 0) continue;
        bump(counts_[i], c);
        total += c;
    }
    bump(count_, total);
    bump(sum_, other.sum_.load(std::memory_order_relaxed));
    const std::uint64_t omin = other.min_.load(std::memory_order_relaxed);
    const std::uint64_t omax = other.max_.load(std::memory_order_relaxed);
    if (omin < min_.load(std::memory_order_relaxed)) min_.store(omin, std::memory_order_relaxed);
    if (omax > max_.load(std::memory_order_relaxed)) max_.store(omax, std::memory_order_relaxed);
}

void Histogram::reset() noexcept {
    for (auto& c : counts_)
        c.store(0, std::memory_order_relaxed);
    count_.store(0, std::memory_order_relaxed);
    sum_.store(0, std::memory_order_relaxed);
    min_.store(~std::uint64_t{0}, std::memory_order_relaxed);
    max_.store(0, std::memory_order_relaxed);
}

std::uint64_t Histogram::min() const noexcept {
    return count() == 0 ? 0 : min_.load(std::memory_order_relaxed);
}

double Histogram::mean() const noexcept {
    const std::uint64_t n = count();
    return n == 0
               ? 0.0
               : static_cast<double>(sum_.load(std::memory_order_relaxed)) / static_cast<double>(n);
}

std::uint64_t Histogram::value_at_percentile(double p) const noexcept {
    const std::uint64_t n = count();
    if (n == 0) return 0;
    p = std::clamp(p, 0.0, 100.0);
    auto rank = static_cast<std::uint64_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
    rank = std::clamp<std::uint64_t>(rank, 1, n);
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < bucket_count; ++i) {
        seen += counts_[i].load(std::memory_order_relaxed);
        if (seen >= rank) return std::min(bucket_highest(i), max());
    }
    return max();
}

std::vector<Histogram::Point> Histogram::percentile_curve() const {
    std::vector<Point> points;
    const std::uint64_t n = count();
    if (n == 0) return points;
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < bucket_count; ++i) {
        const std::uint64_t c = counts_[i].load(std::memory_order_relaxed);
        if (c == 0) continue;
        seen += c;
        points.push_back({100.0 * static_cast<double>(seen) / static_cast<double>(n),
                          std::min(bucket_highest(i), max())});
    }
    return points;
}

}  // namespace folsom::bench
