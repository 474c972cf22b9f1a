#include "routing/route_core.hpp"

#include "folsom/cluster/distribution.hpp"
#include "folsom/detail/request_memory.hpp"
#include "folsom/error.hpp"

#include "base/wrapper_operation.hpp"
#include "cluster/pool_core.hpp"
#include "net/connection.hpp"
#include "routing/config/weighted_pools.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace folsom::routing {
namespace {

/// One multi-key retrieval part, its keys sent along the tree one by one (each key's part is
/// its index in the caller's part) and merged back into the caller's part.
class KeySplitOp final : public detail::WrapperOperation<KeySplitOp> {
  public:
    static void start(Route& root, detail::Operation& op, std::uint32_t part,
                      const detail::Request& r) {
        KeySplitOp* s = make(op, part, r.keys.size());
        detail::Request k = r;
        for (std::size_t i = 0; i < r.keys.size(); ++i) {
            // The caller's keys live as long as its operation (Request::keys_are_stable).
            k.key = r.keys[i];
            k.keys = r.keys.subspan(i, 1);
            root.send(*s, static_cast<std::uint32_t>(i), k);
        }
        s->drop();  // the sender's reference
    }

    void on_value(std::uint32_t key, std::uint32_t, const ValueView& v) override {
        // Keys of one part may now answer on several connections at once: one at a time
        // into the caller's part, as one connection would.
        std::lock_guard<std::mutex> lock(mu_);
        wrapped_.on_value(part_, key, v);
    }
    void on_stat(std::uint32_t, std::string_view, std::string_view) override {}
    void on_complete(std::uint32_t key, const detail::Completion& c) override {
        if (c.ec) {
            std::lock_guard<std::mutex> lock(mu_);
            if (failed_++ == 0) first_error_ = c.ec;
            wrapped_.on_key_error(part_, key, c.ec);
        }
        drop();
    }
    /// Every key answered (and the sender let go): the caller's part completes.
    void on_last_reference() {
        // The part failed only when every key did; otherwise its failed keys were named.
        const detail::Completion c =
            failed_ == keys_ ? detail::failure(first_error_) : detail::Completion{};
        detail::Operation& parent = wrapped_;
        const std::uint32_t part = part_;
        release();
        parent.on_complete(part, c);
    }

  private:
    friend class detail::WrapperOperation<KeySplitOp>;

    // One reference per key's send, and the sender's.
    KeySplitOp(detail::Operation& op, std::uint32_t part, std::size_t keys)
        : WrapperOperation(op, static_cast<int>(keys) + 1), part_(part), keys_(keys) {}

    const std::uint32_t part_;
    const std::size_t keys_;
    std::mutex mu_;
    std::size_t failed_ = 0;
    std::error_code first_error_;
};

// Each pool's "hash", where a pool route gives one (validate() made a pool's routes agree).
void collect_pool_hashes(const RouteSpec& r, std::map<std::string, std::string>& out) {
    if (r.type == RouteType::pool && !r.hash_func.empty()) out.emplace(r.pool, r.hash_func);
    for (const ShadowSpec& s : r.shadows)
        collect_pool_hashes(s.target.front(), out);
    for (const RouteSpec& c : r.children)
        collect_pool_hashes(c, out);
}

}  // namespace

RouteCore::RouteCore(asio::any_io_executor ex, std::shared_ptr<RouteTree> tree,
                     const Options& options)
    : ClientCore(options.max_outstanding_requests),
      ex_(std::move(ex)),
      tree_(std::move(tree)),
      max_value_size_(options.max_value_size) {}

const std::string& RouteCore::server_name(std::size_t i) const noexcept {
    return i < tree_->server_count() ? tree_->server_name(i) : no_server_;
}

void RouteCore::submit(std::size_t server, detail::Operation& op, std::uint32_t part,
                       const detail::Request& request) {
    if (request.to_every_server) {
        tree_->submit_to_server(server, op, part, request);
    } else if (request.keys.size() > 1) {
        KeySplitOp::start(tree_->root(), op, part, request);
    } else {
        tree_->root().send(op, part, request);
    }
}

void RouteCore::shutdown() {
    for (const auto& p : tree_->pools())
        p->shutdown();
}

void RouteCore::notify_when_ready(std::chrono::milliseconds timeout,
                                  std::function<void(std::error_code)> done) {
    const auto& pools = tree_->pools();
    if (pools.empty()) {
        ClientCore::notify_when_ready(timeout, std::move(done));
        return;
    }
    // The first pool ready answers; if none is, the last pool's error does.
    struct Race {
        std::mutex mu;
        std::function<void(std::error_code)> done;
        std::size_t left;
    };
    auto race = std::make_shared<Race>();
    race->done = std::move(done);
    race->left = pools.size();
    for (const auto& p : pools)
        p->notify_when_ready(timeout, [race](std::error_code ec) {
            std::function<void(std::error_code)> d;
            {
                std::lock_guard<std::mutex> lock(race->mu);
                --race->left;
                if (!race->done || (ec && race->left > 0)) return;
                d = std::move(race->done);
                race->done = nullptr;
            }
            d(ec);
        });
}

std::shared_ptr<detail::ClientCore> make_route_core(asio::any_io_executor ex,
                                                    const Options& options) {
    options.routes->validate();
    if (options.discovery)
        throw std::system_error(make_error_code(errc::invalid_argument),
                                "Options::routes and Options::discovery cannot be used together "
                                "(the pools name the servers)");
    const RouteConfig config = expand_weighted_pools(*options.routes);
    // A pool's Options: the client's, with what the pool's configuration sets (mcrouter's
    // pool options) in place.
    auto pool_options = [&](const PoolSpec& pool) {
        Options o = options;
        o.routes.reset();  // a pool is a plain ring
        if (pool.server_timeout) o.request_timeout = *pool.server_timeout;
        if (pool.protocol) o.protocol = *pool.protocol;
        if (pool.username) {
            o.username = *pool.username;
            o.password = pool.password.value_or(std::string{});
        }
        if (pool.tls)
            o.tls = *pool.tls ? options.tls.value_or(TlsOptions{}) : std::optional<TlsOptions>{};
        return o;
    };
    std::vector<std::vector<ServerAddress>> servers;
    for (const PoolSpec& pool : config.pools) {
        auto& list = servers.emplace_back();
        const bool tls = pool.tls.value_or(options.tls.has_value());
        for (std::size_t i = 0; i < pool.servers.size(); ++i) {
            const std::string path = "pools." + pool.name + ".servers[" + std::to_string(i) + "]";
            ServerAddress addr;
            std::string why;
            if (parse_server_address(pool.servers[i], addr, &why))
                throw RouteConfigError(path, why);
            if (addr.is_unix_socket() && tls)
                throw RouteConfigError(path, net::unix_socket_tls_refusal(addr.host));
            list.push_back(std::move(addr));
        }
    }
    // A pool's placement is its pool routes' "hash" (validate() made them agree): Ch3 makes
    // its core place keys as mcrouter does, another distribution name as that client does;
    // otherwise Options::distribution applies.
    std::map<std::string, std::string> pool_hashes;
    collect_pool_hashes(config.route, pool_hashes);
    // Binary keys need meta in every pool (a pool without "protocol" has the client's).
    if (options.binary_keys)
        for (const PoolSpec& pool : config.pools)
            if (pool_options(pool).protocol != Protocol::meta)
                throw RouteConfigError(
                    "pools." + pool.name + (pool.protocol ? ".protocol" : std::string{}),
                    detail::binary_keys_refusal);
    auto make_pool = [&](std::size_t p, std::vector<ServerAddress> s) {
        Options placed = pool_options(config.pools[p]);
        const auto hash = pool_hashes.find(config.pools[p].name);
        if (hash != pool_hashes.end()) {
            std::string why;
            const auto distribution = cluster::parse_distribution(hash->second, &why);
            if (!distribution) throw RouteConfigError("pools." + config.pools[p].name, why);
            placed.distribution = *distribution;
        }
        return detail::make_pool_core(ex, placed, std::move(s));
    };
    // One pool route, nothing else: the pool's own core is the whole client.
    const RouteSpec& root = config.route;
    if (root.type == RouteType::pool && root.shadows.empty()) {
        for (std::size_t p = 0; p < config.pools.size(); ++p)
            if (config.pools[p].name == root.pool) return make_pool(p, std::move(servers[p]));
    }
    auto tree = RouteTree::build(config, std::move(servers), make_pool);
    return std::make_shared<RouteCore>(std::move(ex), std::move(tree), options);
}

}  // namespace folsom::routing
