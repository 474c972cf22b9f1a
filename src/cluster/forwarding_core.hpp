// ForwardingCore: the base of the ClientCore decorators (DiscoveringCore, KeyPrefixCore,
// RetryingCore). A decorator changes one or two things about a core (which servers it has, the
// keys, what happens when a connection is lost); everything else is the inner core's. This
// base forwards every pure virtual of ClientCore, and the placement hooks a ring can answer
// faster (servers_for), to the inner core, so that a decorator overrides only what it changes.
//
// `Inner` is the inner core's type: a decorator that needs more than ClientCore of it
// (DiscoveringCore feeds a ServerCore its server sets) names it, and calls to a final class
// are direct.
//
// A decorator that changes where a key goes (KeyPrefixCore) overrides server_for(), send() and
// servers_for() together. Not forwarded, on purpose: route_stats() has nothing to forward,
// since decorators stand below a route tree, never above one.
#pragma once

#include "folsom/detail/client_core.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace folsom::detail {

template <class Inner = ClientCore>
class ForwardingCore : public ClientCore {
  public:
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
    void send(Operation& op, std::uint32_t part, const Request& request) override {
        inner_->send(op, part, request);
    }
    void submit(std::size_t server, Operation& op, std::uint32_t part,
                const Request& request) override {
        inner_->submit(server, op, part, request);
    }
    void shutdown() override { inner_->shutdown(); }
    void notify_when_ready(std::chrono::milliseconds timeout,
                           std::function<void(std::error_code)> done) override {
        inner_->notify_when_ready(timeout, std::move(done));
    }

    const std::shared_ptr<Inner>& inner() const noexcept { return inner_; }

  protected:
    ForwardingCore(std::shared_ptr<Inner> inner, std::size_t max_outstanding) noexcept
        : ClientCore(max_outstanding), inner_(std::move(inner)) {}

    std::shared_ptr<Inner> inner_;
};

}  // namespace folsom::detail
