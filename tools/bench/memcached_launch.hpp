// Starting and stopping a private memcached: what `folsom bench` (EmbeddedMemcached), the
// end-to-end benchmark (bench/e2e/memcached_process) and the integration tests
// (tests/support/memcached_server) share. Each says how its server is run (threads, memory,
// pinning, where its output goes); this file forks it, waits for it to listen, and stops it by
// PID, never by name. The benchmark and the tests compile this file themselves, as they do
// raw_socket.cpp, so that they build without the tools.
#pragma once

#include <chrono>
#include <csignal>
#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

namespace folsom::bench {

/// A free TCP port on 127.0.0.1: bound and released, so a server may lose a race for it (the
/// callers retry with another). Throws std::runtime_error when there is none.
std::uint16_t free_loopback_port();

/// True when something accepts a TCP connection on 127.0.0.1:port.
bool accepts_connections(std::uint16_t port);
/// True when something accepts a connection on the Unix socket at `path`.
bool accepts_connections(const std::string& path);

/// memcached's arguments for listening on 127.0.0.1:port only (-l, -p), or on the Unix socket
/// at `path` only (-s turns the network off); with `-u root` when this process runs as root,
/// since memcached refuses root without it.
std::vector<std::string> memcached_listen_args(std::uint16_t port);
std::vector<std::string> memcached_socket_args(const std::string& path);

struct SpawnOptions {
    /// The child gets this signal when this process dies (PR_SET_PDEATHSIG), so that an
    /// interrupted run or a crashed test leaves no server behind.
    int death_signal = SIGKILL;
    int cpu = -1;  ///< >= 0: the child runs pinned to that CPU
    /// The child leads a process group of its own: a terminal's Ctrl-C reaches only us.
    bool own_process_group = false;
    bool quiet_stdout = false;  ///< the child's stdin and stdout go to /dev/null
};

/// Forks and executes argv (argv[0] is looked up in PATH unless it names a path). Throws
/// std::runtime_error when fork() fails; an exec failure ends the child with status 127.
pid_t spawn_process(const std::vector<std::string>& argv, const SpawnOptions& options = {});

/// Stops `pid` and reaps it: SIGTERM, then SIGKILL if it is still there after `grace` (0:
/// SIGKILL at once). A stopped (SIGSTOP) process is continued first, so that it can die.
void stop_process(pid_t pid, std::chrono::milliseconds grace) noexcept;

}  // namespace folsom::bench
