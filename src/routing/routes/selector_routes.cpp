#include "routing/routes/selector_routes.hpp"

#include "folsom/config.hpp"

#include "cluster/hash/furc_hash.hpp"
#include "cluster/hash/md5.hpp"
#include "cluster/hash/weighted_ch3.hpp"
#include "routing/operation_names.hpp"

#include <algorithm>
#include <cstring>
#if FOLSOM_HAVE_ZLIB
#include <zlib.h>
#endif

namespace folsom::routing {

PrefixSelectorRoute::PrefixSelectorRoute(RouteCounters& counters,
                                         std::vector<std::pair<std::string, Route*>> policies,
                                         Route* wildcard, Route& no_match)
    : Route(counters), policies_(std::move(policies)), wildcard_(wildcard ? wildcard : &no_match) {
    std::stable_sort(policies_.begin(), policies_.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

OperationSelectorRoute::OperationSelectorRoute(
    RouteCounters& counters, const std::vector<std::pair<std::string, Route*>>& policies,
    Route* default_policy, Route& no_match)
    : Route(counters) {
    by_code_.fill(default_policy ? default_policy : &no_match);
    for (const auto& [name, child] : policies) {
        // validate() refused any other name.
        if (const OperationName* op = find_operation(name)) {
            by_code_[static_cast<std::size_t>(op->code)] = child;
            by_code_[static_cast<std::size_t>(op->meta)] = child;
        }
    }
}

HashRoute::HashRoute(RouteCounters& counters, std::vector<Route*> children, Function f,
                     std::string salt, std::vector<double> weights)
    : Route(counters),
      children_(std::move(children)),
      function_(f),
      salt_(std::move(salt)),
      weights_(std::move(weights)) {}

std::size_t hash_route_child(HashFunction f, std::string_view key, std::string_view salt,
                             std::size_t n, std::span<const double> weights) noexcept {
    if (n <= 1) return 0;
    if (salt.size() > 256) salt = salt.substr(0, 256);  // refused at load; kept in bounds here
    // key + salt, contiguous, on the stack (mcrouter hashes the two as one string). Keys are at
    // most 250 bytes and salts 256 (checked at load), which leaves WeightedCh3 room for its
    // own two-digit salts without allocating.
    char buf[512];
    std::string_view hashable = key;
    if (key.size() + salt.size() > sizeof buf - 2) {
        // An over-long key is refused by the pool it reaches; any child will do for it.
        hashable = key.substr(0, sizeof buf - 2 - salt.size());
    }
    if (!salt.empty()) {
        std::memcpy(buf, hashable.data(), hashable.size());
        std::memcpy(buf + hashable.size(), salt.data(), salt.size());
        hashable = std::string_view(buf, hashable.size() + salt.size());
    }
    switch (f) {
        case HashFunction::ch3:
            return cluster::furc_hash(hashable, static_cast<std::uint32_t>(std::min<std::size_t>(
                                                    n, cluster::furc_max_servers)));
        case HashFunction::weighted_ch3:
            return cluster::weighted_ch3(hashable, weights.first(std::min(n, weights.size())));
        case HashFunction::crc32: {
#if FOLSOM_HAVE_ZLIB
            const uLong c = crc32(0L, reinterpret_cast<const Bytef*>(hashable.data()),
                                  static_cast<uInt>(hashable.size()));
            // mcrouter's Crc32HashFunc drops the top bit before the modulo.
            return (static_cast<std::uint32_t>(c) & 0x7fffffffu) % n;
#else
            // Not reached: RouteConfig::validate refuses Crc32 (errc::built_without_zlib)
            // before a tree is built; md5 keeps placement defined all the same.
            return cluster::md5_word(cluster::md5(hashable), 0) % n;
#endif
        }
        case HashFunction::md5:
            return cluster::md5_word(cluster::md5(hashable), 0) % n;
    }
    return 0;
}

}  // namespace folsom::routing
