// RoutingTable: one immutable snapshot of "which server owns which key".
//
// The table pairs a consistent-hash ring with the pools of its members, and maps stable server
// indices to pools (including servers that have left the ring but still drain). The client core
// publishes a new table when the server set changes and never modifies a published one, so a
// lookup needs no lock: a request routed by the old table still finds its server.
#pragma once

#include "folsom/cluster/continuum.hpp"

#include "cluster/server_pool.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace folsom::cluster {

class RoutingTable {
  public:
    /// `members`: the ring's servers, in ring order, and `addresses` their addresses (with the
    /// weights this ring uses). `by_index`: every server index handed out so far (nullptr for
    /// none); each member must appear in it at its id().
    RoutingTable(std::vector<ServerPool*> members, std::vector<ServerAddress> addresses,
                 std::vector<ServerPool*> by_index, Distribution distribution, bool failover);

    /// The index of the server that owns `key`. With failover, a dead owner is skipped by
    /// walking the ring to the next point of a routable server (libmemcached's auto-eject;
    /// with mcrouter_ch3, which has no ring, by rehashing the key: ch3_failover); when every
    /// server is dead, the owner. An empty ring answers 0 (which submit() then reports as
    /// not_connected when no server 0 exists).
    std::size_t server_for(std::string_view key) const noexcept {
        if (members_.size() <= 1 || ring_.empty())
            return members_.empty() ? 0 : members_.front()->id();
        if (ring_.distribution().scheme == Distribution::Scheme::mcrouter_ch3)
            return ch3_owner(key);
        if (!rendezvous_words_.empty()) return rendezvous_owner(key);
        return owner_at(ring_.point_index(key));
    }

    /// out[i] = server_for(keys[i]) for every key (out.size() >= keys.size()), hashing the
    /// keys in batches (Continuum::key_positions).
    void servers_for(std::span<const std::string_view> keys,
                     std::span<std::uint32_t> out) const noexcept;

    /// The pool of server index `i`, or nullptr.
    ServerPool* pool(std::size_t i) const noexcept {
        return i < by_index_.size() ? by_index_[i] : nullptr;
    }
    std::size_t index_count() const noexcept { return by_index_.size(); }
    std::span<ServerPool* const> members() const noexcept { return members_; }
    std::span<const ServerAddress> addresses() const noexcept { return addresses_; }

  private:
    std::size_t walk(std::size_t point, const ServerPool* owner) const noexcept;
    std::size_t ch3_failover(std::string_view key, const ServerPool* owner) const noexcept;
    // pymemcache's rendezvous (pymemcache_rendezvous, _bytes) has no ring to walk either: a
    // dead server's keys go where pymemcache's HashClient sends them once it has removed the
    // dead servers from its hasher, to the highest score among the live ones.
    std::size_t rendezvous_owner(std::string_view key) const noexcept {
        const ServerPool* owner = members_[ring_.server_index(key)];
        if (!failover_ || owner->health().routable()) return owner->id();
        return rendezvous_failover(key, owner);
    }
    std::size_t rendezvous_failover(std::string_view key, const ServerPool* owner) const noexcept;
    std::size_t ch3_owner(std::string_view key) const noexcept {
        const ServerPool* owner = members_[ring_.server_index(key)];
        if (!failover_ || owner->health().routable()) return owner->id();
        return ch3_failover(key, owner);
    }
    std::size_t owner_at(std::size_t point) const noexcept {
        const ServerPool* owner = members_[ring_.points()[point].server];
        if (!failover_ || owner->health().routable()) return owner->id();
        return walk(point, owner);
    }

    std::vector<ServerPool*> members_;
    std::vector<ServerAddress> addresses_;
    std::vector<ServerPool*> by_index_;
    Continuum ring_;
    bool failover_;
    // With failover and a pymemcache rendezvous scheme: the per-server words of
    // cluster/hash/pymemcache_rendezvous.hpp, to score keys among the live servers. Empty
    // otherwise.
    std::vector<std::uint32_t> rendezvous_words_;
};

}  // namespace folsom::cluster
