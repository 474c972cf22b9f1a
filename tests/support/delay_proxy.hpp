// DelayProxy: a loopback TCP relay that holds every byte for a configurable time before passing
// it on, in both directions: network latency where the kernel has no netem qdisc to add it.
// A byte's delay is fixed when it arrives, so lowering the delay does not reorder the stream.
#pragma once

#include "support/loopback_listener.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

namespace folsom::test {

class DelayProxy {
  public:
    /// Listens on a free 127.0.0.1 port (of the calling thread's network namespace) and relays
    /// every connection to 127.0.0.1:upstream_port.
    explicit DelayProxy(std::uint16_t upstream_port);
    ~DelayProxy();
    DelayProxy(const DelayProxy&) = delete;
    DelayProxy& operator=(const DelayProxy&) = delete;

    std::uint16_t port() const noexcept { return listener_.port(); }
    /// "127.0.0.1:<port>"
    std::string address() const { return listener_.address(); }

    /// One-way delay for bytes that arrive from now on (a round trip takes twice as long).
    void set_delay(std::chrono::milliseconds d) noexcept { delay_ms_ = d.count(); }
    /// Connections accepted so far (each reconnect of the client is one more).
    std::size_t accepted() const noexcept { return accepted_; }

  private:
    void run();

    LoopbackListener listener_;
    const std::uint16_t upstream_;
    std::atomic<bool> stop_{false};
    std::atomic<long long> delay_ms_{0};
    std::atomic<std::size_t> accepted_{0};
    std::thread thread_;
};

}  // namespace folsom::test
