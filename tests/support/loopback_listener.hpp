// LoopbackListener: the listening end of a test's relay (TcpProxy, DelayProxy): a socket on a
// free 127.0.0.1 port, and a pipe that wakes the relay thread's poll() when the test wants
// something of it (stop, a task). Both closed when the object goes.
#pragma once

#include <cstdint>
#include <string>

namespace folsom::test {

class LoopbackListener {
  public:
    /// Listens on a free 127.0.0.1 port (of the calling thread's network namespace). Throws
    /// std::runtime_error naming `who` when it cannot.
    explicit LoopbackListener(const char* who);
    ~LoopbackListener();
    LoopbackListener(const LoopbackListener&) = delete;
    LoopbackListener& operator=(const LoopbackListener&) = delete;

    int fd() const noexcept { return fd_; }
    std::uint16_t port() const noexcept { return port_; }
    /// "127.0.0.1:<port>"
    std::string address() const;

    /// Poll it for POLLIN beside fd(): readable after wake(). Drain it with drain_wake().
    int wake_fd() const noexcept { return wake_[0]; }
    void wake() noexcept;
    void drain_wake() noexcept;

  private:
    int fd_ = -1;
    std::uint16_t port_ = 0;
    int wake_[2] = {-1, -1};
};

/// A blocking TCP connection to 127.0.0.1:port, or -1.
int connect_to_loopback(std::uint16_t port);

}  // namespace folsom::test
