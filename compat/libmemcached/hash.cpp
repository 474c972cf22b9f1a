// libmemcached's key hashes, for modula placement and memcached_generate_hash_value().
//
// Each is the published algorithm with the parameters libmemcached 1.1.4 gives it (its seeds
// and initial values were found by comparing with Debian's memcached_generate_hash_value, as
// tests/compat/libmemcached does on every run): one_at_a_time (the default), MD5, CRC32's
// high bits, FNV-1 and FNV-1a in 32 and 64 bits, MurmurHash2 and MurmurHash3 (x86, 32-bit)
// seeded with 0xdeadbeef * length, Jenkins' lookup3 (hashlittle) with initval 13.
// HSIEH is refused (MEMCACHED_NOT_SUPPORTED): Debian's libmemcached is built without it and
// hashes every key to 1.
//
// The core is getting libmemcached's modula distribution with its hashes (src/cluster/hash/,
// issue 39), but compat/ sees only folsom's public headers: once they are public, this file
// calls them instead.
#include "handle.hpp"

#include <openssl/evp.h>

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

std::uint32_t load32(const unsigned char* p) noexcept {
    return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
           static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

constexpr std::uint32_t rotl(std::uint32_t x, int k) noexcept {
    return (x << k) | (x >> (32 - k));
}

// Austin Appleby's MurmurHash2.
std::uint32_t murmur2(std::string_view key) noexcept {
    constexpr std::uint32_t m = 0x5bd1e995;
    const auto len = static_cast<std::uint32_t>(key.size());
    std::uint32_t h = (0xdeadbeefU * len) ^ len;
    const auto* p = reinterpret_cast<const unsigned char*>(key.data());
    std::size_t n = key.size();
    for (; n >= 4; n -= 4, p += 4) {
        std::uint32_t k = load32(p);
        k *= m;
        k ^= k >> 24;
        k *= m;
        h *= m;
        h ^= k;
    }
    switch (n) {
        case 3:
            h ^= static_cast<std::uint32_t>(p[2]) << 16;
            [[fallthrough]];
        case 2:
            h ^= static_cast<std::uint32_t>(p[1]) << 8;
            [[fallthrough]];
        case 1:
            h ^= p[0];
            h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}

// Austin Appleby's MurmurHash3, x86 32-bit.
std::uint32_t murmur3(std::string_view key) noexcept {
    constexpr std::uint32_t c1 = 0xcc9e2d51, c2 = 0x1b873593;
    const auto len = static_cast<std::uint32_t>(key.size());
    std::uint32_t h = 0xdeadbeefU * len;
    const auto* p = reinterpret_cast<const unsigned char*>(key.data());
    std::size_t n = key.size();
    for (; n >= 4; n -= 4, p += 4) {
        std::uint32_t k = load32(p);
        k *= c1;
        k = rotl(k, 15);
        k *= c2;
        h ^= k;
        h = rotl(h, 13);
        h = h * 5 + 0xe6546b64;
    }
    std::uint32_t k = 0;
    switch (n) {
        case 3:
            k ^= static_cast<std::uint32_t>(p[2]) << 16;
            [[fallthrough]];
        case 2:
            k ^= static_cast<std::uint32_t>(p[1]) << 8;
            [[fallthrough]];
        case 1:
            k ^= p[0];
            k *= c1;
            k = rotl(k, 15);
            k *= c2;
            h ^= k;
    }
    h ^= len;
    h ^= h >> 16;
    h *= 0x85ebca6b;
    h ^= h >> 13;
    h *= 0xc2b2ae35;
    h ^= h >> 16;
    return h;
}

// Bob Jenkins' lookup3 hashlittle, byte by byte (any alignment).
std::uint32_t jenkins(std::string_view key) noexcept {
    std::uint32_t a, b, c;
    a = b = c = 0xdeadbeefU + static_cast<std::uint32_t>(key.size()) + 13;
    const auto* k = reinterpret_cast<const unsigned char*>(key.data());
    std::size_t n = key.size();
    const auto word = [](const unsigned char* q, std::size_t m) {
        std::uint32_t w = 0;
        for (std::size_t i = 0; i < m; ++i)
            w |= static_cast<std::uint32_t>(q[i]) << (8 * i);
        return w;
    };
    for (; n > 12; n -= 12, k += 12) {
        a += load32(k);
        b += load32(k + 4);
        c += load32(k + 8);
        a -= c;
        a ^= rotl(c, 4);
        c += b;  // NOLINT
        b -= a;
        b ^= rotl(a, 6);
        a += c;  // NOLINT
        c -= b;
        c ^= rotl(b, 8);
        b += a;  // NOLINT
        a -= c;
        a ^= rotl(c, 16);
        c += b;  // NOLINT
        b -= a;
        b ^= rotl(a, 19);
        a += c;  // NOLINT
        c -= b;
        c ^= rotl(b, 4);
        b += a;  // NOLINT
    }
    if (n == 0) return c;
    a += word(k, n < 4 ? n : 4);
    if (n > 4) b += word(k + 4, n < 8 ? n - 4 : 4);
    if (n > 8) c += word(k + 8, n - 8);
    c ^= b;
    c -= rotl(b, 14);  // NOLINT
    a ^= c;
    a -= rotl(c, 11);  // NOLINT
    b ^= a;
    b -= rotl(a, 25);  // NOLINT
    c ^= b;
    c -= rotl(b, 16);  // NOLINT
    a ^= c;
    a -= rotl(c, 4);  // NOLINT
    b ^= a;
    b -= rotl(a, 14);  // NOLINT
    c ^= b;
    c -= rotl(b, 24);  // NOLINT
    return c;
}

}  // namespace

bool hash_value(memcached_hash_t hash, std::string_view key, std::uint32_t& out) noexcept {
    switch (hash) {
        case MEMCACHED_HASH_DEFAULT:
            out = one_at_a_time(key);
            return true;
        case MEMCACHED_HASH_MD5: {
            // The digest's first four bytes, read little-endian.
            unsigned char d[EVP_MAX_MD_SIZE];
            unsigned int n = 0;
            if (!EVP_Digest(key.data(), key.size(), d, &n, EVP_md5(), nullptr) || n < 4)
                return false;
            out = static_cast<std::uint32_t>(d[0]) | static_cast<std::uint32_t>(d[1]) << 8 |
                  static_cast<std::uint32_t>(d[2]) << 16 | static_cast<std::uint32_t>(d[3]) << 24;
            return true;
        }
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
        case MEMCACHED_HASH_MURMUR:
            out = murmur2(key);
            return true;
        case MEMCACHED_HASH_MURMUR3:
            out = murmur3(key);
            return true;
        case MEMCACHED_HASH_JENKINS:
            out = jenkins(key);
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
