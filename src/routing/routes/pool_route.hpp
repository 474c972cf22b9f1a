// PoolRoute: a ketama ring over one pool's servers (the pool's own ClientCore: the same stack
// a client without routes has, so placement is libmemcached's), with its shadows.
//
// A shadow gets a copy of every request whose key hashes into its key_fraction_range
// (murmur3 of the key over 2^32). Its replies are counted (RouteCounters::shadow_requests,
// shadow_errors) and never reach the caller; a dead shadow costs the caller nothing but the
// failed send.
#pragma once

#include "folsom/detail/client_core.hpp"

#include "routing/route.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace folsom::routing {

class RouteTree;

class PoolRoute final : public Route {
  public:
    struct Shadow {
        Route* target = nullptr;
        std::uint64_t begin = 0;  ///< key hashes in [begin, end) are shadowed
        std::uint64_t end = 0;
    };

    PoolRoute(RouteCounters& counters, const RouteTree& tree, detail::ClientCore& pool,
              std::size_t first_server, std::vector<Shadow> shadows)
        : Route(counters),
          tree_(tree),
          pool_(pool),
          first_server_(first_server),
          shadows_(std::move(shadows)) {}

    void send(detail::Operation& op, std::uint32_t part, const detail::Request& r) override;
    std::size_t server_for(std::string_view key, detail::OpCode) const noexcept override {
        return first_server_ + pool_.server_for(key);
    }

  private:
    void shadow(detail::Operation& op, const detail::Request& r);

    const RouteTree& tree_;
    detail::ClientCore& pool_;
    const std::size_t first_server_;  // RouteCore's index of the pool's server 0
    const std::vector<Shadow> shadows_;
};

}  // namespace folsom::routing
