/// @file
/// Distribution: how a client places keys on its servers, chosen to match the client a service
/// moves from, so that its cache stays where it is (docs/placement.md has the table).
///
/// A Distribution is a scheme (whose placement) and, for the schemes that let their users pick
/// one, a key hash. Each scheme reproduces its client key by key; the tests ask the real
/// client, installed from Debian 12, where 10,000 keys go on 3 and on 10 servers:
///
/// | scheme                    | client and setting                                         |
/// |---------------------------|------------------------------------------------------------|
/// | ketama_libmemcached       | libmemcached KETAMA_WEIGHTED (pylibmc "ketama_weighted",   |
/// |                           | php-memcached LIBKETAMA_COMPATIBLE); key hash md5 unless   |
/// |                           | MEMCACHED_BEHAVIOR_HASH changed it afterwards              |
/// | libmemcached_consistent   | libmemcached DISTRIBUTION_CONSISTENT / BEHAVIOR_KETAMA      |
/// |                           | without weights: 100 points a server, points and keys by   |
/// |                           | the key hash (one_at_a_time unless set); a weight above 1  |
/// |                           | makes it weighted MD5 points, as in libmemcached           |
/// | libmemcached_modula       | libmemcached's default: hash(key) % servers                |
/// | ketama_spymemcached       | spymemcached KetamaNodeLocator                             |
/// | folsom_murmur             | Spotify Folsom's KetamaMemcacheClient                      |
/// | mcrouter_ch3              | mcrouter's Ch3                                             |
/// | pymemcache_rendezvous     | pymemcache HashClient (RendezvousHash over murmur3)        |
/// | pymemcache_rendezvous_    | the same, for a key the program gives pymemcache as bytes  |
/// | bytes                     | (pymemcache 3.5 hashes its repr, "b'key'")                 |
/// | gomemcache                | bradfitz/gomemcache ServerList: crc32(key) % servers       |
/// | dalli                     | Ruby Dalli::Ring: SHA1 points, crc32 keys, weights         |
/// | cache_memcached           | Perl Cache::Memcached: crc32 buckets, weights              |
/// | cache_memcached_fast      | Perl Cache::Memcached::Fast, default (ketama_points 0)     |
/// | pecl_memcache_consistent  | PHP pecl-memcache, hash_strategy=consistent (its default), |
/// |                           | hash_function crc32 (default) or fnv                       |
/// | pecl_memcache_standard    | PHP pecl-memcache, hash_strategy=standard                  |
///
/// The libmemcached hashes are computed as an x86-64 (amd64) libmemcached does: bytes of a
/// key from 0x80 up enter one_at_a_time and the FNV hashes sign-extended, as `char` is signed
/// there (an ARM build differs for such keys).
///
/// Names (Options from text: the CLI's --distribution, Python's distribution=, a route
/// config pool's "hash") are "<scheme>" or "<scheme>:<key hash>", e.g.
/// "libmemcached_modula:crc"; parse_distribution() reads them and distribution_name() writes
/// them.
///
/// Errors: parse_distribution() returns nullopt with one line saying why; distribution_error()
/// names what is wrong with a Distribution built in code, and Client construction refuses such
/// a Distribution with errc::invalid_argument before anything is sent. Ownership: all values;
/// the string_views returned name static text, valid for the program's lifetime.
/// Thread-safety: plain values and pure functions.
#pragma once

#include "folsom/export.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace folsom::cluster {

/// A key hash. The first eleven are libmemcached's memcached_hash_t, in its order and with
/// its numbering (MEMCACHED_HASH_DEFAULT = one_at_a_time = 0, ... MEMCACHED_HASH_MURMUR3 = 10),
/// as libhashkit computes them; crc32 is the whole IEEE CRC-32 (pecl-memcache's "crc32").
enum class KeyHash : std::uint8_t {
    one_at_a_time = 0,  ///< MEMCACHED_HASH_DEFAULT: libmemcached's default
    md5 = 1,            ///< MEMCACHED_HASH_MD5: the digest's first 4 bytes, little-endian
    crc = 2,            ///< MEMCACHED_HASH_CRC: (crc32 >> 16) & 0x7fff
    fnv1_64 = 3,        ///< MEMCACHED_HASH_FNV1_64 (its low 32 bits)
    fnv1a_64 = 4,       ///< MEMCACHED_HASH_FNV1A_64 (libmemcached's 32-bit variant)
    fnv1_32 = 5,        ///< MEMCACHED_HASH_FNV1_32
    fnv1a_32 = 6,       ///< MEMCACHED_HASH_FNV1A_32; pecl-memcache's "fnv"
    hsieh = 7,          ///< MEMCACHED_HASH_HSIEH: not supported (see distribution_error)
    murmur = 8,         ///< MEMCACHED_HASH_MURMUR: MurmurHash2, seed 0xdeadbeef * length
    jenkins = 9,        ///< MEMCACHED_HASH_JENKINS: lookup3 hashlittle
    murmur3 = 10,       ///< MEMCACHED_HASH_MURMUR3: x86_32, seed 0xdeadbeef * length
    crc32 = 11,         ///< the whole CRC-32 (zlib's crc32); not one of libmemcached's
};

/// The 32-bit hash `hash` gives `data`, as libhashkit's libhashkit_digest() does for the
/// libmemcached hashes. Never allocates. KeyHash::hsieh answers 1, as a libmemcached built
/// without it (Debian's) does.
FOLSOM_EXPORT std::uint32_t key_hash(KeyHash hash, std::string_view data) noexcept;

/// The hash's name as the Distribution names take it: "one_at_a_time", "md5", "crc", "fnv1_64",
/// "fnv1a_64", "fnv1_32", "fnv1a_32", "hsieh", "murmur", "jenkins", "murmur3", "crc32".
FOLSOM_EXPORT std::string_view key_hash_name(KeyHash hash) noexcept;

/// How keys are placed: whose placement (scheme) and with which key hash.
struct Distribution {
    /// Whose placement (see the table above).
    enum class Scheme : std::uint8_t {
        ketama_libmemcached,       ///< libmemcached's weighted ketama (MD5 points)
        ketama_spymemcached,       ///< spymemcached's KetamaNodeLocator
        folsom_murmur,             ///< Spotify Folsom's ketama
        mcrouter_ch3,              ///< mcrouter's Ch3
        pymemcache_rendezvous,     ///< pymemcache's HashClient
        libmemcached_modula,       ///< libmemcached's MODULA
        libmemcached_consistent,   ///< libmemcached's unweighted CONSISTENT
        gomemcache,                ///< gomemcache's ServerList
        dalli,                     ///< Ruby Dalli's ring
        cache_memcached,           ///< Perl Cache::Memcached
        cache_memcached_fast,      ///< Perl Cache::Memcached::Fast, compatible mode
        pecl_memcache_consistent,  ///< PHP pecl-memcache, consistent strategy
        pecl_memcache_standard,    ///< PHP pecl-memcache, standard strategy
        /// pymemcache's HashClient for keys given to it as bytes, which it hashes as their
        /// repr ("b'key'"); a str key there is hashed as its characters (pymemcache_rendezvous).
        pymemcache_rendezvous_bytes,
    };

    Scheme scheme = Scheme::ketama_libmemcached;  ///< whose placement
    /// The key hash. Only libmemcached's schemes take any of the first eleven, and
    /// pecl-memcache's crc32 or fnv1a_32; the other schemes have their own fixed hash and take
    /// only their default here (distribution_error says which).
    KeyHash hash = KeyHash::md5;

    /// This scheme with another key hash.
    constexpr Distribution with_hash(KeyHash h) const noexcept { return {scheme, h}; }
    /// Same scheme and same hash.
    friend constexpr bool operator==(const Distribution&, const Distribution&) = default;

    // Each scheme with its client's default hash.
    static const Distribution ketama_libmemcached;       ///< libmemcached KETAMA_WEIGHTED, md5
    static const Distribution ketama_spymemcached;       ///< spymemcached's KetamaNodeLocator
    static const Distribution folsom_murmur;             ///< Spotify Folsom's ketama
    static const Distribution mcrouter_ch3;              ///< mcrouter's Ch3
    static const Distribution pymemcache_rendezvous;     ///< pymemcache's HashClient
    static const Distribution libmemcached_modula;       ///< libmemcached's default, one_at_a_time
    static const Distribution libmemcached_consistent;   ///< unweighted, one_at_a_time
    static const Distribution gomemcache;                ///< gomemcache's ServerList
    static const Distribution dalli;                     ///< Ruby Dalli
    static const Distribution cache_memcached;           ///< Perl Cache::Memcached
    static const Distribution cache_memcached_fast;      ///< Perl Cache::Memcached::Fast
    static const Distribution pecl_memcache_consistent;  ///< PHP pecl-memcache's default, crc32
    static const Distribution pecl_memcache_standard;    ///< PHP pecl-memcache, standard, crc32
    static const Distribution pymemcache_rendezvous_bytes;  ///< pymemcache's, bytes keys
};

inline constexpr Distribution Distribution::ketama_libmemcached{Scheme::ketama_libmemcached,
                                                                KeyHash::md5};
inline constexpr Distribution Distribution::ketama_spymemcached{Scheme::ketama_spymemcached,
                                                                KeyHash::md5};
inline constexpr Distribution Distribution::folsom_murmur{Scheme::folsom_murmur, KeyHash::md5};
inline constexpr Distribution Distribution::mcrouter_ch3{Scheme::mcrouter_ch3, KeyHash::md5};
inline constexpr Distribution Distribution::pymemcache_rendezvous{Scheme::pymemcache_rendezvous,
                                                                  KeyHash::md5};
inline constexpr Distribution Distribution::libmemcached_modula{Scheme::libmemcached_modula,
                                                                KeyHash::one_at_a_time};
inline constexpr Distribution Distribution::libmemcached_consistent{Scheme::libmemcached_consistent,
                                                                    KeyHash::one_at_a_time};
inline constexpr Distribution Distribution::gomemcache{Scheme::gomemcache, KeyHash::crc32};
inline constexpr Distribution Distribution::dalli{Scheme::dalli, KeyHash::crc32};
inline constexpr Distribution Distribution::cache_memcached{Scheme::cache_memcached, KeyHash::crc};
inline constexpr Distribution Distribution::cache_memcached_fast{Scheme::cache_memcached_fast,
                                                                 KeyHash::crc};
inline constexpr Distribution Distribution::pecl_memcache_consistent{
    Scheme::pecl_memcache_consistent, KeyHash::crc32};
inline constexpr Distribution Distribution::pecl_memcache_standard{Scheme::pecl_memcache_standard,
                                                                   KeyHash::crc32};
inline constexpr Distribution Distribution::pymemcache_rendezvous_bytes{
    Scheme::pymemcache_rendezvous_bytes, KeyHash::md5};

/// "" when `d` is a placement folsom can make; otherwise one line saying why not (a hash the
/// scheme does not take, hsieh, an unknown scheme).
FOLSOM_EXPORT std::string distribution_error(Distribution d);

/// Reads "<scheme>" or "<scheme>:<key hash>" (see the table; also "ketama" for
/// ketama_libmemcached, "modula" for libmemcached_modula, "pymemcache" for
/// pymemcache_rendezvous, "pecl_memcache" for pecl_memcache_consistent and "Ch3" for
/// mcrouter_ch3; pecl-memcache's "fnv" for fnv1a_32, libmemcached's "default" for
/// one_at_a_time). Without a hash, the scheme's default. nullopt, with *why set to one line
/// listing the names, for anything else or a distribution_error().
FOLSOM_EXPORT std::optional<Distribution> parse_distribution(std::string_view name,
                                                             std::string* why = nullptr);

/// The name parse_distribution() reads back: "<scheme>", or "<scheme>:<hash>" when the hash is
/// not the scheme's default.
FOLSOM_EXPORT std::string distribution_name(Distribution d);

}  // namespace folsom::cluster
