// DiscoveringCore: a ClientCore decorator that keeps a ServerCore's server set in step with a
// Discovery (DNS SRV, or a list the program maintains), refreshing on the client's executor.
//
// Routing is untouched: the ServerCore swaps its immutable routing table when set_servers()
// changes it, so requests in flight keep their server and no request is lost in a switch.
#pragma once

#include "folsom/cluster/discovery.hpp"

#include "cluster/forwarding_core.hpp"
#include "cluster/server_core.hpp"

#include <asio/steady_timer.hpp>

#include <memory>
#include <mutex>

namespace folsom::detail {

class DiscoveringCore final : public ForwardingCore<ServerCore>,
                              public std::enable_shared_from_this<DiscoveringCore> {
  public:
    DiscoveringCore(std::shared_ptr<ServerCore> inner, const Options& options);

    /// Resolves at once, then every discovery_interval. Call once, after construction.
    void start();

    void shutdown() override;

    /// Completed resolutions so far (for tests).
    std::size_t resolutions() const noexcept {
        return resolutions_.load(std::memory_order_acquire);
    }

  private:
    void refresh();
    void schedule();

    std::shared_ptr<cluster::Discovery> discovery_;
    std::optional<TlsOptions> tls_;  // the client's: a discovery endpoint speaks TLS with it
    const std::chrono::milliseconds interval_;
    asio::steady_timer timer_;  // touched only under mu_
    std::mutex mu_;
    bool stopped_ = false;
    cluster::Discovery::Cancel cancel_;
    std::atomic<std::size_t> resolutions_{0};
};

}  // namespace folsom::detail
