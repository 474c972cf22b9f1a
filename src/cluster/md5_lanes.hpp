// Ketama's key hash for many keys at once: MD5 computed in SIMD lanes.
//
// Why: a multi-get over a libmemcached-compatible ring hashes every key with MD5, and one MD5
// block costs ~650 instructions in OpenSSL's scalar code — more than everything else the
// client does for a key. MD5's 64 steps are one long dependency chain, so a single digest
// cannot go faster; independent keys can share the chain: eight keys per pass, in two groups
// of four 32-bit lanes (GCC/Clang vector extensions: SSE2 on x86-64, NEON on arm64, plain
// scalar code elsewhere). Results are bit-identical to md5_word(md5(key), 0).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace folsom::cluster {

/// out[i] = md5_word(md5(keys[i]), 0) for every i (out.size() must be >= keys.size()).
/// Keys of up to 55 bytes fit one MD5 block and go through the lanes; longer ones (memcached
/// allows 250) are hashed one by one with OpenSSL. Never allocates.
void md5_first_words(std::span<const std::string_view> keys, std::span<std::uint32_t> out) noexcept;

}  // namespace folsom::cluster
