// libmemcached's key hashes, for modula placement and memcached_generate_hash_value().
//
// Stopgap: the core is getting libmemcached's modula distribution with all its hashes
// (src/cluster/hash/, issue 39); once it has landed these move there and this file calls it.
// Until then the drop-in has one_at_a_time (libmemcached's default), MD5, CRC and the four
// FNV-1 variants; HSIEH, MURMUR, MURMUR3 and JENKINS are refused (MEMCACHED_NOT_SUPPORTED)
// rather than placing keys where libmemcached would not.
#include "cluster/md5.hpp"
#include "handle.hpp"

#include <zlib.h>

namespace folsom::compat {

namespace {

std::uint32_t one_at_a_time(std::string_view key) noexcept {
    std::uint32_t h = 0;
    for (const char c : key) {
        h += static_cast<unsigned char>(c);
        h += h << 10;
        h ^= h >> 6;
    }
    h += h << 3;
    h ^= h >> 11;
    h += h << 15;
    return h;
}

constexpr std::uint64_t fnv64_offset = 0xcbf29ce484222325ULL;
constexpr std::uint64_t fnv64_prime = 0x100000001b3ULL;
constexpr std::uint32_t fnv32_offset = 2166136261U;
constexpr std::uint32_t fnv32_prime = 16777619U;

template <class T>
T fnv1(std::string_view key, T offset, T prime, bool xor_first) noexcept {
    T h = offset;
    for (const char c : key) {
        const auto b = static_cast<unsigned char>(c);
        if (xor_first) {
            h ^= b;
            h *= prime;
        } else {
            h *= prime;
            h ^= b;
        }
    }
    return h;
}

}  // namespace

bool hash_value(memcached_hash_t hash, std::string_view key, std::uint32_t& out) noexcept {
    switch (hash) {
        case MEMCACHED_HASH_DEFAULT:
            out = one_at_a_time(key);
            return true;
        case MEMCACHED_HASH_MD5:
            out = cluster::md5_word(cluster::md5(key), 0);
            return true;
        case MEMCACHED_HASH_CRC: {
            const auto crc = static_cast<std::uint32_t>(crc32(
                0, reinterpret_cast<const Bytef*>(key.data()), static_cast<uInt>(key.size())));
            out = (crc >> 16) & 0x7fff;
            return true;
        }
        case MEMCACHED_HASH_FNV1_64:
            out = static_cast<std::uint32_t>(fnv1(key, fnv64_offset, fnv64_prime, false));
            return true;
        case MEMCACHED_HASH_FNV1A_64:
            out = static_cast<std::uint32_t>(fnv1(key, fnv64_offset, fnv64_prime, true));
            return true;
        case MEMCACHED_HASH_FNV1_32:
            out = fnv1(key, fnv32_offset, fnv32_prime, false);
            return true;
        case MEMCACHED_HASH_FNV1A_32:
            out = fnv1(key, fnv32_offset, fnv32_prime, true);
            return true;
        default:
            return false;
    }
}

}  // namespace folsom::compat

uint32_t memcached_generate_hash_value(const char* key, size_t key_length,
                                       memcached_hash_t hash_algorithm) {
    std::uint32_t v = 0;
    folsom::compat::hash_value(hash_algorithm,
                               std::string_view(key ? key : "", key ? key_length : 0), v);
    return v;
}

uint32_t memcached_generate_hash(const memcached_st* ptr, const char* key, size_t key_length) {
    const auto* h = folsom::compat::handle_of(ptr);
    if (!h || h->servers.empty()) return 0;
    return static_cast<uint32_t>(
        h->server_for(std::string_view(key ? key : "", key ? key_length : 0)));
}

const hashkit_st* memcached_get_hashkit(const memcached_st* ptr) {
    return ptr ? &ptr->hashkit : nullptr;
}

memcached_return_t memcached_set_hashkit(memcached_st* ptr, hashkit_st*) {
    auto* h = folsom::compat::handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    return folsom::compat::set_error(*h, MEMCACHED_NOT_SUPPORTED,
                                     "memcached_set_hashkit: custom hashkits are not supported by "
                                     "folsom's libmemcached drop-in");
}
