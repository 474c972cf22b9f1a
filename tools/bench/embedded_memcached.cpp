#include "bench/embedded_memcached.hpp"

#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace folsom::bench {
namespace {

std::atomic<pid_t> g_running_pid{-1};

sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return addr;
}

/// A free TCP port on 127.0.0.1 (bound and released; memcached may lose a race for it, which
/// the caller retries).
std::uint16_t free_loopback_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    sockaddr_in addr = loopback(0);
    socklen_t len = sizeof addr;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        const int e = errno;
        ::close(fd);
        throw std::runtime_error(std::string("no free loopback port: ") + std::strerror(e));
    }
    ::close(fd);
    return ntohs(addr.sin_port);
}

bool accepts(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in addr = loopback(port);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

std::string find_memcached() {
    if (::access("/usr/bin/memcached", X_OK) == 0) return "/usr/bin/memcached";
    return "memcached";  // execvp searches PATH
}

}  // namespace

pid_t EmbeddedMemcached::running_pid() noexcept {
    return g_running_pid.load();
}

EmbeddedMemcached::EmbeddedMemcached() : binary_(find_memcached()) {
    std::string why;
    // The port can be taken between choosing it and memcached's bind: try a few.
    for (int attempt = 0; attempt < 5; ++attempt) {
        port_ = free_loopback_port();
        if (spawn_and_wait(why)) return;
        stop();
    }
    throw std::runtime_error("cannot start " + binary_ + ": " + why);
}

EmbeddedMemcached::~EmbeddedMemcached() {
    stop();
}

bool EmbeddedMemcached::spawn_and_wait(std::string& why) {
    std::vector<std::string> args = {binary_, "-l", "127.0.0.1", "-p", std::to_string(port_),
                                     "-U",    "0"};
    if (::geteuid() == 0) {  // memcached refuses to run as root without -u
        args.emplace_back("-u");
        args.emplace_back("root");
    }
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        why = std::string("fork: ") + std::strerror(errno);
        return false;
    }
    if (pid == 0) {
        // Child: only async-signal-safe calls until exec.
        ::setpgid(0, 0);
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (::getppid() != parent) ::_exit(1);  // the parent died before prctl took effect
        const int devnull = ::open("/dev/null", O_RDWR);
        if (devnull >= 0) {
            ::dup2(devnull, STDIN_FILENO);
            ::dup2(devnull, STDOUT_FILENO);  // keep our stdout (the report) clean
        }
        ::execvp(argv[0], argv.data());
        const char msg[] = "folsom: exec memcached failed\n";
        (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
        ::_exit(127);
    }
    pid_ = pid;
    g_running_pid = pid;

    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            g_running_pid = -1;
            why = WIFEXITED(status)
                      ? "memcached exited with status " + std::to_string(WEXITSTATUS(status))
                      : "memcached was killed by signal " + std::to_string(WTERMSIG(status));
            return false;
        }
        if (accepts(port_)) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    why = "memcached did not accept connections on 127.0.0.1:" + std::to_string(port_) +
          " within 5 s";
    return false;
}

void EmbeddedMemcached::stop() noexcept {
    if (pid_ <= 0) return;
    g_running_pid = -1;
    // SIGKILL, not SIGTERM: memcached 1.6 takes about a second to wind down on SIGTERM, and a
    // private cache of benchmark keys has nothing worth a graceful exit.
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
}

}  // namespace folsom::bench
