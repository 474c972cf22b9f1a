#include "net/after_fork.hpp"

#include "folsom/detail/fork_generation.hpp"

#include <algorithm>
#include <mutex>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace folsom::detail {

std::atomic<std::uint32_t> fork_generation_counter{0};

}  // namespace folsom::detail

namespace folsom::net {
namespace {

struct Tracked {
    std::mutex mu;
    std::vector<int> fds;
};

// Never destroyed: connections may untrack while the program exits.
Tracked& tracked() {
    static Tracked* t = [] {
        auto* made = new Tracked;
        // The registry's lock is held across fork(), so that the child finds the list whole
        // (a connection of another thread may have been changing it).
        ::pthread_atfork([] { tracked().mu.lock(); }, [] { tracked().mu.unlock(); },
                         [] {
                             auto& r = tracked();
                             for (const int fd : r.fds) {
                                 const int blank = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                                 if (blank >= 0) {
                                     (void)::dup2(blank, fd);
                                     (void)::close(blank);
                                 }
                             }
                             r.fds.clear();
                             detail::fork_generation_counter.fetch_add(1,
                                                                       std::memory_order_relaxed);
                             r.mu.unlock();
                         });
        return made;
    }();
    return *t;
}

// Registers the handler at start-up, so that a fork before the first connection is counted
// too (a BlockingClient made before it must see it).
[[maybe_unused]] const bool registered = (tracked(), true);

}  // namespace

void track_connection_socket(int fd) {
    auto& r = tracked();
    std::lock_guard lk(r.mu);
    if (std::find(r.fds.begin(), r.fds.end(), fd) == r.fds.end()) r.fds.push_back(fd);
}

void untrack_connection_socket(int fd) noexcept {
    auto& r = tracked();
    std::lock_guard lk(r.mu);
    const auto it = std::find(r.fds.begin(), r.fds.end(), fd);
    if (it != r.fds.end()) {
        *it = r.fds.back();
        r.fds.pop_back();
    }
}

}  // namespace folsom::net
