// EmbeddedMemcached: a private memcached for `folsom bench` when no server was named.
//
// Runs Debian's /usr/bin/memcached (or `memcached` on PATH) as
//   memcached -l 127.0.0.1 -p <free port> -U 0 [-u root when running as root]
// and waits until it accepts connections. It is stopped by PID — never by name — when the
// object goes away, and also when this process dies unexpectedly (PR_SET_PDEATHSIG). The
// child gets its own process group so a terminal's Ctrl-C reaches only folsom, which then
// stops the run cleanly and the server after it.
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>

namespace folsom::bench {

class EmbeddedMemcached {
  public:
    /// Starts the server. Throws std::runtime_error with a one-line reason when it cannot.
    EmbeddedMemcached();
    ~EmbeddedMemcached();
    EmbeddedMemcached(const EmbeddedMemcached&) = delete;
    EmbeddedMemcached& operator=(const EmbeddedMemcached&) = delete;

    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
    std::uint16_t port() const noexcept { return port_; }
    pid_t pid() const noexcept { return pid_; }
    const std::string& binary() const noexcept { return binary_; }

    /// SIGKILL and reap. Idempotent.
    void stop() noexcept;

    /// The PID of the running embedded server, or -1: for a signal handler that must kill it
    /// before the process exits (kill() is async-signal-safe).
    static pid_t running_pid() noexcept;

  private:
    bool spawn_and_wait(std::string& why);

    std::string binary_;
    std::uint16_t port_ = 0;
    pid_t pid_ = -1;
};

}  // namespace folsom::bench
