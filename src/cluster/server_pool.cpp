#include "cluster/server_pool.hpp"

#include "folsom/metrics.hpp"

#include "wire/protocol_driver.hpp"

#include <algorithm>

namespace folsom::cluster {
namespace {

ConnectionState to_public(net::ConnectionState s) noexcept {
    switch (s) {
        case net::ConnectionState::connecting:
            return ConnectionState::connecting;
        case net::ConnectionState::connected:
            return ConnectionState::connected;
        case net::ConnectionState::backoff:
            return ConnectionState::disconnected;
        case net::ConnectionState::closed:
            return ConnectionState::closed;
    }
    return ConnectionState::closed;
}

// The best state of any connection: a server is up while one of its connections is.
ConnectionState fold(const std::vector<net::ConnectionState>& states) noexcept {
    ConnectionState best = ConnectionState::closed;
    auto rank = [](ConnectionState s) {
        switch (s) {
            case ConnectionState::connected:
                return 3;
            case ConnectionState::connecting:
                return 2;
            case ConnectionState::disconnected:
                return 1;
            case ConnectionState::closed:
                return 0;
        }
        return 0;
    };
    for (auto s : states)
        if (rank(to_public(s)) > rank(best)) best = to_public(s);
    return best;
}

}  // namespace

ServerHealth::ServerHealth(std::string name, std::size_t connections, const Options& options)
    : name_(std::move(name)),
      failover_(options.failover.enabled),
      dead_timeout_(options.failover.dead_timeout),
      failure_limit_(std::max<std::uint32_t>(options.failover.failure_limit, 1)),
      listener_(options.on_connection_state),
      states_(connections, net::ConnectionState::connecting) {}

void ServerHealth::on_connection_state(std::size_t connection, net::ConnectionState state) {
    std::lock_guard lk(mu_);
    const net::ConnectionState before = states_[connection];
    states_[connection] = state;
    const ConnectionState folded = fold(states_);
    if (failover_) {
        if (folded == ConnectionState::connected) {
            failures_ = 0;
            dead_until_.store(0, std::memory_order_relaxed);
        } else if (state == net::ConnectionState::backoff &&
                   before != net::ConnectionState::backoff && ++failures_ >= failure_limit_) {
            // The last live connection went down, or a reconnect attempt failed, the
            // failure_limit-th time in a row: (re)start the dead period. Marking on every
            // failed attempt from then on keeps a server that stays down out of the ring, yet
            // lets it back as soon as one attempt succeeds.
            dead_until_.store(now_ns() + dead_timeout_.count(), std::memory_order_relaxed);
        }
    }
    if (reported_ == folded) return;
    reported_ = folded;
    // Under the lock, so the listener sees one server's changes in order.
    if (listener_) listener_(name_, folded);
}

ConnectionState ServerHealth::state() const {
    std::lock_guard lk(mu_);
    return reported_.value_or(ConnectionState::connecting);
}

ServerPool::ServerPool(asio::any_io_executor ex, ServerAddress address, std::size_t id,
                       const Options& options)
    : address_(std::move(address)), id_(id), name_(address_.to_string()) {
    const std::size_t n = std::max<std::size_t>(options.connections_per_server, 1);
    health_ = std::make_shared<ServerHealth>(name_, n, options);
    // Every connection of a server reports under one id (one series per server).
    const std::uint32_t metrics_id = options.metrics ? options.metrics->add_server(name_) : 0;
    connections_.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        auto c = std::make_shared<net::Connection>(ex, address_, options,
                                                   detail::make_protocol_driver(options));
        c->set_state_listener(
            [h = health_, i](net::ConnectionState s) { h->on_connection_state(i, s); });
        if (options.metrics) c->set_metrics(options.metrics.get(), metrics_id);
        connections_.push_back(std::move(c));
    }
}

ServerPool::~ServerPool() {
    close();
}

void ServerPool::start() {
    for (auto& c : connections_)
        c->start();
}

void ServerPool::close() {
    if (closed_.exchange(true, std::memory_order_acq_rel)) return;
    for (auto& c : connections_)
        c->close();
}

}  // namespace folsom::cluster
