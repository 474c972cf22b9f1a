// The bench's view of the CPU: how much this process used (getrusage, for CPU per operation)
// and, with --cpu N, pinning it to one CPU so runs are comparable.
#pragma once

#include <string>

namespace folsom::bench {

struct CpuTime {
    double user_s = 0;
    double sys_s = 0;

    /// User and system CPU time of this process so far (all threads; children excluded, so an
    /// embedded memcached is not charged to the client).
    static CpuTime now() noexcept;
};

/// Pins the calling thread — and so every thread it creates afterwards — to `cpu`. Returns an
/// error text, or empty on success.
std::string pin_to_cpu(int cpu);

}  // namespace folsom::bench
