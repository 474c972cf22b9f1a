#include "net/socket_options.hpp"

#include <cerrno>
#include <cstdint>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace folsom::net {
namespace {

// Linux's bounds (net/ipv4/tcp.c: MAX_TCP_KEEPIDLE, MAX_TCP_KEEPINTVL, MAX_TCP_KEEPCNT).
constexpr std::int64_t max_keepalive_seconds = 32767;
constexpr int max_keepalive_count = 127;
constexpr std::int64_t max_user_timeout_ms = 0x7fffffff;

std::error_code set_int(int fd, int level, int name, int value) noexcept {
    if (::setsockopt(fd, level, name, &value, sizeof value) == 0) return {};
    return {errno, std::system_category()};
}

}  // namespace

std::string tcp_options_refusal(const Options& options) {
    if (const auto& k = options.tcp_keepalive) {
        if (k->idle.count() < 1 || k->idle.count() > max_keepalive_seconds)
            return "Options::tcp_keepalive.idle must be 1 to 32767 seconds, not " +
                   std::to_string(k->idle.count());
        if (k->interval.count() < 1 || k->interval.count() > max_keepalive_seconds)
            return "Options::tcp_keepalive.interval must be 1 to 32767 seconds, not " +
                   std::to_string(k->interval.count());
        if (k->count < 1 || k->count > max_keepalive_count)
            return "Options::tcp_keepalive.count must be 1 to 127 probes, not " +
                   std::to_string(k->count);
    }
    const auto ut = options.tcp_user_timeout.count();
    if (ut < 0 || ut > max_user_timeout_ms)
        return "Options::tcp_user_timeout must be 0 to 2147483647 ms, not " + std::to_string(ut);
    return {};
}

std::error_code apply_tcp_options(int fd, const Options& options) noexcept {
    std::error_code ec;
    if (const auto& k = options.tcp_keepalive) {
        if (!ec) ec = set_int(fd, IPPROTO_TCP, TCP_KEEPIDLE, static_cast<int>(k->idle.count()));
        if (!ec)
            ec = set_int(fd, IPPROTO_TCP, TCP_KEEPINTVL, static_cast<int>(k->interval.count()));
        if (!ec) ec = set_int(fd, IPPROTO_TCP, TCP_KEEPCNT, k->count);
        if (!ec) ec = set_int(fd, SOL_SOCKET, SO_KEEPALIVE, 1);
    }
    if (!ec && options.tcp_user_timeout.count() > 0)
        ec = set_int(fd, IPPROTO_TCP, TCP_USER_TIMEOUT,
                     static_cast<int>(options.tcp_user_timeout.count()));
    return ec;
}

}  // namespace folsom::net
