// RouteTree: a RouteConfig resolved once, when the client connects: one ClientCore per pool
// (the stack a client without routes has: servers, key prefix, retries), one Route per node of
// the tree, and the counters of every route.
//
// Servers are numbered across pools (pool 0's servers first), which is how RouteCore names
// them to the Client: stats, version and flush_all reach every server of every pool once.
#pragma once

#include "folsom/detail/client_core.hpp"
#include "folsom/options.hpp"
#include "folsom/routes.hpp"
#include "folsom/server_address.hpp"

#include "routing/route.hpp"

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace folsom::routing {

class RouteTree : public std::enable_shared_from_this<RouteTree> {
  public:
    /// Makes the ClientCore of pool `pool` (an index into RouteConfig::pools) from its servers.
    using PoolFactory = std::function<std::shared_ptr<detail::ClientCore>(
        std::size_t pool, std::vector<ServerAddress> servers)>;

    /// Resolves `config` (validated: RouteConfig::validate) into routes over pools made by
    /// `make_pool`. Throws RouteConfigError for what only resolving finds (a salt too long).
    static std::shared_ptr<RouteTree> build(const RouteConfig& config,
                                            std::vector<std::vector<ServerAddress>> pool_servers,
                                            const PoolFactory& make_pool);

    Route& root() const noexcept { return *root_; }

    std::size_t server_count() const noexcept { return servers_.size(); }
    const std::string& server_name(std::size_t i) const noexcept;
    /// Every server once (a server in two pools is asked once).
    std::vector<std::size_t> broadcast_servers() const;
    /// Sends a request meant for server `i` itself (Request::to_every_server).
    void submit_to_server(std::size_t i, detail::Operation& op, std::uint32_t part,
                          const detail::Request& r) const;

    const std::vector<std::shared_ptr<detail::ClientCore>>& pools() const noexcept {
        return pools_;
    }
    std::vector<RouteStats> stats() const;

  private:
    RouteTree() = default;
    Route& resolve(const RouteSpec& spec, const std::string& path);
    RouteCounters& counters_for(const RouteSpec& spec, const std::string& path);
    Route& no_match();

    struct ServerRef {
        std::size_t pool;
        std::size_t local;  // the server's index in its pool
    };
    std::vector<std::shared_ptr<detail::ClientCore>> pools_;
    std::vector<std::string> pool_names_;
    std::vector<std::size_t> first_server_;  // of each pool
    std::vector<ServerRef> servers_;
    std::deque<RouteCounters> counters_;  // stable addresses
    std::vector<std::unique_ptr<Route>> routes_;
    Route* no_match_ = nullptr;
    Route* root_ = nullptr;
};

}  // namespace folsom::routing
