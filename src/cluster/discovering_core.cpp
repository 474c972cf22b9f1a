#include "cluster/discovering_core.hpp"

namespace folsom::detail {

DiscoveringCore::DiscoveringCore(std::shared_ptr<ServerCore> inner, const Options& options)
    : ForwardingCore(std::move(inner), options.max_outstanding_requests),
      discovery_(options.discovery),
      tls_(options.tls),
      interval_(std::max(options.discovery_interval, std::chrono::milliseconds(1))),
      timer_(inner_->executor()) {}

void DiscoveringCore::start() {
    refresh();
}

void DiscoveringCore::refresh() {
    std::lock_guard lk(mu_);
    if (stopped_) return;
    // The handler holds only a weak reference: a client dropped mid-resolution goes away.
    cancel_ = discovery_->resolve_for_client(
        inner_->executor(), tls_,
        [weak = weak_from_this()](std::error_code ec, std::vector<ServerAddress> servers) {
            auto self = weak.lock();
            if (!self) return;
            // A failed or empty answer keeps the current set: a DNS hiccup must not empty
            // the cluster.
            if (!ec && !servers.empty()) self->inner_->set_servers(std::move(servers));
            self->resolutions_.fetch_add(1, std::memory_order_acq_rel);
            self->schedule();
        });
}

void DiscoveringCore::schedule() {
    std::lock_guard lk(mu_);
    if (stopped_) return;
    cancel_ = nullptr;
    timer_.expires_after(interval_);
    timer_.async_wait([weak = weak_from_this()](const std::error_code& ec) {
        if (ec) return;
        if (auto self = weak.lock()) self->refresh();
    });
}

void DiscoveringCore::shutdown() {
    cluster::Discovery::Cancel cancel;
    {
        std::lock_guard lk(mu_);
        stopped_ = true;
        // A pending timer or query would keep the executor busy (and a BlockingClient from
        // joining) for up to a whole interval.
        timer_.cancel();
        cancel = std::move(cancel_);
    }
    if (cancel) cancel();
    inner_->shutdown();
}

}  // namespace folsom::detail
