#include "cluster/routing_table.hpp"

namespace folsom::cluster {
RoutingTable::RoutingTable(std::vector<ServerPool*> members, std::vector<ServerAddress> addresses,
                           std::vector<ServerPool*> by_index, Distribution distribution,
                           bool failover)
    : members_(std::move(members)),
      addresses_(std::move(addresses)),
      by_index_(std::move(by_index)),
      ring_(addresses_, distribution),
      failover_(failover) {}

std::size_t RoutingTable::walk(std::size_t point, const ServerPool* owner) const noexcept {
    const auto points = ring_.points();
    for (std::size_t step = 1; step < points.size(); ++step) {
        std::size_t p = point + step;
        if (p >= points.size()) p -= points.size();
        const ServerPool* candidate = members_[points[p].server];
        if (candidate != owner && candidate->health().routable()) return candidate->id();
    }
    return owner->id();
}

}  // namespace folsom::cluster
