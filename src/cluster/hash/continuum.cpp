#include "folsom/cluster/continuum.hpp"

#include "cluster/hash/furc_hash.hpp"
#include "cluster/hash/md5.hpp"
#include "cluster/hash/md5_lanes.hpp"
#include "cluster/hash/murmur3.hpp"
#include "cluster/hash/pymemcache_rendezvous.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

namespace folsom::cluster {
namespace {

using Point = Continuum::Point;

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

void add_md5_points(std::string_view name, std::uint32_t server, std::vector<Point>& out) {
    const Md5Digest digest = md5(name);
    for (unsigned w = 0; w < ketama_points_per_digest; ++w) {
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
std::vector<Point> libmemcached_ring(std::span<const ServerAddress> servers) {
    std::vector<Point> points;
    points.reserve(servers.size() * ketama_points_per_server);
    const std::uint64_t total = total_weight(servers);
    std::string name;
    for (std::uint32_t s = 0; s < servers.size(); ++s) {
        const ServerAddress& server = servers[s];
        std::string prefix = server.host;
        // A Unix socket server's port is 0 in libmemcached (memcached_server_add_unix_socket),
        // and 0 is not the default port: its points are "<path>:0-<i>".
        const std::uint16_t port = server.is_unix_socket() ? 0 : server.port;
        if (port != default_memcached_port) {
            prefix += ':';
            prefix += std::to_string(port);
        }
        prefix += '-';
        const std::uint32_t digests = weighted_digests(server.weight, total, servers.size());
        for (std::uint32_t i = 0; i < digests; ++i) {
            name = prefix;
            name += std::to_string(i);
            add_md5_points(name, s, points);
        }
    }
    std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
        return a.position != b.position ? a.position < b.position : a.server < b.server;
    });
    return points;
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
    std::string name;
    for (std::uint32_t s = 0; s < servers.size(); ++s) {
        const ServerAddress& server = servers[s];
        // (libmemcached's spymemcached mode names a Unix socket "/<path>:0-<i>" likewise.)
        const std::uint16_t port = server.is_unix_socket() ? 0 : server.port;
        const std::string prefix = '/' + server.host + ':' + std::to_string(port) + '-';
        const std::uint32_t digests = weighted
                                          ? weighted_digests(server.weight, total, servers.size())
                                          : ketama_points_per_server / ketama_points_per_digest;
        for (std::uint32_t i = 0; i < digests; ++i) {
            name = prefix;
            name += std::to_string(i);
            add_md5_points(name, s, points);
        }
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

// Ch3 and rendezvous have no ring: one point per server, at its index, which is where their
// hash puts a key.
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
    : servers_(servers.size()), distribution_(distribution) {
    switch (distribution) {
        case Distribution::ketama_libmemcached:
            points_ = libmemcached_ring(servers);
            break;
        case Distribution::ketama_spymemcached:
            points_ = spymemcached_ring(servers);
            break;
        case Distribution::folsom_murmur:
            points_ = folsom_ring(servers);
            break;
        case Distribution::mcrouter_ch3:
            points_ = index_points(servers.size());
            break;
        case Distribution::pymemcache_rendezvous:
            points_ = index_points(servers.size());
            pymemcache_rendezvous_prepare(servers, server_words_);
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
    switch (distribution_) {
        case Distribution::folsom_murmur:
            return murmur3_32(key) ^ sign_flip;
        case Distribution::mcrouter_ch3:
            return ch3_position(key, servers_);
        case Distribution::pymemcache_rendezvous:
            return static_cast<std::uint32_t>(pymemcache_rendezvous_pick(server_words_, key));
        case Distribution::ketama_libmemcached:
        case Distribution::ketama_spymemcached:
            break;
    }
    return md5_word(md5(key), 0);
}

void Continuum::key_positions(std::span<const std::string_view> keys,
                              std::span<std::uint32_t> out) const noexcept {
    switch (distribution_) {
        case Distribution::folsom_murmur:
            for (std::size_t i = 0; i < keys.size(); ++i)
                out[i] = murmur3_32(keys[i]) ^ sign_flip;
            return;
        case Distribution::mcrouter_ch3:
        case Distribution::pymemcache_rendezvous:
            for (std::size_t i = 0; i < keys.size(); ++i)
                out[i] = key_position(keys[i]);
            return;
        case Distribution::ketama_libmemcached:
        case Distribution::ketama_spymemcached:
            break;
    }
    md5_first_words(keys, out);
}

std::size_t Continuum::point_index(std::string_view key) const noexcept {
    return point_index_at(key_position(key));
}

std::size_t Continuum::point_index_at(std::uint32_t position) const noexcept {
    // Ch3's and rendezvous' points sit at 0..n-1, so a position is its own point.
    if (direct()) return position < points_.size() ? position : 0;
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
