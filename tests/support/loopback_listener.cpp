#include "support/loopback_listener.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>

namespace folsom::test {

LoopbackListener::LoopbackListener(const char* who) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(fd_, 64) != 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
        if (fd_ >= 0) ::close(fd_);
        throw std::runtime_error(std::string(who) + ": cannot listen");
    }
    port_ = ntohs(a.sin_port);
    if (::pipe2(wake_, O_CLOEXEC) != 0) {
        ::close(fd_);
        throw std::runtime_error(std::string(who) + ": pipe");
    }
}

LoopbackListener::~LoopbackListener() {
    ::close(fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
}

std::string LoopbackListener::address() const {
    return "127.0.0.1:" + std::to_string(port_);
}

void LoopbackListener::wake() noexcept {
    char c = 0;
    (void)!::write(wake_[1], &c, 1);
}

void LoopbackListener::drain_wake() noexcept {
    char buf[64];
    (void)!::read(wake_[0], buf, sizeof buf);
}

int connect_to_loopback(std::uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

}  // namespace folsom::test
