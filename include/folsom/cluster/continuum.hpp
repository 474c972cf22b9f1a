/// @file
/// Continuum: which server owns a key, by consistent hashing on a ring of points ("ketama"),
/// or by the other placements a Distribution names (distribution.hpp).
///
/// Pure placement: no sockets, no Asio. Built once per server list (that allocates); a lookup
/// hashes the key on the stack and binary-searches the ring, so it never allocates and may be
/// called from any number of threads at once.
///
/// Each Distribution reproduces another client's ring bit for bit, so a service can move to
/// folsom-cpp (or share a pool with those clients) without remapping its cache:
///
/// * ketama_libmemcached: libmemcached with MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED (the usual
///   "ketama" setting of libmemcached, php-memcached, pylibmc, ...). MD5 for keys and points;
///   a server named "host-i" (or "host:port-i" off port 11211) gets 4 points per digest and
///   floor(weight / total * 40 * servers) digests, computed in float as libmemcached does.
/// * ketama_spymemcached: spymemcached's KetamaNodeLocator with KETAMA_HASH and its default
///   node names "/host:port-i" (160 points when every weight is 1; spymemcached's weighted
///   formula, the same as libmemcached's, otherwise). Exact for servers given by IP literal,
///   which is what spymemcached names them by unless it was handed a resolved host name.
/// * folsom_murmur: Spotify Folsom's own KetamaMemcacheClient (com.spotify.folsom.ketama):
///   100 points per server, a chain of murmur3_32 hashes seeded by "host:port", compared as
///   signed 32-bit integers. Weights are ignored, as Folsom has none.
/// * mcrouter_ch3: mcrouter's Ch3, the default placement of an mcrouter pool: the key's server
///   is furc_hash(key, n), its index in the list. Not a ring: points() holds one point per
///   server, at position = its index, and a key's position is its server's index, so the
///   lookups below answer alike. Server names and weights play no part (mcrouter's pool
///   weights are WeightedCh3's, not these). Adding servers at the end of the list moves keys
///   only onto them; removing one from the middle renumbers the servers after it.
/// * pymemcache_rendezvous: pymemcache's HashClient with its default RendezvousHash: every
///   server scores the key with murmur3_32("host:port-key") and the highest score wins (a tie
///   goes to the greater "host:port"). Not a ring either: points() holds one point per server
///   at its index, as for mcrouter_ch3. pymemcache names a server "host:port" (an IPv6 host
///   without brackets) or by its socket path; weights play no part (HashClient has none).
///   Exact for keys given to pymemcache as str; one given as bytes is hashed there as its
///   repr ("b'key'"): pymemcache_rendezvous_bytes hashes every key so, a placement for those
///   keys (a Python HashClient sends bytes keys through a client of its own with it, since
///   only Python knows a key's type). pymemcache's key_prefix is not hashed.
///
/// * The other schemes (distribution.hpp): libmemcached_consistent is a ring like
///   ketama_libmemcached's (100 points a server, "host-i" or "host:port-i" by the key hash);
///   dalli's ring takes the point at or before the key (positions are stored bit-inverted, so
///   the same search serves); cache_memcached_fast's compatible mode is a ring of one point per
///   server; cache_memcached and pecl_memcache_standard are a ring of one point per server at
///   the end of its run of weight buckets. libmemcached_modula, gomemcache and
///   pecl_memcache_consistent (through its 1024-bucket table) compute a position that is an
///   index into points() directly, as mcrouter_ch3 and pymemcache_rendezvous do.
///
/// The host is hashed as written in ServerAddress (never resolved): give every client the same
/// spelling of the server list. (mcrouter_ch3, modula, gomemcache, cache_memcached and
/// pecl_memcache_standard hash no host: give them the same order.)
///
/// Errors: building with a Distribution that distribution_error() refuses throws
/// std::system_error (errc::invalid_argument), as does a server of weight 0 for a scheme that
/// weighs servers. Lookups are noexcept. Ownership: a Continuum owns its ring; points() is a
/// view into it, valid until the Continuum is assigned to or destroyed.
#pragma once

#include "folsom/cluster/distribution.hpp"
#include "folsom/export.hpp"
#include "folsom/server_address.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace folsom::cluster {

/// A consistent-hash ring over a list of servers (see continuum.hpp). Immutable once built;
/// thread-safe for concurrent lookups.
class FOLSOM_EXPORT Continuum {
  public:
    /// One point of the ring. `position` orders the ring as unsigned 32-bit; for folsom_murmur
    /// it is Folsom's signed hash with its sign bit flipped, so the order is Folsom's; for dalli
    /// it is the point's value inverted; for the direct schemes (indexed()) it is the point's
    /// index.
    struct Point {
        std::uint32_t position;  ///< where the point sits on the ring
        std::uint32_t server;    ///< index into the span the continuum was built from
    };

    /// An empty ring (no servers).
    Continuum() = default;

    /// Builds the ring for `servers`, in the order given: the returned indices refer to it.
    /// Order matters only where two points collide, as it does for the emulated client.
    Continuum(std::span<const ServerAddress> servers, Distribution distribution);

    /// The index (into the server span) of the server that owns `key`.
    /// Precondition: !empty() (an empty ring answers 0).
    std::size_t server_index(std::string_view key) const noexcept {
        if (servers_ == 1) return 0;  // libmemcached skips hashing too; same answer for all
        return points_.empty() ? 0 : points_[point_index(key)].server;
    }

    /// The index into points() of the first point at or after the key's position, wrapping
    /// to the start of the ring. A failover layer walks on from there (as Folsom does to skip
    /// a disconnected server). Precondition: !empty().
    std::size_t point_index(std::string_view key) const noexcept;

    /// The key's position on the ring (same scale as Point::position).
    std::uint32_t key_position(std::string_view key) const noexcept;

    /// out[i] = key_position(keys[i]) for every key (out.size() >= keys.size()). The MD5 rings
    /// hash eight short keys per pass in SIMD lanes, cheaper per key than one by one: what a
    /// multi-get over many servers uses.
    void key_positions(std::span<const std::string_view> keys,
                       std::span<std::uint32_t> out) const noexcept;

    /// point_index() for a position already computed by key_position(s).
    std::size_t point_index_at(std::uint32_t position) const noexcept;

    /// The ring, sorted by position (a view into this object).
    std::span<const Point> points() const noexcept { return points_; }
    /// Number of servers the ring was built from.
    std::size_t server_count() const noexcept { return servers_; }
    /// True for a ring without servers.
    bool empty() const noexcept { return points_.empty(); }
    /// The placement scheme this ring reproduces.
    Distribution distribution() const noexcept { return distribution_; }
    /// True for the schemes whose key position is an index into points() (no ring search):
    /// mcrouter_ch3, pymemcache_rendezvous(_bytes), libmemcached_modula, gomemcache (one point per
    /// server) and pecl_memcache_consistent (its 1024 buckets).
    bool indexed() const noexcept { return indexed_; }

  private:
    void build_buckets();

    std::vector<Point> points_;  // sorted by position
    // Per-server state of the schemes that hash each server's name with the key
    // (pymemcache_rendezvous: see cluster/hash/pymemcache_rendezvous.hpp). Empty otherwise.
    std::vector<std::uint32_t> server_words_;
    // buckets_[b]: the first point at or after b << (32 - bucket_bits_); one more entry holds
    // points_.size(). Empty for an empty ring.
    std::vector<std::uint32_t> buckets_;
    int bucket_bits_ = 0;
    std::size_t servers_ = 0;
    Distribution distribution_ = Distribution::ketama_libmemcached;
    bool indexed_ = false;
    // The sum of the weights, for the schemes whose key position depends on it
    // (cache_memcached, cache_memcached_fast, pecl_memcache_standard).
    std::uint64_t total_weight_ = 0;
};

}  // namespace folsom::cluster
