// SpookyHash V2 (Bob Jenkins, 2012; public domain), one-shot form: the hash mcrouter weighs
// servers with (WeightedCh3: Hash32 of the key, seed 0xface2014, against the server's weight)
// and folly ships as folly::hash::SpookyHashV2. Its results are those of little-endian hosts
// (where mcrouter runs), whatever the host: words are read little-endian.
//
// Not mcrouter's Ch3 placement itself: that is furc_hash (furc_hash.hpp), over MurmurHash64A.
#pragma once

#include <cstdint>
#include <string_view>

namespace folsom::cluster {

/// The 128-bit hash of `data`: {first, second} word. `seed1` and `seed2` seed the two halves
/// (folly's Hash128 in/out arguments).
struct Spooky128 {
    std::uint64_t first;
    std::uint64_t second;
};
Spooky128 spooky_hash_v2_128(std::string_view data, std::uint64_t seed1,
                             std::uint64_t seed2) noexcept;

/// folly's SpookyHashV2::Hash64: the first word, both halves seeded with `seed`.
inline std::uint64_t spooky_hash_v2_64(std::string_view data, std::uint64_t seed) noexcept {
    return spooky_hash_v2_128(data, seed, seed).first;
}

/// folly's SpookyHashV2::Hash32: the low 32 bits of the first word, both halves seeded with
/// `seed` (the one mcrouter's WeightedCh3 uses).
inline std::uint32_t spooky_hash_v2_32(std::string_view data, std::uint32_t seed) noexcept {
    return static_cast<std::uint32_t>(spooky_hash_v2_128(data, seed, seed).first);
}

}  // namespace folsom::cluster
