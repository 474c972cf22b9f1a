// A real memcached process for integration tests: started on a free loopback port (or a Unix
// socket in a temporary directory), stopped by PID. Never a mock where a real server can run.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace folsom::test {

/// A free TCP port on 127.0.0.1 (bound and released; a tiny race is accepted).
std::uint16_t free_loopback_port();

/// Waits until something accepts TCP connections on 127.0.0.1:port. False on timeout.
bool wait_until_listening(std::uint16_t port, int timeout_ms = 5000);

/// Waits until something accepts connections on the Unix socket at `path`. False on timeout.
bool wait_until_listening(const std::string& path, int timeout_ms = 5000);

/// A fresh private directory under $TMPDIR (or /tmp), removed with everything in it when the
/// object goes. For Unix socket paths, which must stay short (max_unix_socket_path).
class TempDir {
  public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const noexcept { return path_; }
    /// path() + "/" + name
    std::string file(const std::string& name) const { return path_ + "/" + name; }

  private:
    std::string path_;
};

/// Tag: start memcached on a Unix domain socket instead of a loopback port.
struct UnixSocket {};
inline constexpr UnixSocket on_unix_socket{};

class MemcachedServer {
  public:
    /// Starts `memcached -l 127.0.0.1 -p <free port> -U 0 <extra_args>` and waits until it
    /// accepts connections. Throws std::runtime_error when memcached cannot be started.
    explicit MemcachedServer(std::vector<std::string> extra_args = {});
    /// Starts on a given port (e.g. one a client was already told about).
    MemcachedServer(std::uint16_t port, std::vector<std::string> extra_args);
    /// Starts `memcached -s <tmpdir>/memcached.sock -U 0 <extra_args>` (no network) in a
    /// temporary directory of its own, removed (socket file included) when the server goes.
    MemcachedServer(UnixSocket, std::vector<std::string> extra_args = {});
    /// Starts `memcached -s <path>` at a path the test chose (a client may already be trying
    /// it); the path's directory must exist and is the test's to remove.
    MemcachedServer(UnixSocket, std::string path, std::vector<std::string> extra_args);
    ~MemcachedServer();
    MemcachedServer(const MemcachedServer&) = delete;
    MemcachedServer& operator=(const MemcachedServer&) = delete;

    /// The TCP port; 0 for a Unix socket server.
    std::uint16_t port() const noexcept { return port_; }
    /// "127.0.0.1:<port>", or the socket's path: the server as Options::servers names it.
    std::string address() const;
    bool is_unix_socket() const noexcept { return !socket_path_.empty(); }
    /// The socket's path ("" for a TCP server).
    const std::string& socket_path() const noexcept { return socket_path_; }
    pid_t pid() const noexcept { return pid_; }
    bool running() const noexcept { return pid_ > 0; }

    /// SIGKILL and reap. No-op when not running.
    void kill();
    /// Starts again on the same port or socket path (after kill()).
    void restart();
    /// SIGSTOP / SIGCONT: the process keeps its sockets but stops answering.
    void freeze();
    void thaw();

  private:
    void spawn();
    bool wait_listening(int timeout_ms) const;

    std::uint16_t port_ = 0;
    std::unique_ptr<TempDir> dir_;  // a Unix socket server's directory
    std::string socket_path_;
    pid_t pid_ = -1;
    std::vector<std::string> extra_args_;
};

/// A memcached on a loopback port (`over_unix_socket` false) or on a Unix socket in a temporary
/// directory (`over_unix_socket` true), with `extra_args`.
std::unique_ptr<MemcachedServer> start_memcached(bool over_unix_socket,
                                                 std::vector<std::string> extra_args = {});

/// raw_request / raw_binary_request to `server`, over TCP or its Unix socket.
std::string raw_request(const MemcachedServer& server, const std::string& command,
                        const std::string& terminator = "\r\n");
std::string raw_binary_request(const MemcachedServer& server, const std::string& packet);
/// raw_request over the Unix socket at `path`.
std::string raw_request_unix(const std::string& path, const std::string& command,
                             const std::string& terminator = "\r\n");

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
