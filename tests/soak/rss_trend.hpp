// RssTrend: the soak's memory verdict. Resident memory is sampled at a steady pace; a client
// that leaks grows without bound, one that does not reaches a plateau once its buffers, pools
// and allocator arenas have warmed up. The samples are cut in thirds: the first is warm-up and
// is ignored; the medians of the middle and of the last third are compared. On a plateau they
// are equal; a leak of r bytes per sample puts them r x (samples / 3) apart. "Grew" means the
// last third's median is above the middle third's by more than 8 MiB or 10%, whichever is
// larger: medians make one-off spikes (a burst of big values, a reconnect storm) harmless, and
// the slack absorbs allocator noise. Over a 20-minute run sampled every second, a leak of about
// 20 kB/s (70 MB an hour) is caught; a 60-second run catches only gross leaks (~400 kB/s).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace folsom::soak {

/// Resident set size of this process in bytes (/proc/self/statm), or 0 when unreadable.
inline std::uint64_t resident_bytes() {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t size = 0, resident = 0;
    if (!(statm >> size >> resident)) return 0;
    return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

class RssTrend {
  public:
    /// Fewer samples than this give no verdict (too short a run to tell).
    static constexpr std::size_t min_samples = 9;
    static constexpr std::uint64_t slack_bytes = 8ull << 20;  ///< absolute slack
    static constexpr double slack_share = 0.10;               ///< relative slack

    void add(std::uint64_t bytes) { samples_.push_back(bytes); }
    std::size_t size() const noexcept { return samples_.size(); }

    /// Median of the middle third: the plateau (0 when there are too few samples).
    std::uint64_t middle_median() const { return median(size() / 3, 2 * size() / 3); }
    /// Median of the last third: where memory ends up (0 when there are too few samples).
    std::uint64_t end_median() const { return median(2 * size() / 3, size()); }
    /// How far end_median() may be above middle_median() before it counts as growth.
    std::uint64_t allowance() const {
        return std::max(slack_bytes, static_cast<std::uint64_t>(
                                         static_cast<double>(middle_median()) * slack_share));
    }
    /// True when memory kept growing (see the comment at the top); false for too few samples.
    bool grew() const {
        if (size() < min_samples) return false;
        return end_median() > middle_median() + allowance();
    }

  private:
    std::uint64_t median(std::size_t begin, std::size_t end) const {
        if (size() < min_samples) return 0;
        std::vector<std::uint64_t> part(samples_.begin() + static_cast<std::ptrdiff_t>(begin),
                                        samples_.begin() + static_cast<std::ptrdiff_t>(end));
        std::nth_element(part.begin(), part.begin() + static_cast<std::ptrdiff_t>(part.size() / 2),
                         part.end());
        return part[part.size() / 2];
    }

    std::vector<std::uint64_t> samples_;
};

}  // namespace folsom::soak
