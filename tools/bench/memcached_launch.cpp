#include "bench/memcached_launch.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
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

namespace folsom::bench {
namespace {

sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return addr;
}

void add_user_if_root(std::vector<std::string>& args) {
    if (::geteuid() != 0) return;
    args.emplace_back("-u");
    args.emplace_back("root");
}

}  // namespace

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

bool accepts_connections(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in addr = loopback(port);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

bool accepts_connections(const std::string& path) {
    sockaddr_un addr{};
    if (path.size() >= sizeof addr.sun_path) return false;
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.data(), path.size());
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

std::vector<std::string> memcached_listen_args(std::uint16_t port) {
    std::vector<std::string> args = {"-l", "127.0.0.1", "-p", std::to_string(port)};
    add_user_if_root(args);
    return args;
}

std::vector<std::string> memcached_socket_args(const std::string& path) {
    std::vector<std::string> args = {"-s", path};
    add_user_if_root(args);
    return args;
}

pid_t spawn_process(const std::vector<std::string>& args, const SpawnOptions& options) {
    std::vector<std::string> owned = args;
    std::vector<char*> argv;
    for (auto& a : owned)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        // Child: only async-signal-safe calls until exec.
        if (options.own_process_group) ::setpgid(0, 0);
        ::prctl(PR_SET_PDEATHSIG, options.death_signal);
        if (::getppid() != parent) ::_exit(1);  // the parent died before prctl took effect
        if (options.cpu >= 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(options.cpu, &set);
            if (::sched_setaffinity(0, sizeof set, &set) != 0) ::_exit(126);
        }
        if (options.quiet_stdout) {
            const int devnull = ::open("/dev/null", O_RDWR);
            if (devnull >= 0) {
                ::dup2(devnull, STDIN_FILENO);
                ::dup2(devnull, STDOUT_FILENO);
            }
        }
        ::execvp(argv[0], argv.data());
        const char msg[] = "exec failed: ";
        (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)!::write(STDERR_FILENO, argv[0], std::strlen(argv[0]));
        (void)!::write(STDERR_FILENO, "\n", 1);
        ::_exit(127);
    }
    return pid;
}

void stop_process(pid_t pid, std::chrono::milliseconds grace) noexcept {
    if (pid <= 0) return;
    ::kill(pid, SIGCONT);
    int status = 0;
    if (grace.count() > 0) {
        ::kill(pid, SIGTERM);
        const auto deadline = std::chrono::steady_clock::now() + grace;
        while (std::chrono::steady_clock::now() < deadline) {
            if (::waitpid(pid, &status, WNOHANG) == pid) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
}

}  // namespace folsom::bench
