// RouteCore: the ClientCore of a client configured with routes (Options::routes). The Client
// talks to it as to any core; it hands every keyed request to the route tree instead of to a
// server.
//
// A multi-key retrieval part is split into single keys (each its own path through the tree:
// a key that fails over does so alone), and the keys' answers are merged back into the part;
// a key whose path failed is reported alone (Operation::on_key_error). Requests to every server
// (stats, version, flush_all) go to every server of every pool, once each.
//
// make_route_core resolves the tree once. A tree that is a single PoolRoute without shadows
// needs no routing at all: it is served by the pool's own core, so such a client runs exactly
// the request path of a client without routes (and has no route counters).
#pragma once

#include "folsom/detail/client_core.hpp"

#include "routing/route_tree.hpp"

#include <memory>

namespace folsom::routing {

/// The core for `options` (Options::routes set). Throws RouteConfigError for a configuration
/// that cannot be used, std::system_error for options that cannot go with routes.
std::shared_ptr<detail::ClientCore> make_route_core(asio::any_io_executor ex,
                                                    const Options& options);

class RouteCore final : public detail::ClientCore {
  public:
    RouteCore(asio::any_io_executor ex, std::shared_ptr<RouteTree> tree, const Options& options);

    asio::any_io_executor executor() const noexcept override { return ex_; }
    std::size_t server_count() const noexcept override { return tree_->server_count(); }
    /// Where the tree sends a get of `key` (the first pool on its path).
    std::size_t server_for(std::string_view key) const noexcept override {
        return tree_->root().server_for(key, detail::OpCode::get);
    }
    /// One group for every key: the tree places each key of a multi-get part itself (submit()
    /// splits the part), so the part is planned in the fewest pieces and no key is hashed for
    /// nothing.
    void servers_for(std::span<const std::string_view> keys,
                     std::span<std::uint32_t> out) const noexcept override {
        std::fill_n(out.begin(), keys.size(), 0u);
    }
    const std::string& server_name(std::size_t i) const noexcept override;
    std::vector<std::size_t> broadcast_servers() const override {
        return tree_->broadcast_servers();
    }
    std::size_t max_value_size() const noexcept override { return max_value_size_; }

    /// A single key: down the tree from its root.
    void send(detail::Operation& op, std::uint32_t part, const detail::Request& request) override {
        tree_->root().send(op, part, request);
    }
    /// A request to every server goes to server `server`; a multi-get part is split into its
    /// keys, each sent down the tree alone.
    void submit(std::size_t server, detail::Operation& op, std::uint32_t part,
                const detail::Request& request) override;
    void shutdown() override;
    /// Ready as soon as any pool is (a route may well have a dead pool: that is what it is for).
    void notify_when_ready(std::chrono::milliseconds timeout,
                           std::function<void(std::error_code)> done) override;
    std::vector<RouteStats> route_stats() const override { return tree_->stats(); }

  private:
    asio::any_io_executor ex_;
    std::shared_ptr<RouteTree> tree_;
    const std::size_t max_value_size_;
    std::string no_server_;  // server_name() of a client whose tree names no pool
};

}  // namespace folsom::routing
