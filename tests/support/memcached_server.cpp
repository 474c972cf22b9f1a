#include "support/memcached_server.hpp"

#include "bench/memcached_launch.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace folsom::test {
namespace {

int connect_loopback(std::uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

int connect_unix(const std::string& path) {
    sockaddr_un addr{};
    if (path.size() >= sizeof addr.sun_path) return -1;
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.data(), path.size());
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

std::string request_on(int fd, const std::string& command, const std::string& terminator);
std::string binary_request_on(int fd, const std::string& packet);

}  // namespace

TempDir::TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/folsom-XXXXXX";
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
}

TempDir::~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

std::uint16_t free_loopback_port() {
    return bench::free_loopback_port();
}

bool wait_until_listening(std::uint16_t port, int timeout_ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
        if (bench::accepts_connections(port)) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

bool wait_until_listening(const std::string& path, int timeout_ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
        if (bench::accepts_connections(path)) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

MemcachedServer::MemcachedServer(UnixSocket, std::vector<std::string> extra_args)
    : dir_(std::make_unique<TempDir>()), extra_args_(std::move(extra_args)) {
    socket_path_ = dir_->file("memcached.sock");
    spawn();
    if (wait_listening(5000)) return;
    kill();
    throw std::runtime_error("could not start memcached on the Unix socket " + socket_path_);
}

MemcachedServer::MemcachedServer(UnixSocket, std::string path, std::vector<std::string> extra_args)
    : socket_path_(std::move(path)), extra_args_(std::move(extra_args)) {
    spawn();
    if (wait_listening(5000)) return;
    kill();
    throw std::runtime_error("could not start memcached on the Unix socket " + socket_path_);
}

std::unique_ptr<MemcachedServer> start_memcached(bool over_unix_socket,
                                                 std::vector<std::string> extra_args) {
    if (over_unix_socket)
        return std::make_unique<MemcachedServer>(on_unix_socket, std::move(extra_args));
    return std::make_unique<MemcachedServer>(std::move(extra_args));
}

bool MemcachedServer::wait_listening(int timeout_ms) const {
    return is_unix_socket() ? wait_until_listening(socket_path_, timeout_ms)
                            : wait_until_listening(port_, timeout_ms);
}

MemcachedServer::MemcachedServer(std::vector<std::string> extra_args)
    : extra_args_(std::move(extra_args)) {
    // A port can be taken between free_loopback_port() and memcached's bind: retry a few times.
    for (int attempt = 0; attempt < 5; ++attempt) {
        port_ = free_loopback_port();
        spawn();
        if (wait_until_listening(port_)) return;
        kill();
    }
    throw std::runtime_error("could not start memcached on a loopback port");
}

MemcachedServer::MemcachedServer(std::uint16_t port, std::vector<std::string> extra_args)
    : port_(port), extra_args_(std::move(extra_args)) {
    restart();
}

MemcachedServer::~MemcachedServer() {
    thaw();
    kill();
}

std::string MemcachedServer::address() const {
    if (is_unix_socket()) return socket_path_;
    return "127.0.0.1:" + std::to_string(port_);
}

void MemcachedServer::spawn() {
    std::vector<std::string> args = {"memcached", "-U", "0", "-t", "2", "-m", "64"};
    const auto where = is_unix_socket() ? bench::memcached_socket_args(socket_path_)
                                        : bench::memcached_listen_args(port_);
    args.insert(args.end(), where.begin(), where.end());
    args.insert(args.end(), extra_args_.begin(), extra_args_.end());
    // Dies with the test (SpawnOptions' SIGKILL): a test that crashes (a sanitizer abort) must
    // not leave a server running that holds ctest's output pipe open until the test's timeout.
    pid_ = bench::spawn_process(args);
}

void MemcachedServer::kill() {
    bench::stop_process(pid_, std::chrono::milliseconds(0));  // continues a frozen one first
    pid_ = -1;
}

void MemcachedServer::restart() {
    kill();
    for (int attempt = 0; attempt < 50; ++attempt) {  // the port may linger briefly
        spawn();
        if (wait_listening(2000)) return;
        kill();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    throw std::runtime_error("could not restart memcached on " + address());
}

void MemcachedServer::freeze() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGSTOP);
    // kill() returns before every thread of the server has stopped; until they have, a request
    // sent "after the freeze" may still be answered. The stop is reported to the parent once all
    // have (bounded wait: a second freeze() would get no second report).
    for (int i = 0; i < 200; ++i) {
        int status = 0;
        const pid_t r = ::waitpid(pid_, &status, WUNTRACED | WNOHANG);
        if (r == pid_ && WIFSTOPPED(status)) return;
        if (r < 0 && errno != EINTR) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

void MemcachedServer::thaw() {
    if (pid_ > 0) ::kill(pid_, SIGCONT);
}

std::string raw_request(std::uint16_t port, const std::string& command,
                        const std::string& terminator) {
    int fd = connect_loopback(port);
    if (fd < 0) throw std::runtime_error("raw_request: cannot connect");
    return request_on(fd, command, terminator);
}

std::string raw_request_unix(const std::string& path, const std::string& command,
                             const std::string& terminator) {
    int fd = connect_unix(path);
    if (fd < 0) throw std::runtime_error("raw_request: cannot connect to " + path);
    return request_on(fd, command, terminator);
}

std::string raw_request(const MemcachedServer& server, const std::string& command,
                        const std::string& terminator) {
    return server.is_unix_socket() ? raw_request_unix(server.socket_path(), command, terminator)
                                   : raw_request(server.port(), command, terminator);
}

std::string raw_binary_request(std::uint16_t port, const std::string& packet) {
    int fd = connect_loopback(port);
    if (fd < 0) throw std::runtime_error("raw_binary_request: cannot connect");
    return binary_request_on(fd, packet);
}

std::string raw_binary_request(const MemcachedServer& server, const std::string& packet) {
    if (!server.is_unix_socket()) return raw_binary_request(server.port(), packet);
    int fd = connect_unix(server.socket_path());
    if (fd < 0) throw std::runtime_error("raw_binary_request: cannot connect");
    return binary_request_on(fd, packet);
}

namespace {

// Both take the connected `fd` and close it.
std::string request_on(int fd, const std::string& command, const std::string& terminator) {
    std::size_t off = 0;
    while (off < command.size()) {
        ssize_t n = ::send(fd, command.data() + off, command.size() - off, MSG_NOSIGNAL);
        if (n <= 0) {
            ::close(fd);
            throw std::runtime_error("raw_request: send failed");
        }
        off += static_cast<std::size_t>(n);
    }
    std::string reply;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    char buf[65536];
    while (std::chrono::steady_clock::now() < deadline) {
        if (reply.size() >= terminator.size() &&
            reply.compare(reply.size() - terminator.size(), terminator.size(), terminator) == 0)
            break;
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) continue;
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        reply.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return reply;
}

std::string binary_request_on(int fd, const std::string& packet) {
    if (::send(fd, packet.data(), packet.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(packet.size())) {
        ::close(fd);
        throw std::runtime_error("raw_binary_request: send failed");
    }
    std::string reply;
    std::size_t want = 24;  // the header; then the body length it carries
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    char buf[4096];
    while (reply.size() < want && std::chrono::steady_clock::now() < deadline) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) continue;
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        reply.append(buf, static_cast<std::size_t>(n));
        if (reply.size() >= 24 && want == 24) {
            const auto* h = reinterpret_cast<const unsigned char*>(reply.data());
            want = 24 + ((std::size_t{h[8]} << 24) | (std::size_t{h[9]} << 16) |
                         (std::size_t{h[10]} << 8) | h[11]);
        }
    }
    ::close(fd);
    return reply;
}

}  // namespace

long long stat_value(const std::string& stats_reply, const std::string& name) {
    const std::string needle = "STAT " + name + " ";
    auto pos = stats_reply.find(needle);
    if (pos == std::string::npos) return -1;
    return std::stoll(stats_reply.substr(pos + needle.size()));
}

}  // namespace folsom::test
