#include "folsom/cluster/continuum.hpp"

#include "folsom/error.hpp"

#include "cluster/hash/crc32.hpp"
#include "cluster/hash/furc_hash.hpp"
#include "cluster/hash/md5.hpp"
#include "cluster/hash/md5_lanes.hpp"
#include "cluster/hash/murmur3.hpp"
#include "cluster/hash/pymemcache_rendezvous.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <system_error>

namespace folsom::cluster {
namespace {

using Point = Continuum::Point;
using Scheme = Distribution::Scheme;

// Folsom orders its ring as Java ints; flipping the sign bit maps signed order onto unsigned
// order, so all three rings share one representation and one search.
constexpr std::uint32_t sign_flip = 0x80000000u;

// Both libmemcached (MEMCACHED_POINTS_PER_SERVER_KETAMA) and spymemcached use 160 points per
// server, taken 4 at a time from one MD5 digest.
constexpr unsigned ketama_points_per_server = 160;
constexpr unsigned ketama_points_per_digest = 4;

// Folsom's Continuum.VNODE_RATIO.
constexpr unsigned folsom_points_per_server = 100;

// How many digests a weighted server gets. The arithmetic is float on purpose, step by step
// as libmemcached's update_continuum does it (spymemcached's weighted KetamaNodeLocator rounds
// to the same float): a double, or a reordering, gives 40 where they give 39 for some server
// counts, and moves keys.
std::uint32_t weighted_digests(std::uint32_t weight, std::uint64_t total_weight,
                               std::size_t server_count) {
    const float share = static_cast<float>(weight) / static_cast<float>(total_weight);
    const float digests = share * static_cast<float>(ketama_points_per_server) /
                              static_cast<float>(ketama_points_per_digest) *
                              static_cast<float>(server_count) +
                          0.0000000001F;
    return static_cast<std::uint32_t>(std::floor(digests));
}

// A server's ketama points: `digests` groups named `prefix` + i (i from 0), each the MD5 of
// its name, four points to a digest.
void add_ketama_points(std::string_view prefix, std::uint32_t digests, std::uint32_t server,
                       std::vector<Point>& out) {
    std::string name;
    for (std::uint32_t i = 0; i < digests; ++i) {
        name = prefix;
        name += std::to_string(i);
        const Md5Digest digest = md5(name);
        for (unsigned w = 0; w < ketama_points_per_digest; ++w)
            out.push_back({md5_word(digest, w), server});
    }
}

std::uint64_t total_weight(std::span<const ServerAddress> servers) {
    std::uint64_t total = 0;
    for (const auto& s : servers)
        total += s.weight;
    return total;
}

// libmemcached names point group i of a server "host-i", or "host:port-i" when the port is
// not 11211, and keeps every point: equal positions sort by server index, and its lower-bound
// search then lands on the lowest index.
std::string libmemcached_point_prefix(const ServerAddress& server) {
    std::string prefix = server.host;
    // A Unix socket server's port is 0 in libmemcached (memcached_server_add_unix_socket),
    // and 0 is not the default port: its points are "<path>:0-<i>".
    const std::uint16_t port = server.is_unix_socket() ? 0 : server.port;
    if (port != default_memcached_port) {
        prefix += ':';
        prefix += std::to_string(port);
    }
    prefix += '-';
    return prefix;
}

// libmemcached's order: by position, equal positions by server index, so that its lower-bound
// search lands on the lowest index.
void sort_by_position_then_server(std::vector<Point>& points) {
    std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
        return a.position != b.position ? a.position < b.position : a.server < b.server;
    });
}

std::vector<Point> libmemcached_ring(std::span<const ServerAddress> servers) {
    std::vector<Point> points;
    points.reserve(servers.size() * ketama_points_per_server);
    const std::uint64_t total = total_weight(servers);
    for (std::uint32_t s = 0; s < servers.size(); ++s)
        add_ketama_points(libmemcached_point_prefix(servers[s]),
                          weighted_digests(servers[s].weight, total, servers.size()), s, points);
    sort_by_position_then_server(points);
    return points;
}

// libmemcached without weights (MEMCACHED_DISTRIBUTION_CONSISTENT, MEMCACHED_BEHAVIOR_KETAMA):
// MEMCACHED_POINTS_PER_SERVER points a server, each the key hash of "host-i" (or
// "host:port-i"), whatever the weights.
constexpr unsigned libmemcached_unweighted_points = 100;

std::vector<Point> libmemcached_consistent_ring(std::span<const ServerAddress> servers,
                                                KeyHash hash) {
    std::vector<Point> points;
    points.reserve(servers.size() * libmemcached_unweighted_points);
    std::string name;
    for (std::uint32_t s = 0; s < servers.size(); ++s) {
        const std::string prefix = libmemcached_point_prefix(servers[s]);
        for (unsigned i = 0; i < libmemcached_unweighted_points; ++i) {
            name = prefix;
            name += std::to_string(i);
            points.push_back({key_hash(hash, name), s});
        }
    }
    sort_by_position_then_server(points);
    return points;
}

// Dalli::Ring: floor(servers * 160 * weight / total) points a server (the division in double),
// each the first 4 bytes (big-endian) of SHA1("<name>:<i>"), where the name is "host:port" or
// a socket's path. A key takes the last point at or before crc32(key), wrapping to the last
// point of all: positions are stored inverted (~value), which turns that into the first point
// at or after ~crc32(key), the search every ring here shares.
constexpr unsigned dalli_points_per_server = 160;

std::uint32_t sha1_prefix(std::string_view text) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (EVP_Digest(text.data(), text.size(), digest, &size, EVP_sha1(), nullptr) != 1 || size < 4)
        throw std::system_error(make_error_code(errc::invalid_argument), "SHA1 unavailable");
    return static_cast<std::uint32_t>(digest[0]) << 24 |
           static_cast<std::uint32_t>(digest[1]) << 16 |
           static_cast<std::uint32_t>(digest[2]) << 8 | digest[3];
}

std::string host_port_name(const ServerAddress& server) {
    if (server.is_unix_socket()) return server.host;
    return server.host + ':' + std::to_string(server.port);
}

std::vector<Point> dalli_ring(std::span<const ServerAddress> servers) {
    std::vector<Point> points;
    const std::uint64_t total = total_weight(servers);
    for (std::uint32_t s = 0; s < servers.size(); ++s) {
        const auto count = static_cast<std::uint64_t>(
            std::floor(static_cast<double>(servers.size() * dalli_points_per_server *
                                           std::uint64_t{servers[s].weight}) /
                       static_cast<double>(total)));
        const std::string prefix = host_port_name(servers[s]) + ':';
        for (std::uint64_t i = 0; i < count; ++i)
            points.push_back({~sha1_prefix(prefix + std::to_string(i)), s});
    }
    // Ruby's sort_by is not stable: for two points of one value (a 32-bit collision), which
    // Dalli takes is not defined. Here the later server's comes first.
    std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
        return a.position != b.position ? a.position < b.position : a.server > b.server;
    });
    return points;
}

// Cache::Memcached and pecl-memcache's standard strategy put each server into a bucket array
// `weight` times, in order, and a key into bucket hash % buckets. One point per server at its
// last bucket, and the bucket as the key's position, give the same answer by the ring search.
std::vector<Point> bucket_run_points(std::span<const ServerAddress> servers) {
    std::vector<Point> points;
    std::uint64_t end = 0;
    for (std::uint32_t s = 0; s < servers.size(); ++s) {
        end += servers[s].weight;
        if (end > std::numeric_limits<std::uint32_t>::max())
            throw std::system_error(make_error_code(errc::invalid_argument),
                                    "the servers' weights add up to more than 2^32 buckets");
        points.push_back({static_cast<std::uint32_t>(end - 1), s});
    }
    return points;
}

// Cache::Memcached::Fast without ketama_points ("compatible" with Cache::Memcached): each server
// owns an arc of the 32-bit circle in proportion to its weight, computed as it adds servers
// one by one, rescaling the earlier points in double and truncating.
constexpr std::uint32_t fast_max_point = 0xffffffffu;

std::vector<Point> cache_memcached_fast_points(std::span<const ServerAddress> servers) {
    std::vector<Point> points;
    double total = 0;
    for (std::uint32_t s = 0; s < servers.size(); ++s) {
        const auto weight = static_cast<double>(servers[s].weight);
        total += weight;
        const double scale = weight / total;
        for (Point& p : points)
            p.position = static_cast<std::uint32_t>(static_cast<double>(p.position) -
                                                    static_cast<double>(p.position) * scale);
        points.push_back({fast_max_point, s});
    }
    return points;
}

std::uint32_t cache_memcached_fast_position(std::string_view key,
                                            std::uint64_t total_weight) noexcept {
    const double total = static_cast<double>(total_weight);
    const std::uint32_t hash = crc32_high15(key);
    std::uint32_t point = hash % static_cast<std::uint32_t>(total + 0.5);
    point = static_cast<std::uint32_t>(static_cast<double>(point) / total * fast_max_point + 0.5);
    return point + 1;  // as Fast does, off the border point of the previous server
}

// pecl-memcache's consistent strategy: weight * 160 points a server, each the hash of
// "host:port-i", then a table of 1024 buckets, bucket i owned by the first point at or after
// i * (0xffffffff / 1024); a key goes to bucket hash(key) % 1024. The table is the points.
constexpr unsigned pecl_points_per_weight = 160;
constexpr std::uint32_t pecl_buckets = 1024;

std::uint32_t pecl_hash(KeyHash hash, std::string_view data) noexcept {
    return hash == KeyHash::fnv1a_32 ? key_hash(KeyHash::fnv1a_32, data) : crc32_ieee(data);
}

std::vector<Point> pecl_consistent_buckets(std::span<const ServerAddress> servers, KeyHash hash) {
    std::vector<Point> ring;
    for (std::uint32_t s = 0; s < servers.size(); ++s) {
        const std::string prefix = servers[s].host + ':' + std::to_string(servers[s].port) + '-';
        const std::uint64_t count = std::uint64_t{servers[s].weight} * pecl_points_per_weight;
        for (std::uint64_t i = 0; i < count; ++i)
            ring.push_back({pecl_hash(hash, prefix + std::to_string(i)), s});
    }
    // pecl-memcache's qsort leaves equal points in no defined order; here the earlier server's
    // comes first.
    sort_by_position_then_server(ring);
    std::vector<Point> buckets;
    buckets.reserve(pecl_buckets);
    const std::uint32_t step = 0xffffffffu / pecl_buckets;
    for (std::uint32_t b = 0; b < pecl_buckets; ++b) {
        const std::uint32_t at = step * b;
        auto it = std::lower_bound(ring.begin(), ring.end(), at,
                                   [](const Point& p, std::uint32_t v) { return p.position < v; });
        if (it == ring.end()) it = ring.begin();
        buckets.push_back({b, it->server});
    }
    return buckets;
}

// spymemcached and Folsom put points in a java.util.TreeMap: when two points collide, the one
// put last (the later server in list order) owns the position.
void sort_as_tree_map(std::vector<Point>& points) {
    std::stable_sort(points.begin(), points.end(),
                     [](const Point& a, const Point& b) { return a.position < b.position; });
    std::vector<Point> kept;
    kept.reserve(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
        if (i + 1 < points.size() && points[i + 1].position == points[i].position) continue;
        kept.push_back(points[i]);
    }
    points = std::move(kept);
}

// spymemcached names a node by InetSocketAddress.toString(), "/ip:port" for an address made
// from an IP literal, and point group i "/ip:port-i". Weights only apply when configured, so
// a list of weight-1 servers gets the unweighted 160 points each.
std::vector<Point> spymemcached_ring(std::span<const ServerAddress> servers) {
    std::vector<Point> points;
    points.reserve(servers.size() * ketama_points_per_server);
    const bool weighted = std::any_of(servers.begin(), servers.end(),
                                      [](const ServerAddress& s) { return s.weight != 1; });
    const std::uint64_t total = total_weight(servers);
    for (std::uint32_t s = 0; s < servers.size(); ++s) {
        const ServerAddress& server = servers[s];
        // (libmemcached's spymemcached mode names a Unix socket "/<path>:0-<i>" likewise.)
        const std::uint16_t port = server.is_unix_socket() ? 0 : server.port;
        const std::uint32_t digests = weighted
                                          ? weighted_digests(server.weight, total, servers.size())
                                          : ketama_points_per_server / ketama_points_per_digest;
        add_ketama_points('/' + server.host + ':' + std::to_string(port) + '-', digests, s, points);
    }
    sort_as_tree_map(points);
    return points;
}

// Folsom hashes HostAndPort.toString() ("host:port", "[v6]:port"), then hashes each hash's 4
// little-endian bytes again, one point per hash. Its string-to-bytes step keeps the low byte
// of each char, which is the host's own bytes for ASCII names.
std::vector<Point> folsom_ring(std::span<const ServerAddress> servers) {
    std::vector<Point> points;
    points.reserve(servers.size() * folsom_points_per_server);
    for (std::uint32_t s = 0; s < servers.size(); ++s) {
        std::uint32_t h = murmur3_32(servers[s].to_string());
        for (unsigned i = 0; i < folsom_points_per_server; ++i) {
            points.push_back({h ^ sign_flip, s});
            const char bytes[4] = {static_cast<char>(h), static_cast<char>(h >> 8),
                                   static_cast<char>(h >> 16), static_cast<char>(h >> 24)};
            h = murmur3_32(std::string_view(bytes, sizeof bytes));
        }
    }
    sort_as_tree_map(points);
    return points;
}

// Ch3, rendezvous, modula and gomemcache have no ring: one point per server, at its index,
// which is where their hash puts a key.
std::vector<Point> index_points(std::size_t servers) {
    std::vector<Point> points;
    points.reserve(servers);
    for (std::uint32_t s = 0; s < servers; ++s)
        points.push_back({s, s});
    return points;
}

std::uint32_t ch3_position(std::string_view key, std::size_t servers) noexcept {
    return furc_hash(key,
                     static_cast<std::uint32_t>(std::min<std::size_t>(servers, furc_max_servers)));
}

}  // namespace

Continuum::Continuum(std::span<const ServerAddress> servers, Distribution distribution)
    : servers_(servers.size()), distribution_(distribution), total_weight_(total_weight(servers)) {
    if (const std::string why = distribution_error(distribution); !why.empty())
        throw std::system_error(make_error_code(errc::invalid_argument), why);
    for (const auto& s : servers) {
        if (s.weight == 0)
            throw std::system_error(make_error_code(errc::invalid_argument),
                                    "server " + s.to_string() + " has weight 0 (weights are >= 1)");
    }
    switch (distribution.scheme) {
        case Scheme::ketama_libmemcached:
            points_ = libmemcached_ring(servers);
            break;
        case Scheme::ketama_spymemcached:
            points_ = spymemcached_ring(servers);
            break;
        case Scheme::folsom_murmur:
            points_ = folsom_ring(servers);
            break;
        case Scheme::libmemcached_consistent:
            // A server added with a weight above 1 turns libmemcached's ring weighted
            // (server_add sets the weighted-ketama flag): MD5 points, as ketama_libmemcached.
            points_ = std::any_of(servers.begin(), servers.end(),
                                  [](const ServerAddress& s) { return s.weight > 1; })
                          ? libmemcached_ring(servers)
                          : libmemcached_consistent_ring(servers, distribution.hash);
            break;
        case Scheme::dalli:
            points_ = dalli_ring(servers);
            break;
        case Scheme::cache_memcached:
        case Scheme::pecl_memcache_standard:
            points_ = bucket_run_points(servers);
            break;
        case Scheme::cache_memcached_fast:
            points_ = cache_memcached_fast_points(servers);
            break;
        case Scheme::pecl_memcache_consistent:
            if (!servers.empty()) points_ = pecl_consistent_buckets(servers, distribution.hash);
            indexed_ = true;
            break;
        case Scheme::pymemcache_rendezvous:
        case Scheme::pymemcache_rendezvous_bytes:
            pymemcache_rendezvous_prepare(servers, server_words_);
            [[fallthrough]];
        case Scheme::mcrouter_ch3:
        case Scheme::libmemcached_modula:
        case Scheme::gomemcache:
            points_ = index_points(servers.size());
            indexed_ = true;
            break;
    }
    build_buckets();
}

// Buckets cut the 32-bit ring into 2^bits equal arcs, about two per point (at most 2^14, 64 KiB
// for rings of over ~8,000 points): a lookup reads its arc's first point and binary-searches
// only the points inside that arc, usually none or one, instead of the whole ring (~9 steps
// for 3 servers, ~14 for 100).
void Continuum::build_buckets() {
    bucket_bits_ = 0;
    buckets_.clear();
    if (points_.empty()) return;
    bucket_bits_ = std::clamp(static_cast<int>(std::bit_width(points_.size())) + 1, 4, 14);
    const std::size_t count = std::size_t{1} << bucket_bits_;
    buckets_.resize(count + 1);
    std::size_t p = 0;
    for (std::size_t b = 0; b < count; ++b) {
        const std::uint64_t start = static_cast<std::uint64_t>(b) << (32 - bucket_bits_);
        while (p < points_.size() && points_[p].position < start)
            ++p;
        buckets_[b] = static_cast<std::uint32_t>(p);
    }
    buckets_[count] = static_cast<std::uint32_t>(points_.size());
}

std::uint32_t Continuum::key_position(std::string_view key) const noexcept {
    switch (distribution_.scheme) {
        case Scheme::ketama_libmemcached:
            if (distribution_.hash != KeyHash::md5) return key_hash(distribution_.hash, key);
            break;
        case Scheme::ketama_spymemcached:
            break;
        case Scheme::folsom_murmur:
            return murmur3_32(key) ^ sign_flip;
        case Scheme::mcrouter_ch3:
            return ch3_position(key, servers_);
        case Scheme::pymemcache_rendezvous:
            return static_cast<std::uint32_t>(pymemcache_rendezvous_pick(server_words_, key));
        case Scheme::pymemcache_rendezvous_bytes:
            return static_cast<std::uint32_t>(pymemcache_rendezvous_pick_bytes(server_words_, key));
        case Scheme::libmemcached_consistent:
            return key_hash(distribution_.hash, key);
        case Scheme::libmemcached_modula:
            return servers_ == 0
                       ? 0
                       : key_hash(distribution_.hash, key) % static_cast<std::uint32_t>(servers_);
        case Scheme::gomemcache:
            // gomemcache copies the key into a 256-byte buffer first (memcached keys are at
            // most 250 bytes, so only an over-long key is cut).
            return servers_ == 0
                       ? 0
                       : crc32_ieee(key.substr(0, 256)) % static_cast<std::uint32_t>(servers_);
        case Scheme::dalli:
            return ~crc32_ieee(key);
        case Scheme::cache_memcached:
            return total_weight_ == 0
                       ? 0
                       : static_cast<std::uint32_t>(crc32_high15(key) % total_weight_);
        case Scheme::cache_memcached_fast:
            return total_weight_ == 0 ? 0 : cache_memcached_fast_position(key, total_weight_);
        case Scheme::pecl_memcache_standard: {
            if (total_weight_ == 0) return 0;
            const std::uint32_t h = (pecl_hash(distribution_.hash, key) >> 16) & 0x7fffu;
            return static_cast<std::uint32_t>((h != 0 ? h : 1) % total_weight_);
        }
        case Scheme::pecl_memcache_consistent:
            return pecl_hash(distribution_.hash, key) % pecl_buckets;
    }
    return md5_word(md5(key), 0);
}

void Continuum::key_positions(std::span<const std::string_view> keys,
                              std::span<std::uint32_t> out) const noexcept {
    const bool md5_keys = (distribution_.scheme == Scheme::ketama_libmemcached &&
                           distribution_.hash == KeyHash::md5) ||
                          distribution_.scheme == Scheme::ketama_spymemcached;
    if (md5_keys) {
        md5_first_words(keys, out);
        return;
    }
    for (std::size_t i = 0; i < keys.size(); ++i)
        out[i] = key_position(keys[i]);
}

std::size_t Continuum::point_index(std::string_view key) const noexcept {
    return point_index_at(key_position(key));
}

std::size_t Continuum::point_index_at(std::uint32_t position) const noexcept {
    // The indexed schemes' points sit at 0..n-1, so a position is its own point.
    if (indexed_) return position < points_.size() ? position : 0;
    // The first point at or after the key (a "ceiling"); past the last point, wrap around.
    // Only the points of the key's bucket can be smaller than it; the answer is among them or
    // is the next bucket's first point.
    const std::uint32_t bucket = bucket_bits_ == 0 ? 0 : position >> (32 - bucket_bits_);
    const auto first = points_.begin() + (buckets_.empty() ? 0 : buckets_[bucket]);
    const auto last = buckets_.empty() ? points_.end() : points_.begin() + buckets_[bucket + 1];
    const auto it =
        std::lower_bound(first, last, position,
                         [](const Point& p, std::uint32_t value) { return p.position < value; });
    return it == points_.end() ? 0 : static_cast<std::size_t>(it - points_.begin());
}

}  // namespace folsom::cluster
