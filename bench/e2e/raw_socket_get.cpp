#include "e2e/raw_socket_get.hpp"

#include <arpa/inet.h>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace folsom::bench {

RawSocketGet::RawSocketGet(const KeySet& keys)
    : keys_(keys),
      // "VALUE " <key> " 0 " <size> "\r\n" <data> "\r\n", counted once, outside the timed loops.
      hit_bytes_but_key_(6 + 3 + std::to_string(keys.value.size()).size() + 2 + keys.value.size() +
                         2),
      reply_(std::size_t{1} << 20, '\0') {}

RawSocketGet::RawSocketGet(const std::string& socket_path, const KeySet& keys)
    : RawSocketGet(keys) {
    sockaddr_un addr{};
    if (socket_path.size() >= sizeof addr.sun_path)
        throw std::runtime_error("raw: socket path too long");
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error("raw: socket() failed");
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd_);
        fd_ = -1;
        throw std::runtime_error("raw: connect() to " + socket_path + " failed");
    }
}

RawSocketGet::RawSocketGet(std::uint16_t port, const KeySet& keys) : RawSocketGet(keys) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error("raw: socket() failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd_);
        fd_ = -1;  // the destructor runs: the delegated constructor had finished
        throw std::runtime_error("raw: connect() failed");
    }
}

std::size_t RawSocketGet::hit_bytes(std::string_view key) const noexcept {
    return hit_bytes_but_key_ + key.size();
}

RawSocketGet::~RawSocketGet() {
    if (fd_ >= 0) ::close(fd_);
}

void RawSocketGet::round_trip(std::string_view request, std::size_t expect) {
    if (::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size()))
        throw std::runtime_error("raw: send failed");
    std::size_t got = 0;
    for (;;) {
        const ssize_t n = ::recv(fd_, reply_.data() + got, reply_.size() - got, 0);
        if (n <= 0) throw std::runtime_error("raw: recv failed");
        got += static_cast<std::size_t>(n);
        if (got >= 5 && std::memcmp(reply_.data() + got - 5, "END\r\n", 5) == 0) break;
        if (got == reply_.size()) throw std::runtime_error("raw: reply too long");
    }
    if (got != expect) throw std::runtime_error("raw: unexpected reply");
}

std::uint64_t RawSocketGet::get(std::uint64_t ops) {
    for (std::uint64_t i = 0; i < ops; ++i) {
        const std::string& key = keys_.storage[(next_ + i) % keys_.size()];
        request_.assign("get ");
        request_.append(key);
        request_.append("\r\n");
        round_trip(request_, hit_bytes(key) + 5);
    }
    next_ += ops;
    return ops;
}

std::uint64_t RawSocketGet::get_multi(std::uint64_t ops, std::size_t keys_per_op) {
    for (std::uint64_t i = 0; i < ops; ++i) {
        const std::size_t start = keys_.run_start(next_ + i, keys_per_op);
        request_.assign("get");
        std::size_t expect = 5;  // "END\r\n"
        for (std::size_t k = start; k < start + keys_per_op; ++k) {
            request_.push_back(' ');
            request_.append(keys_.storage[k]);
            expect += hit_bytes(keys_.storage[k]);
        }
        request_.append("\r\n");
        round_trip(request_, expect);
    }
    next_ += ops;
    return ops;
}

}  // namespace folsom::bench
