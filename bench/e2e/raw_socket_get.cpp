#include "e2e/raw_socket_get.hpp"

#include <arpa/inet.h>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace folsom::bench {

RawSocketGet::RawSocketGet(std::uint16_t port, const KeySet& keys) : keys_(keys) {
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
        throw std::runtime_error("raw: connect() failed");
    }
}

RawSocketGet::~RawSocketGet() {
    if (fd_ >= 0) ::close(fd_);
}

std::uint64_t RawSocketGet::get(std::uint64_t ops) {
    // "VALUE <key> 0 64\r\n<64 bytes>\r\nEND\r\n"
    const std::size_t expect = 6 + keys_.storage[0].size() + 3 +
                               std::to_string(keys_.value.size()).size() + 2 + keys_.value.size() +
                               2 + 5;
    char req[300];
    char buf[4096];
    for (std::uint64_t i = 0; i < ops; ++i) {
        const std::string& key = keys_.storage[(next_ + i) % keys_.size()];
        std::memcpy(req, "get ", 4);
        std::memcpy(req + 4, key.data(), key.size());
        std::memcpy(req + 4 + key.size(), "\r\n", 2);
        const std::size_t len = key.size() + 6;
        if (::send(fd_, req, len, MSG_NOSIGNAL) != static_cast<ssize_t>(len))
            throw std::runtime_error("raw: send failed");
        std::size_t got = 0;
        for (;;) {
            const ssize_t n = ::recv(fd_, buf + got, sizeof buf - got, 0);
            if (n <= 0) throw std::runtime_error("raw: recv failed");
            got += static_cast<std::size_t>(n);
            if (got >= 5 && std::memcmp(buf + got - 5, "END\r\n", 5) == 0) break;
            if (got == sizeof buf) throw std::runtime_error("raw: reply too long");
        }
        if (got != expect) throw std::runtime_error("raw: unexpected reply");
    }
    next_ += ops;
    return ops;
}

}  // namespace folsom::bench
