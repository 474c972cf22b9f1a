#include "bench/raw_socket.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include <utility>

namespace folsom::bench {
namespace {

constexpr std::size_t buffer_size = std::size_t{1} << 20;
constexpr std::string_view end_line = "END\r\n";

}  // namespace

RawSocket::RawSocket(int fd) : fd_(fd), buf_(new char[buffer_size]) {}

RawSocket::RawSocket(RawSocket&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), buf_(std::move(other.buf_)) {}

RawSocket& RawSocket::operator=(RawSocket&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(other.fd_, -1);
        buf_ = std::move(other.buf_);
    }
    return *this;
}

RawSocket::~RawSocket() {
    if (fd_ >= 0) ::close(fd_);
}

RawSocket RawSocket::tcp(const std::string& host, std::uint16_t port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    if (const int e = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); e != 0)
        throw std::runtime_error("raw: cannot resolve " + host + ": " + ::gai_strerror(e));
    std::string why = "no address";
    for (const addrinfo* a = found; a; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            why = std::strerror(errno);
            continue;
        }
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            ::freeaddrinfo(found);
            int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            return RawSocket(fd);
        }
        why = std::strerror(errno);
        ::close(fd);
    }
    ::freeaddrinfo(found);
    throw std::runtime_error("raw: connect() to " + host + ":" + service + " failed: " + why);
}

RawSocket RawSocket::unix_socket(const std::string& path) {
    sockaddr_un addr{};
    if (path.size() >= sizeof addr.sun_path) throw std::runtime_error("raw: socket path too long");
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.data(), path.size());
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error("raw: socket() failed");
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        const std::string why = std::strerror(errno);
        ::close(fd);
        throw std::runtime_error("raw: connect() to " + path + " failed: " + why);
    }
    return RawSocket(fd);
}

RawSocket RawSocket::connect(const std::string& server) {
    if (!server.empty() && server.front() == '/') return unix_socket(server);
    const std::size_t colon = server.rfind(':');
    if (colon == std::string::npos || colon + 1 == server.size())
        throw std::runtime_error("raw: no port in " + server);
    std::string host = server.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    const std::string port_text = server.substr(colon + 1);
    char* end = nullptr;
    const unsigned long port = std::strtoul(port_text.c_str(), &end, 10);
    if (*end != '\0' || port == 0 || port > 65535)
        throw std::runtime_error("raw: bad port in " + server);
    return tcp(host, static_cast<std::uint16_t>(port));
}

void RawSocket::set_receive_timeout(std::chrono::milliseconds timeout) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

void RawSocket::send_rest(std::string_view request, ssize_t sent) {
    for (;;) {
        if (sent < 0 && errno != EINTR) throw std::runtime_error("raw: send failed");
        if (sent == 0) throw std::runtime_error("raw: send failed");
        if (sent > 0) request.remove_prefix(static_cast<std::size_t>(sent));
        if (request.empty()) return;
        sent = ::send(fd_, request.data(), request.size(), MSG_NOSIGNAL);
    }
}

std::size_t RawSocket::round_trip(std::string_view request, std::size_t expect,
                                  std::size_t replies) {
    const ssize_t sent = ::send(fd_, request.data(), request.size(), MSG_NOSIGNAL);
    if (sent != static_cast<ssize_t>(request.size())) send_rest(request, sent);
    // The reply is not kept: it is received into the buffer from `pos` on, and when the
    // buffer runs short its last five bytes (for the "END\r\n" check) move to the front.
    char* const buf = buf_.get();
    std::size_t pos = 0;
    std::size_t got = 0;
    for (;;) {
        if (buffer_size - pos < buffer_size / 4) {
            std::memmove(buf, buf + pos - 5, 5);
            pos = 5;
        }
        const ssize_t n = ::recv(fd_, buf + pos, buffer_size - pos, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                throw std::runtime_error("raw: the reply stopped coming (timed out)");
            throw std::runtime_error("raw: recv failed");
        }
        pos += static_cast<std::size_t>(n);
        got += static_cast<std::size_t>(n);
        const bool ends = got >= 5 && std::memcmp(buf + pos - 5, end_line.data(), 5) == 0;
        if (expect == 0) {
            if (ends) return got;
        } else if (got >= expect || (replies == 1 && ends)) {
            if (got != expect || !ends) throw std::runtime_error("raw: unexpected reply");
            return got;
        }
    }
}

}  // namespace folsom::bench
