#include "bench/cpu.hpp"

#include <cerrno>
#include <cstring>
#include <sched.h>
#include <sys/resource.h>

namespace folsom::bench {

CpuTime CpuTime::now() noexcept {
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    auto secs = [](const timeval& tv) {
        return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
    };
    return {secs(ru.ru_utime), secs(ru.ru_stime)};
}

std::string pin_to_cpu(int cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return "CPU number out of range";
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (::sched_setaffinity(0, sizeof set, &set) != 0) return std::strerror(errno);
    return {};
}

}  // namespace folsom::bench
