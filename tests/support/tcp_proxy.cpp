#include "support/tcp_proxy.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace folsom::test {
namespace {

bool send_all(int fd, const char* p, std::size_t n) {
    while (n > 0) {
        ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0) return false;
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}

}  // namespace

TcpProxy::TcpProxy(std::uint16_t upstream_port) : listener_("TcpProxy"), upstream_(upstream_port) {
    thread_ = std::thread([this] { run(); });
}

TcpProxy::~TcpProxy() {
    stop_ = true;
    listener_.wake();
    thread_.join();
    for (auto& p : pairs_) {
        ::close(p.client);
        ::close(p.server);
    }
}

void TcpProxy::call(std::function<void()> f) {
    std::unique_lock lk(mu_);
    task_ = std::move(f);
    task_done_ = false;
    listener_.wake();
    cv_.wait(lk, [this] { return task_done_; });
}

void TcpProxy::swallow(bool on) {
    call([this, on] { swallow_ = on; });
}

std::size_t TcpProxy::drop_swallowing() {
    std::size_t n = 0;
    call([this, &n] {
        swallow_ = false;
        for (auto it = pairs_.begin(); it != pairs_.end();) {
            if (!it->swallowed) {
                ++it;
                continue;
            }
            ::close(it->client);  // the client reads EOF: the connection is lost under it
            ::close(it->server);
            it = pairs_.erase(it);
            ++n;
        }
    });
    return n;
}

std::size_t TcpProxy::connections() {
    std::size_t n = 0;
    call([this, &n] { n = pairs_.size(); });
    return n;
}

std::vector<std::size_t> TcpProxy::bytes_from_clients() {
    std::vector<std::size_t> out;
    call([this, &out] {
        for (auto& p : pairs_)
            out.push_back(p.bytes);
    });
    return out;
}

void TcpProxy::run() {
    char buf[65536];
    while (!stop_) {
        std::vector<pollfd> fds;
        fds.push_back({listener_.wake_fd(), POLLIN, 0});
        fds.push_back({listener_.fd(), POLLIN, 0});
        for (auto& p : pairs_) {
            fds.push_back({p.client, POLLIN, 0});
            fds.push_back({p.server, POLLIN, 0});
        }
        if (::poll(fds.data(), fds.size(), 100) < 0) continue;
        if (fds[0].revents) {
            listener_.drain_wake();
            std::lock_guard lk(mu_);
            if (task_) {
                task_();
                task_ = nullptr;
                task_done_ = true;
                cv_.notify_all();
            }
            continue;  // pairs_ may have changed
        }
        const std::size_t polled = pairs_.size();  // a pair accepted below was not polled
        if (fds[1].revents & POLLIN) {
            int c = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_CLOEXEC);
            if (c >= 0) {
                int s = connect_to_loopback(upstream_);
                if (s < 0)
                    ::close(c);
                else
                    pairs_.push_back({c, s, false, 0});
            }
        }
        std::vector<std::size_t> dead;
        for (std::size_t i = 0; i < polled; ++i) {
            auto& p = pairs_[i];
            const auto& cfd = fds[2 + 2 * i];
            const auto& sfd = fds[3 + 2 * i];
            bool ok = true;
            if (cfd.revents) {
                ssize_t n = ::recv(p.client, buf, sizeof buf, 0);
                if (n > 0) p.bytes += static_cast<std::size_t>(n);
                if (n <= 0) {
                    ok = false;
                } else if (swallow_) {
                    p.swallowed = true;
                } else {
                    ok = send_all(p.server, buf, static_cast<std::size_t>(n));
                }
            }
            if (ok && sfd.revents) {
                ssize_t n = ::recv(p.server, buf, sizeof buf, 0);
                ok = n > 0 && send_all(p.client, buf, static_cast<std::size_t>(n));
            }
            if (!ok) dead.push_back(i);
        }
        for (auto it = dead.rbegin(); it != dead.rend(); ++it) {
            ::close(pairs_[*it].client);
            ::close(pairs_[*it].server);
            pairs_.erase(pairs_.begin() + static_cast<std::ptrdiff_t>(*it));
        }
    }
}

}  // namespace folsom::test
