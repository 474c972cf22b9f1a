// ServerCore: the ClientCore that talks to real servers — one ServerPool per server, keys routed
// by an immutable RoutingTable that is swapped atomically when the server set changes.
#pragma once

#include "folsom/detail/client_core.hpp"
#include "folsom/error.hpp"
#include "folsom/metrics.hpp"
#include "folsom/options.hpp"
#include "folsom/server_address.hpp"

#include "cluster/routing_table.hpp"
#include "cluster/server_pool.hpp"

#include <asio/any_io_executor.hpp>
#include <asio/steady_timer.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace folsom::detail {

class ServerCore final : public ClientCore, public std::enable_shared_from_this<ServerCore> {
  public:
    /// Starts connecting to `servers` (may be empty: every request then fails with
    /// not_connected until set_servers() gives some).
    ServerCore(asio::any_io_executor ex, const Options& options,
               std::vector<ServerAddress> servers);
    ~ServerCore() override;

    asio::any_io_executor executor() const noexcept override { return ex_; }
    std::size_t server_count() const noexcept override { return table().index_count(); }
    std::size_t server_for(std::string_view key) const noexcept override {
        return table().server_for(key);
    }
    void servers_for(std::span<const std::string_view> keys,
                     std::span<std::uint32_t> out) const noexcept override {
        table().servers_for(keys, out);
    }
    const std::string& server_name(std::size_t i) const noexcept override;
    std::vector<std::size_t> broadcast_servers() const override;
    std::size_t max_value_size() const noexcept override { return options_.max_value_size; }

    /// Places the key and submits, on one load of the routing table.
    void send(Operation& op, std::uint32_t part, const Request& request) override {
        const cluster::RoutingTable& t = table();
        submit_to(t, t.server_for(request.key), op, part, request);
    }
    void submit(std::size_t server, Operation& op, std::uint32_t part,
                const Request& request) override {
        submit_to(table(), server, op, part, request);
    }

    void shutdown() override;

    /// Ready once any server has a connected connection (as Folsom's ConnectFuture).
    void notify_when_ready(std::chrono::milliseconds timeout,
                           std::function<void(std::error_code)> done) override;

    /// Replaces the server set (any thread): servers already known (by host:port) keep their
    /// pool, index and connections (a new weight only changes the ring); new ones are connected;
    /// removed ones leave the ring at once and are closed after Options::discovery_drain_delay, so
    /// requests already routed to them complete. The ring follows the order given; a repeated
    /// host:port counts once. Returns false when nothing changed.
    bool set_servers(std::vector<ServerAddress> servers);

    /// The current members, in ring order (for tests and diagnostics).
    std::vector<ServerAddress> servers() const;

  private:
    /// Counts a request that had no server to go to (Metrics::no_server).
    static void report_unroutable(Metrics& m, const Request& request) noexcept;

    const cluster::RoutingTable& table() const noexcept {
        return *table_.load(std::memory_order_acquire);
    }
    void submit_to(const cluster::RoutingTable& t, std::size_t server, Operation& op,
                   std::uint32_t part, const Request& request) {
        if (cluster::ServerPool* p = t.pool(server)) {
            p->submit(op, part, request);
            return;
        }
        if (Metrics* m = options_.metrics.get()) report_unroutable(*m, request);
        op.on_complete(part, failure(make_error_code(errc::not_connected)));
    }
    // Both under mu_.
    void publish(std::vector<cluster::ServerPool*> members, std::vector<ServerAddress> addresses);
    void schedule_drain(cluster::ServerPool* pool);
    void cancel_drain(cluster::ServerPool* pool);

    asio::any_io_executor ex_;
    const Options options_;
    std::atomic<const cluster::RoutingTable*> table_{nullptr};

    mutable std::mutex mu_;  // guards everything below; never taken on the request path
    bool shut_down_ = false;
    // Every pool ever created, by index; a replaced pool stays alive (closed) because an old
    // table may still point at it. Published tables are never freed before the core either:
    // a reader holds no reference, so this is what makes the lock-free lookup safe. Both grow
    // only when the server set changes (a few small objects per change).
    std::vector<std::unique_ptr<cluster::ServerPool>> retired_pools_;
    std::vector<cluster::ServerPool*> by_index_;
    std::map<std::string, std::size_t> index_of_;  // "host:port" -> index
    std::vector<std::unique_ptr<const cluster::RoutingTable>> tables_;
    std::vector<std::unique_ptr<cluster::ServerPool>> pools_;  // current pool of each index
    std::map<cluster::ServerPool*, std::shared_ptr<asio::steady_timer>> drains_;
};

}  // namespace folsom::detail
