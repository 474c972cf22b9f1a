// DiscoveringCore: a ClientCore decorator that keeps a ServerCore's server set in step with a
// Discovery (DNS SRV, or a list the program maintains), refreshing on the client's executor.
//
// Routing is untouched: the ServerCore swaps its immutable routing table when set_servers()
// changes it, so requests in flight keep their server and no request is lost in a switch.
#pragma once

#include "folsom/cluster/discovery.hpp"

#include "cluster/server_core.hpp"

#include <asio/steady_timer.hpp>

#include <memory>
#include <mutex>

namespace folsom::detail {

class DiscoveringCore final : public ClientCore,
                              public std::enable_shared_from_this<DiscoveringCore> {
  public:
    DiscoveringCore(std::shared_ptr<ServerCore> inner, const Options& options);

    /// Resolves at once, then every discovery_interval. Call once, after construction.
    void start();

    asio::any_io_executor executor() const noexcept override { return inner_->executor(); }
    std::size_t server_count() const noexcept override { return inner_->server_count(); }
    std::size_t server_for(std::string_view key) const noexcept override {
        return inner_->server_for(key);
    }
    void servers_for(std::span<const std::string_view> keys,
                     std::span<std::uint32_t> out) const noexcept override {
        inner_->servers_for(keys, out);
    }
    const std::string& server_name(std::size_t i) const noexcept override {
        return inner_->server_name(i);
    }
    std::vector<std::size_t> broadcast_servers() const override {
        return inner_->broadcast_servers();
    }
    std::size_t max_value_size() const noexcept override { return inner_->max_value_size(); }
    void submit(std::size_t server, Operation& op, std::uint32_t part,
                const Request& request) override {
        inner_->submit(server, op, part, request);
    }
    void shutdown() override;
    void notify_when_ready(std::chrono::milliseconds timeout,
                           std::function<void(std::error_code)> done) override {
        inner_->notify_when_ready(timeout, std::move(done));
    }

    /// Completed resolutions so far (for tests).
    std::size_t resolutions() const noexcept {
        return resolutions_.load(std::memory_order_acquire);
    }

  private:
    void refresh();
    void schedule();

    std::shared_ptr<ServerCore> inner_;
    std::shared_ptr<cluster::Discovery> discovery_;
    const std::chrono::milliseconds interval_;
    asio::steady_timer timer_;  // touched only under mu_
    std::mutex mu_;
    bool stopped_ = false;
    cluster::Discovery::Cancel cancel_;
    std::atomic<std::size_t> resolutions_{0};
};

}  // namespace folsom::detail
