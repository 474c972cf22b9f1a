#include "bench/embedded_memcached.hpp"

#include "bench/memcached_launch.hpp"

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
    std::vector<std::string> args = {binary_};
    const auto where = memcached_listen_args(port_);
    args.insert(args.end(), where.begin(), where.end());
    args.insert(args.end(), {"-U", "0"});
    SpawnOptions options;
    options.death_signal = SIGTERM;
    options.own_process_group = true;
    options.quiet_stdout = true;  // keep our stdout (the report) clean
    pid_t pid = -1;
    try {
        pid = spawn_process(args, options);
    } catch (const std::exception& e) {
        why = e.what();
        return false;
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
        if (accepts_connections(port_)) return true;
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
    stop_process(pid_, std::chrono::milliseconds(0));
    pid_ = -1;
}

}  // namespace folsom::bench
