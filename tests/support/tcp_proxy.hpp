// TcpProxy: a loopback TCP relay between the client under test and a real server, that a test
// can make misbehave in ways a real server cannot be asked to: swallow requests, then drop
// exactly the connections that carried them (so a request is lost in flight on one connection
// while the others stay healthy).
#pragma once

#include "support/loopback_listener.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace folsom::test {

class TcpProxy {
  public:
    /// Listens on a free 127.0.0.1 port and relays every connection to 127.0.0.1:upstream.
    explicit TcpProxy(std::uint16_t upstream_port);
    ~TcpProxy();
    TcpProxy(const TcpProxy&) = delete;
    TcpProxy& operator=(const TcpProxy&) = delete;

    std::uint16_t port() const noexcept { return listener_.port(); }
    std::string address() const { return listener_.address(); }

    /// While on, bytes from clients are read and thrown away (never reach the server), and
    /// the connections they came on are remembered.
    void swallow(bool on);
    /// Closes the client side of every connection that swallowed bytes, and stops swallowing
    /// (in one step, so a retry the drop provokes is relayed). Returns how many it closed.
    std::size_t drop_swallowing();
    /// Client connections currently relayed.
    std::size_t connections();
    /// Bytes each current client connection has sent (in accept order).
    std::vector<std::size_t> bytes_from_clients();

  private:
    struct Pair {
        int client = -1, server = -1;
        bool swallowed = false;
        std::size_t bytes = 0;
    };
    void run();
    void call(std::function<void()> f);  // runs f on the relay thread, waits for it

    LoopbackListener listener_;
    const std::uint16_t upstream_;
    std::atomic<bool> stop_{false};
    bool swallow_ = false;  // relay thread only
    std::vector<Pair> pairs_;

    std::mutex mu_;
    std::condition_variable cv_;
    std::function<void()> task_;
    bool task_done_ = false;
    std::thread thread_;
};

}  // namespace folsom::test
