// Distribution names and validity: what parse_distribution() reads, distribution_name() writes
// and distribution_error() refuses.
#include "folsom/cluster/distribution.hpp"

#include <array>
#include <utility>

namespace folsom::cluster {
namespace {

using Scheme = Distribution::Scheme;

struct SchemeName {
    Scheme scheme;
    std::string_view name;
    KeyHash default_hash;
};

constexpr std::array<SchemeName, 14> schemes = {{
    {Scheme::ketama_libmemcached, "ketama_libmemcached", KeyHash::md5},
    {Scheme::ketama_spymemcached, "ketama_spymemcached", KeyHash::md5},
    {Scheme::folsom_murmur, "folsom_murmur", KeyHash::md5},
    {Scheme::mcrouter_ch3, "mcrouter_ch3", KeyHash::md5},
    {Scheme::pymemcache_rendezvous, "pymemcache_rendezvous", KeyHash::md5},
    {Scheme::libmemcached_modula, "libmemcached_modula", KeyHash::one_at_a_time},
    {Scheme::libmemcached_consistent, "libmemcached_consistent", KeyHash::one_at_a_time},
    {Scheme::gomemcache, "gomemcache", KeyHash::crc32},
    {Scheme::dalli, "dalli", KeyHash::crc32},
    {Scheme::cache_memcached, "cache_memcached", KeyHash::crc},
    {Scheme::cache_memcached_fast, "cache_memcached_fast", KeyHash::crc},
    {Scheme::pecl_memcache_consistent, "pecl_memcache_consistent", KeyHash::crc32},
    {Scheme::pecl_memcache_standard, "pecl_memcache_standard", KeyHash::crc32},
    {Scheme::pymemcache_rendezvous_bytes, "pymemcache_rendezvous_bytes", KeyHash::md5},
}};

constexpr std::array<std::pair<std::string_view, Scheme>, 5> scheme_aliases = {{
    {"ketama", Scheme::ketama_libmemcached},
    {"modula", Scheme::libmemcached_modula},
    {"pymemcache", Scheme::pymemcache_rendezvous},
    {"pecl_memcache", Scheme::pecl_memcache_consistent},
    {"Ch3", Scheme::mcrouter_ch3},
}};

constexpr std::array<KeyHash, 12> hashes = {
    KeyHash::one_at_a_time, KeyHash::md5,     KeyHash::crc,      KeyHash::fnv1_64,
    KeyHash::fnv1a_64,      KeyHash::fnv1_32, KeyHash::fnv1a_32, KeyHash::hsieh,
    KeyHash::murmur,        KeyHash::jenkins, KeyHash::murmur3,  KeyHash::crc32};

const SchemeName* find_scheme(Scheme s) noexcept {
    for (const auto& n : schemes)
        if (n.scheme == s) return &n;
    return nullptr;
}

bool libmemcached_scheme(Scheme s) noexcept {
    return s == Scheme::ketama_libmemcached || s == Scheme::libmemcached_consistent ||
           s == Scheme::libmemcached_modula;
}

bool pecl_scheme(Scheme s) noexcept {
    return s == Scheme::pecl_memcache_consistent || s == Scheme::pecl_memcache_standard;
}

std::string known_names() {
    std::string text;
    for (const auto& n : schemes) {
        if (!text.empty()) text += ", ";
        text += n.name;
    }
    return text;
}

}  // namespace

std::string distribution_error(Distribution d) {
    const SchemeName* scheme = find_scheme(d.scheme);
    if (scheme == nullptr) return "unknown distribution scheme";
    const std::string name(scheme->name);
    if (d.hash == KeyHash::hsieh)
        return name +
               ": the hsieh hash is not supported (Debian's libmemcached is built without "
               "it, and refuses MEMCACHED_HASH_HSIEH)";
    if (libmemcached_scheme(d.scheme)) {
        if (d.hash == KeyHash::crc32)
            return name +
                   " takes libmemcached's hashes (one_at_a_time, md5, crc, fnv1_64, "
                   "fnv1a_64, fnv1_32, fnv1a_32, murmur, jenkins, murmur3), not crc32";
        return "";
    }
    if (pecl_scheme(d.scheme)) {
        if (d.hash != KeyHash::crc32 && d.hash != KeyHash::fnv1a_32)
            return name +
                   " takes pecl-memcache's memcache.hash_function: crc32 or fnv (fnv1a_32), "
                   "not " +
                   std::string(key_hash_name(d.hash));
        return "";
    }
    if (d.hash != scheme->default_hash)
        return name + " has its own fixed hash and takes no other (not " +
               std::string(key_hash_name(d.hash)) + ")";
    return "";
}

std::optional<Distribution> parse_distribution(std::string_view name, std::string* why) {
    auto refuse = [&](std::string text) -> std::optional<Distribution> {
        if (why != nullptr) *why = std::move(text);
        return std::nullopt;
    };
    const auto colon = name.find(':');
    const std::string_view scheme_text = name.substr(0, colon);
    const SchemeName* scheme = nullptr;
    for (const auto& n : schemes)
        if (n.name == scheme_text) scheme = &n;
    for (const auto& [alias, s] : scheme_aliases)
        if (alias == scheme_text) scheme = find_scheme(s);
    if (scheme == nullptr)
        return refuse("unknown distribution '" + std::string(name) + "' (expected one of " +
                      known_names() + ", optionally followed by ':<hash>')");
    Distribution d{scheme->scheme, scheme->default_hash};
    if (colon != std::string_view::npos) {
        const std::string_view hash_text = name.substr(colon + 1);
        std::optional<KeyHash> hash;
        for (const KeyHash h : hashes)
            if (key_hash_name(h) == hash_text) hash = h;
        if (hash_text == "default") hash = KeyHash::one_at_a_time;  // libmemcached's name
        if (hash_text == "fnv") hash = KeyHash::fnv1a_32;           // pecl-memcache's name
        if (!hash) {
            std::string known;
            for (const KeyHash h : hashes) {
                if (!known.empty()) known += ", ";
                known += key_hash_name(h);
            }
            return refuse("unknown hash '" + std::string(hash_text) + "' in distribution '" +
                          std::string(name) + "' (expected one of " + known + ")");
        }
        d.hash = *hash;
    }
    if (std::string error = distribution_error(d); !error.empty())
        return refuse("distribution '" + std::string(name) + "': " + error);
    return d;
}

std::string distribution_name(Distribution d) {
    const SchemeName* scheme = find_scheme(d.scheme);
    if (scheme == nullptr) return "?";
    std::string name(scheme->name);
    if (d.hash != scheme->default_hash) {
        name += ':';
        name += key_hash_name(d.hash);
    }
    return name;
}

}  // namespace folsom::cluster
