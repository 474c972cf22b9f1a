// A real memcached process for integration tests: started on a free loopback port, stopped by
// PID. Never a mock where a real server can run.
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

namespace folsom::test {

/// A free TCP port on 127.0.0.1 (bound and released; a tiny race is accepted).
std::uint16_t free_loopback_port();

/// Waits until something accepts TCP connections on 127.0.0.1:port. False on timeout.
bool wait_until_listening(std::uint16_t port, int timeout_ms = 5000);

class MemcachedServer {
  public:
    /// Starts `memcached -l 127.0.0.1 -p <free port> -U 0 <extra_args>` and waits until it
    /// accepts connections. Throws std::runtime_error when memcached cannot be started.
    explicit MemcachedServer(std::vector<std::string> extra_args = {});
    /// Starts on a given port (e.g. one a client was already told about).
    MemcachedServer(std::uint16_t port, std::vector<std::string> extra_args);
    ~MemcachedServer();
    MemcachedServer(const MemcachedServer&) = delete;
    MemcachedServer& operator=(const MemcachedServer&) = delete;

    std::uint16_t port() const noexcept { return port_; }
    /// "127.0.0.1:<port>"
    std::string address() const;
    pid_t pid() const noexcept { return pid_; }
    bool running() const noexcept { return pid_ > 0; }

    /// SIGKILL and reap. No-op when not running.
    void kill();
    /// Starts again on the same port (after kill()).
    void restart();
    /// SIGSTOP / SIGCONT: the process keeps its sockets but stops answering.
    void freeze();
    void thaw();

  private:
    void spawn();

    std::uint16_t port_ = 0;
    pid_t pid_ = -1;
    std::vector<std::string> extra_args_;
};

/// Sends `command` on a fresh blocking loopback connection and returns everything the server
/// answers until `terminator` is seen at the end (e.g. "END\r\n") or 5 s pass. For checking
/// the server's own view (stats, raw gets) independently of the client under test.
std::string raw_request(std::uint16_t port, const std::string& command,
                        const std::string& terminator = "\r\n");

/// Sends one binary-protocol packet on a fresh blocking loopback connection and returns the
/// first whole reply packet (24-byte header and body), or what arrived within 5 s.
std::string raw_binary_request(std::uint16_t port, const std::string& packet);

/// Parses "STAT name value" lines of a `stats` reply; returns the value of `name` or -1.
long long stat_value(const std::string& stats_reply, const std::string& name);

}  // namespace folsom::test
