#include "e2e/memcached_process.hpp"

#include "bench/memcached_launch.hpp"

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
    const auto where =
        socket_path_.empty() ? memcached_listen_args(port_) : memcached_socket_args(socket_path_);
    args.insert(args.end(), where.begin(), where.end());
    SpawnOptions options;
    options.cpu = cpu;
    pid_ = spawn_process(args, options);
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
    bench::stop_process(pid_, std::chrono::seconds(1));
    pid_ = -1;
}

}  // namespace folsom::bench
