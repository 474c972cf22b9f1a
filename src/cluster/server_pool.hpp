// ServerPool: the connections to one server, and what the cluster layer knows of its health.
//
// A pool spreads requests round-robin over Options::connections_per_server pipelined
// connections. Their state changes (reported on each connection's strand) are folded into one
// per-server state: the user's listener hears about the server, not about each socket, and the
// failover policy marks the server dead when its last connection goes down.
#pragma once

#include "folsom/connection_state.hpp"
#include "folsom/detail/operation.hpp"
#include "folsom/options.hpp"
#include "folsom/server_address.hpp"

#include "net/connection.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace folsom::cluster {

/// The health of one server, shared by its connections' listeners. Kept apart from the pool
/// so that connections (which hold their listener) never own the pool that owns them.
class ServerHealth {
  public:
    ServerHealth(std::string name, std::size_t connections, const Options& options);

    /// One connection's new state (on that connection's strand).
    void on_connection_state(std::size_t connection, net::ConnectionState state);

    /// False while failover has the server marked dead. Any thread; never allocates.
    bool routable() const noexcept {
        const std::int64_t until = dead_until_.load(std::memory_order_relaxed);
        return until == 0 || now_ns() >= until;
    }

    /// The folded state last reported (for tests and diagnostics).
    ConnectionState state() const;

  private:
    static std::int64_t now_ns() noexcept {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }

    const std::string name_;
    const bool failover_;
    const std::chrono::nanoseconds dead_timeout_;
    const std::uint32_t failure_limit_;  // Options::Failover::failure_limit, at least 1
    const std::function<void(const std::string&, ConnectionState)> listener_;

    mutable std::mutex mu_;  // connections of one server may run on different threads
    std::vector<net::ConnectionState> states_;
    std::optional<ConnectionState> reported_;
    std::uint32_t failures_ = 0;  // consecutive failures since a connection was last up
    std::atomic<std::int64_t> dead_until_{0};  // steady-clock ns; 0: alive
};

class ServerPool {
  public:
    /// Creates the connections (not yet started). `id` is the server's stable index.
    ServerPool(asio::any_io_executor ex, ServerAddress address, std::size_t id,
               const Options& options);
    ~ServerPool();
    ServerPool(const ServerPool&) = delete;
    ServerPool& operator=(const ServerPool&) = delete;

    void start();
    /// Sends one part on the next connection (round-robin). Any thread.
    void submit(detail::Operation& op, std::uint32_t part, const detail::Request& request) {
        const std::size_t n = connections_.size();
        if (n == 1) {
            connections_[0]->submit(op, part, request);
            return;
        }
        // Round robin over the connections that are connected: one still reconnecting (the
        // others of a restarted server came back first) would fail the request at once with
        // not_connected although its server is up. With none connected, the request goes
        // where the round robin says, and fails fast or waits as that connection's state says.
        const std::size_t first = next_.fetch_add(1, std::memory_order_relaxed) % n;
        for (std::size_t k = 0, i = first; k < n; ++k, i = i + 1 == n ? 0 : i + 1) {
            if (connections_[i]->state() == net::ConnectionState::connected) {
                connections_[i]->submit(op, part, request);
                return;
            }
        }
        connections_[first]->submit(op, part, request);
    }
    /// Closes every connection for good (their requests fail with errc::closed). Idempotent.
    void close();
    bool closed() const noexcept { return closed_.load(std::memory_order_acquire); }
    /// True when at least one of the server's connections is connected (any thread).
    bool any_connected() const noexcept {
        for (const auto& c : connections_)
            if (c->state() == net::ConnectionState::connected) return true;
        return false;
    }

    /// The refusal (errc::tls_error, errc::auth_failed) every connection of this server got
    /// on its last connect, or empty when one of them was not refused.
    std::error_code refusal() const {
        std::error_code r;
        for (const auto& c : connections_) {
            r = c->refusal();
            if (!r) return r;
        }
        return r;
    }

    std::size_t id() const noexcept { return id_; }
    const ServerAddress& address() const noexcept { return address_; }
    const std::string& name() const noexcept { return name_; }
    const ServerHealth& health() const noexcept { return *health_; }

  private:
    const ServerAddress address_;
    const std::size_t id_;
    const std::string name_;
    std::shared_ptr<ServerHealth> health_;
    std::vector<std::shared_ptr<net::Connection>> connections_;
    std::atomic<std::size_t> next_{0};
    std::atomic<bool> closed_{false};
};

}  // namespace folsom::cluster
