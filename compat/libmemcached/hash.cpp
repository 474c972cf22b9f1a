// libmemcached's key hashes: memcached_generate_hash_value() and the hash every placement of
// the drop-in uses (handle.cpp) are folsom's own cluster::key_hash, whose KeyHash numbers are
// libmemcached's memcached_hash_t (checked below). As Debian's libhashkit, it answers 1 for
// HSIEH (Debian's libmemcached is built without it), CUSTOM and unknown numbers.
#include "folsom/cluster/distribution.hpp"

#include "handle.hpp"

namespace folsom::compat {

namespace {

using cluster::KeyHash;

// The two numberings agree, so that a memcached_hash_t converts by value.
static_assert(static_cast<int>(KeyHash::one_at_a_time) == MEMCACHED_HASH_DEFAULT);
static_assert(static_cast<int>(KeyHash::md5) == MEMCACHED_HASH_MD5);
static_assert(static_cast<int>(KeyHash::crc) == MEMCACHED_HASH_CRC);
static_assert(static_cast<int>(KeyHash::fnv1_64) == MEMCACHED_HASH_FNV1_64);
static_assert(static_cast<int>(KeyHash::fnv1a_64) == MEMCACHED_HASH_FNV1A_64);
static_assert(static_cast<int>(KeyHash::fnv1_32) == MEMCACHED_HASH_FNV1_32);
static_assert(static_cast<int>(KeyHash::fnv1a_32) == MEMCACHED_HASH_FNV1A_32);
static_assert(static_cast<int>(KeyHash::hsieh) == MEMCACHED_HASH_HSIEH);
static_assert(static_cast<int>(KeyHash::murmur) == MEMCACHED_HASH_MURMUR);
static_assert(static_cast<int>(KeyHash::jenkins) == MEMCACHED_HASH_JENKINS);
static_assert(static_cast<int>(KeyHash::murmur3) == MEMCACHED_HASH_MURMUR3);
static_assert(MEMCACHED_HASH_CUSTOM == MEMCACHED_HASH_MURMUR3 + 1);

}  // namespace

std::optional<cluster::KeyHash> core_hash(memcached_hash_t hash) noexcept {
    if (hash < MEMCACHED_HASH_DEFAULT || hash >= MEMCACHED_HASH_CUSTOM) return std::nullopt;
    return static_cast<KeyHash>(hash);
}

std::uint32_t hash_value(memcached_hash_t hash, std::string_view key) noexcept {
    const auto h = core_hash(hash);
    return h ? cluster::key_hash(*h, key) : 1;
}

}  // namespace folsom::compat

uint32_t memcached_generate_hash_value(const char* key, size_t key_length,
                                       memcached_hash_t hash_algorithm) {
    return folsom::compat::hash_value(hash_algorithm,
                                      std::string_view(key ? key : "", key ? key_length : 0));
}

uint32_t memcached_generate_hash(const memcached_st* ptr, const char* key, size_t key_length) {
    const auto* h = folsom::compat::handle_of(ptr);
    if (!h) return UINT32_MAX;
    if (h->servers.empty()) return 0;
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
