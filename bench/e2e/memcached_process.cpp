#include "e2e/memcached_process.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace folsom::bench {
namespace {

sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return addr;
}

std::uint16_t free_loopback_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error("socket() failed");
    sockaddr_in addr = loopback(0);
    socklen_t len = sizeof addr;
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
    ::close(fd);
    if (!ok) throw std::runtime_error("no free loopback port");
    return ntohs(addr.sin_port);
}

bool accepts_connections(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in addr = loopback(port);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

bool accepts_connections(const std::string& socket_path) {
    sockaddr_un addr{};
    if (socket_path.size() >= sizeof addr.sun_path) return false;
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

}  // namespace

bool pin_to_cpu(int cpu) noexcept {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return ::sched_setaffinity(0, sizeof set, &set) == 0;
}

std::string cpu_affinity() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return "?";
    std::string out;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (!CPU_ISSET(c, &set)) continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set))
            ++last;
        out += (out.empty() ? "" : ",") + std::to_string(c) +
               (last > c ? "-" + std::to_string(last) : "");
        c = last;
    }
    return out;
}

std::string load_average() {
    std::ifstream f("/proc/loadavg");
    std::string one, five, fifteen;
    if (!(f >> one >> five >> fifteen)) return "?";
    return one + " " + five + " " + fifteen;
}

MemcachedProcess::MemcachedProcess(int cpu, std::string binary) : binary_(std::move(binary)) {
    // The port can be taken between free_loopback_port() and memcached's bind: retry.
    for (int attempt = 0; attempt < 5; ++attempt) {
        port_ = free_loopback_port();
        spawn(cpu);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (std::chrono::steady_clock::now() < deadline) {
            if (accepts_connections(port_)) return;
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {  // exited (port taken?)
                pid_ = -1;
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        stop();
    }
    throw std::runtime_error("could not start " + binary_ + " on a loopback port");
}

MemcachedProcess::MemcachedProcess(int cpu, OnUnixSocket, std::string binary)
    : binary_(std::move(binary)) {
    char pattern[] = "/tmp/folsom-bench-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    socket_path_ = dir_ + "/memcached.sock";
    spawn(cpu);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
        if (accepts_connections(socket_path_)) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    stop();
    throw std::runtime_error("could not start " + binary_ + " on the Unix socket " + socket_path_);
}

MemcachedProcess::~MemcachedProcess() {
    stop();
}

void MemcachedProcess::spawn(int cpu) {
    std::vector<std::string> args = {binary_, "-U", "0", "-t", "1"};
    if (socket_path_.empty())
        args.insert(args.end(), {"-l", "127.0.0.1", "-p", std::to_string(port_)});
    else
        args.insert(args.end(), {"-s", socket_path_});
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
    if (pid < 0) throw std::runtime_error("fork() failed");
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(1);  // the benchmark died before prctl
        if (cpu >= 0 && !pin_to_cpu(cpu)) ::_exit(126);
        ::execv(argv[0], argv.data());
        std::fprintf(stderr, "exec %s failed: %s\n", argv[0], std::strerror(errno));
        ::_exit(127);
    }
    pid_ = pid;
}

void MemcachedProcess::stop() noexcept {
    stop_process();
    if (!dir_.empty()) {
        ::unlink(socket_path_.c_str());
        ::rmdir(dir_.c_str());
        dir_.clear();
    }
}

void MemcachedProcess::stop_process() noexcept {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100; ++i) {
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
}

}  // namespace folsom::bench
