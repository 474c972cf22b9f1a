// FakeServer: a scripted memcached peer on a loopback port, for tests that need a server to
// misbehave in exact ways (split replies, garbage, a close mid-value, silence, a reset).
//
// Each accepted connection runs the script on its own thread with a FakeConnection. The
// destructor shuts every socket down and joins every thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace folsom::test {

class FakeConnection {
  public:
    FakeConnection(std::shared_ptr<std::atomic<int>> slot, std::size_t index)
        : slot_(std::move(slot)), fd_(slot_->load()), index_(index) {}

    /// Which accepted connection this is (0 for the first).
    std::size_t index() const noexcept { return index_; }
    /// Reads one request line (without "\r\n"); empty when the peer closed.
    std::string read_line();
    /// Reads exactly n bytes (fewer when the peer closed).
    std::string read_exact(std::size_t n);
    /// Reads a whole text-protocol request: the line, plus the data block of a storage command.
    std::string read_request();
    void write(std::string_view bytes);
    /// Writes one byte at a time with `gap` between them.
    void write_slowly(std::string_view bytes, std::chrono::milliseconds gap);
    /// Closes gracefully (FIN).
    void close();
    /// Aborts the connection (RST).
    void reset();
    /// Blocks until the peer closes or the server stops; returns at once if already closed.
    void wait_for_close();

  private:
    std::shared_ptr<std::atomic<int>> slot_;  // shared with the server; -1 once closed here
    int fd_;
    std::size_t index_;
    std::string buffered_;
};

class FakeServer {
  public:
    using Script = std::function<void(FakeConnection&)>;
    explicit FakeServer(Script script);
    ~FakeServer();
    FakeServer(const FakeServer&) = delete;
    FakeServer& operator=(const FakeServer&) = delete;

    std::uint16_t port() const noexcept { return port_; }
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
    std::size_t accepted() const noexcept { return accepted_.load(); }

  private:
    void accept_loop();

    Script script_;
    int listen_fd_ = -1;
    std::uint16_t port_ = 0;
    std::atomic<bool> stopping_{false};
    std::atomic<std::size_t> accepted_{0};
    std::thread acceptor_;
    std::mutex mu_;
    std::vector<std::shared_ptr<std::atomic<int>>> fds_;
    std::vector<std::thread> sessions_;
};

}  // namespace folsom::test
