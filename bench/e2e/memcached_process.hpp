// The memcached the end-to-end benchmark runs against: started on a free loopback port with
// `/usr/bin/memcached -l 127.0.0.1 -p <port> -U 0 -t 1` (plus `-u root` when run as root),
// optionally pinned to one CPU, and stopped by PID when this object goes away. Or, for the
// Unix-socket rows, `-s <private temporary directory>/memcached.sock` (no network). The child also
// dies with the benchmark (PR_SET_PDEATHSIG), so an interrupted run leaves no server behind.
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>

namespace folsom::bench {

/// Tag: start the server on a Unix domain socket.
struct OnUnixSocket {};

class MemcachedProcess {
  public:
    /// Starts memcached and waits until it accepts connections. `cpu` >= 0 pins it to that
    /// CPU. Throws std::runtime_error when it cannot be started.
    explicit MemcachedProcess(int cpu, std::string binary = "/usr/bin/memcached");
    /// Starts memcached on a Unix socket in a fresh directory under /tmp (removed by stop()).
    MemcachedProcess(int cpu, OnUnixSocket, std::string binary = "/usr/bin/memcached");
    ~MemcachedProcess();
    MemcachedProcess(const MemcachedProcess&) = delete;
    MemcachedProcess& operator=(const MemcachedProcess&) = delete;

    std::uint16_t port() const noexcept { return port_; }
    /// The Unix socket's path ("" for a TCP server).
    const std::string& socket_path() const noexcept { return socket_path_; }
    pid_t pid() const noexcept { return pid_; }
    /// SIGTERM, then SIGKILL if it has not gone within a second; reaps it. Idempotent.
    void stop() noexcept;

  private:
    void spawn(int cpu);
    void stop_process() noexcept;

    std::string binary_;
    std::uint16_t port_ = 0;
    std::string dir_;  // the Unix socket's directory
    std::string socket_path_;
    pid_t pid_ = -1;
};

/// Pins the calling process (every thread created afterwards too) to `cpu`. False on error.
bool pin_to_cpu(int cpu) noexcept;
/// The CPUs this process may run on, e.g. "0" under `taskset -c 0`, or "0-1".
std::string cpu_affinity();
/// The first three fields of /proc/loadavg ("?" when unreadable): how busy the machine was.
std::string load_average();

}  // namespace folsom::bench
