// RequestMeter: what one connection tells Options::metrics about its requests -- each one
// queued to be sent, each one completed (with its latency and outcome), each one refused before
// it was sent. The connection owns it and lends it to its in-flight CommandQueue, which
// records a command's completion where the driver decides it (complete_front), before the
// caller sees the result. So a completion is counted on the way up, by a plain object below
// the connection, not by a call back up into the connection.
//
// Off (no Options::metrics) it is one null pointer: every hook is one check.
#pragma once

#include "folsom/detail/operation.hpp"
#include "folsom/metrics.hpp"

#include <chrono>
#include <cstdint>
#include <system_error>

namespace folsom::net {

struct Command;

class RequestMeter {
  public:
    /// Reports to `m` (null: nothing) under server id `server`. Set before use; `m` must
    /// outlive the meter (Options::metrics keeps it alive).
    void attach(Metrics* m, std::uint32_t server) noexcept {
        sink_ = m;
        server_ = server;
    }
    /// Where reports go; null when metrics are off.
    Metrics* sink() const noexcept { return sink_; }
    /// The server id reports carry.
    std::uint32_t server() const noexcept { return server_; }

    /// `c` was queued to be sent: stamps it (Command::queued_ns) for its latency. Only when
    /// sink() is set.
    void sent(Command& c) const noexcept;
    /// `c` completed with `done` (a barrier, the connection's own, is not counted). Only when
    /// sink() is set.
    void completed(const Command& c, const detail::Completion& done) const noexcept;
    /// `r` failed with `ec` before anything was sent. Only when sink() is set.
    void refused(const detail::Request& r, std::error_code ec) const noexcept;

  private:
    static std::int64_t now_ns() noexcept {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }

    Metrics* sink_ = nullptr;
    std::uint32_t server_ = 0;
};

}  // namespace folsom::net
