#include "support/delay_proxy.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <deque>
#include <fcntl.h>
#include <list>
#include <netinet/in.h>
#include <poll.h>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace folsom::test {
namespace {

using Clock = std::chrono::steady_clock;

int connect_nonblocking(std::uint16_t port) {
    const int fd = connect_to_loopback(port);
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

// Bytes read from one side, due to be written to the other side at `due`.
struct Chunk {
    Clock::time_point due;
    std::string bytes;
    std::size_t written = 0;
};

// fd[0] is the client's side, fd[1] the server's; queue[i] holds bytes read from fd[i].
struct Pair {
    int fd[2] = {-1, -1};
    std::deque<Chunk> queue[2];
    bool dead = false;
};

}  // namespace

DelayProxy::DelayProxy(std::uint16_t upstream_port)
    : listener_("DelayProxy"), upstream_(upstream_port) {
    thread_ = std::thread([this] { run(); });
}

DelayProxy::~DelayProxy() {
    stop_ = true;
    listener_.wake();
    thread_.join();
}

void DelayProxy::run() {
    std::list<Pair> pairs;
    std::vector<char> buf(65536);
    while (!stop_) {
        // Poll every socket for input, and for output where due bytes wait; sleep until the
        // earliest chunk is due (at most 100 ms, to notice stop_).
        const auto now = Clock::now();
        auto wake_at = now + std::chrono::milliseconds(100);
        std::vector<pollfd> fds = {{listener_.wake_fd(), POLLIN, 0}, {listener_.fd(), POLLIN, 0}};
        for (auto& p : pairs) {
            for (int i = 0; i < 2; ++i) {
                short events = POLLIN;
                const auto& out = p.queue[1 - i];  // what is written to fd[i]
                if (!out.empty()) {
                    if (out.front().due <= now)
                        events |= POLLOUT;
                    else
                        wake_at = std::min(wake_at, out.front().due);
                }
                fds.push_back({p.fd[i], events, 0});
            }
        }
        const auto wait = std::chrono::ceil<std::chrono::milliseconds>(wake_at - now);
        if (::poll(fds.data(), fds.size(), static_cast<int>(std::max<long long>(wait.count(), 0))) <
            0)
            continue;
        if (fds[0].revents & POLLIN) listener_.drain_wake();
        if (fds[1].revents & POLLIN) {
            int c = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (c >= 0) {
                int s = connect_nonblocking(upstream_);
                if (s < 0) {
                    ::close(c);
                } else {
                    Pair p;
                    p.fd[0] = c;
                    p.fd[1] = s;
                    pairs.push_back(std::move(p));
                    ++accepted_;
                }
            }
        }
        std::size_t k = 2;
        const auto delay = std::chrono::milliseconds(delay_ms_.load());
        for (auto& p : pairs) {
            if (k + 2 > fds.size()) break;  // accepted above, not polled yet
            for (int i = 0; i < 2; ++i, ++k) {
                const short rev = fds[k].revents;
                if (rev & (POLLIN | POLLHUP | POLLERR)) {
                    const ssize_t n = ::read(p.fd[i], buf.data(), buf.size());
                    if (n > 0)
                        p.queue[i].push_back(
                            {Clock::now() + delay,
                             std::string(buf.data(), static_cast<std::size_t>(n))});
                    else if (n == 0 || (errno != EAGAIN && errno != EINTR))
                        p.dead = true;  // either side gone: drop the pair (no half-close)
                }
            }
        }
        // Write what is due.
        const auto after = Clock::now();
        for (auto& p : pairs) {
            for (int i = 0; i < 2 && !p.dead; ++i) {
                auto& out = p.queue[1 - i];
                while (!out.empty() && out.front().due <= after) {
                    Chunk& c = out.front();
                    const ssize_t n = ::send(p.fd[i], c.bytes.data() + c.written,
                                             c.bytes.size() - c.written, MSG_NOSIGNAL);
                    if (n < 0) {
                        if (errno != EAGAIN && errno != EINTR) p.dead = true;
                        break;
                    }
                    c.written += static_cast<std::size_t>(n);
                    if (c.written < c.bytes.size()) break;
                    out.pop_front();
                }
            }
        }
        for (auto it = pairs.begin(); it != pairs.end();) {
            if (!it->dead) {
                ++it;
                continue;
            }
            ::close(it->fd[0]);
            ::close(it->fd[1]);
            it = pairs.erase(it);
        }
    }
    for (auto& p : pairs) {
        ::close(p.fd[0]);
        ::close(p.fd[1]);
    }
}

}  // namespace folsom::test
