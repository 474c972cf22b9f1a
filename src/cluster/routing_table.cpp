#include "cluster/routing_table.hpp"

#include "cluster/hash/pymemcache_rendezvous.hpp"

#include <algorithm>
#include <cstring>

namespace folsom::cluster {
RoutingTable::RoutingTable(std::vector<ServerPool*> members, std::vector<ServerAddress> addresses,
                           std::vector<ServerPool*> by_index, Distribution distribution,
                           bool failover)
    : members_(std::move(members)),
      addresses_(std::move(addresses)),
      by_index_(std::move(by_index)),
      ring_(addresses_, distribution),
      failover_(failover) {
    const auto scheme = distribution.scheme;
    if (failover && members_.size() > 1 &&
        (scheme == Distribution::Scheme::pymemcache_rendezvous ||
         scheme == Distribution::Scheme::pymemcache_rendezvous_bytes))
        pymemcache_rendezvous_prepare(addresses_, rendezvous_words_);
}

void RoutingTable::servers_for(std::span<const std::string_view> keys,
                               std::span<std::uint32_t> out) const noexcept {
    if (members_.size() <= 1 || ring_.empty()) {
        const std::size_t only = members_.empty() ? 0 : members_.front()->id();
        std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(keys.size()),
                  static_cast<std::uint32_t>(only));
        return;
    }
    if (ring_.distribution().scheme == Distribution::Scheme::mcrouter_ch3) {
        for (std::size_t i = 0; i < keys.size(); ++i)
            out[i] = static_cast<std::uint32_t>(ch3_owner(keys[i]));
        return;
    }
    if (!rendezvous_words_.empty()) {
        for (std::size_t i = 0; i < keys.size(); ++i)
            out[i] = static_cast<std::uint32_t>(rendezvous_owner(keys[i]));
        return;
    }
    ring_.key_positions(keys, out);  // positions first, in place, then each one's owner
    for (std::size_t i = 0; i < keys.size(); ++i)
        out[i] = static_cast<std::uint32_t>(owner_at(ring_.point_index_at(out[i])));
}

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

// Ch3 has no ring to walk: a dead server's keys are rehashed with the salts mcrouter's
// WeightedCh3 uses to move keys off a server of weight 0 (the key + "0", "1", ..., "9", "01",
// ...: the try count in reversed decimal), up to 31 of them, and go to the first routable
// server drawn. So they spread over the live servers, and no other key moves.
std::size_t RoutingTable::ch3_failover(std::string_view key,
                                       const ServerPool* owner) const noexcept {
    char salted[512];
    if (key.size() + 2 > sizeof salted) return owner->id();  // an over-long key: refused anyway
    if (!key.empty()) std::memcpy(salted, key.data(), key.size());
    for (std::uint32_t t = 0; t < 31; ++t) {
        std::size_t size = key.size();
        std::uint32_t s = t;
        do {
            salted[size++] = static_cast<char>('0' + s % 10);
            s /= 10;
        } while (s != 0);
        const ServerPool* candidate = members_[ring_.server_index(std::string_view(salted, size))];
        if (candidate != owner && candidate->health().routable()) return candidate->id();
    }
    return owner->id();
}

std::size_t RoutingTable::rendezvous_failover(std::string_view key,
                                              const ServerPool* owner) const noexcept {
    const bool as_bytes =
        ring_.distribution().scheme == Distribution::Scheme::pymemcache_rendezvous_bytes;
    const std::size_t s = pymemcache_rendezvous_pick_among(
        rendezvous_words_, key, as_bytes,
        [this](std::size_t i) { return members_[i]->health().routable(); }, members_.size());
    return s == members_.size() ? owner->id() : members_[s]->id();
}

}  // namespace folsom::cluster
