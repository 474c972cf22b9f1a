#include "support/fake_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>

namespace folsom::test {

std::string FakeConnection::read_line() {
    for (;;) {
        auto pos = buffered_.find("\r\n");
        if (pos != std::string::npos) {
            std::string line = buffered_.substr(0, pos);
            buffered_.erase(0, pos + 2);
            return line;
        }
        char buf[4096];
        ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
        if (n <= 0) return {};
        buffered_.append(buf, static_cast<std::size_t>(n));
    }
}

std::string FakeConnection::read_exact(std::size_t n) {
    while (buffered_.size() < n) {
        char buf[65536];
        ssize_t r = ::recv(fd_, buf, sizeof buf, 0);
        if (r <= 0) break;
        buffered_.append(buf, static_cast<std::size_t>(r));
    }
    std::string out = buffered_.substr(0, std::min(n, buffered_.size()));
    buffered_.erase(0, out.size());
    return out;
}

std::string FakeConnection::read_request() {
    std::string line = read_line();
    // set/add/replace/append/prepend/cas <key> <flags> <exptime> <bytes> [...]: read the block
    const auto space = line.find(' ');
    const std::string verb = line.substr(0, space);
    if (verb == "set" || verb == "add" || verb == "replace" || verb == "append" ||
        verb == "prepend" || verb == "cas") {
        std::size_t field = 0, start = 0;
        std::string bytes;
        for (std::size_t i = 0; i <= line.size(); ++i) {
            if (i == line.size() || line[i] == ' ') {
                if (field == 4) bytes = line.substr(start, i - start);
                ++field;
                start = i + 1;
            }
        }
        read_exact(std::stoul(bytes) + 2);
    }
    return line;
}

void FakeConnection::write(std::string_view bytes) {
    std::size_t off = 0;
    while (off < bytes.size()) {
        ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
        if (n <= 0) return;
        off += static_cast<std::size_t>(n);
    }
}

void FakeConnection::write_slowly(std::string_view bytes, std::chrono::milliseconds gap) {
    for (char c : bytes) {
        write(std::string_view(&c, 1));
        std::this_thread::sleep_for(gap);
    }
}

void FakeConnection::close() {
    ::shutdown(fd_, SHUT_RDWR);
}

void FakeConnection::reset() {
    const int fd = slot_->exchange(-1);
    if (fd < 0) return;
    linger l{1, 0};  // a zero linger makes close() send RST instead of FIN
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    ::close(fd);
}

void FakeConnection::wait_for_close() {
    char buf[4096];
    while (::recv(fd_, buf, sizeof buf, 0) > 0) {
    }
}

FakeServer::FakeServer(Script script) : script_(std::move(script)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 16) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
        throw std::runtime_error("FakeServer: cannot listen on loopback");
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
}

FakeServer::~FakeServer() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    acceptor_.join();
    {
        std::lock_guard lk(mu_);
        for (auto& slot : fds_)
            if (int fd = slot->load(); fd >= 0) ::shutdown(fd, SHUT_RDWR);
    }
    for (auto& t : sessions_)
        t.join();
    for (auto& slot : fds_)
        if (int fd = slot->exchange(-1); fd >= 0) ::close(fd);
    ::close(listen_fd_);
}

void FakeServer::accept_loop() {
    while (!stopping_) {
        pollfd p{listen_fd_, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        std::lock_guard lk(mu_);
        if (stopping_) {
            ::close(fd);
            return;
        }
        const std::size_t index = accepted_++;
        auto slot = std::make_shared<std::atomic<int>>(fd);
        fds_.push_back(slot);
        sessions_.emplace_back([this, slot, index] {
            FakeConnection c(slot, index);
            script_(c);
        });
    }
}

}  // namespace folsom::test
