// Ketama's key hash for many keys at once: MD5 computed in SIMD lanes.
//
// Why: a multi-get over a libmemcached-compatible ring hashes every key with MD5, and one MD5
// block in OpenSSL's scalar code costs more than everything else the client does for a key. MD5's
// 64 steps are one long dependency chain, so a single digest cannot go faster; independent keys can
// share the chain: eight keys per pass, in two groups of four 32-bit lanes (GCC/Clang vector
// extensions: SSE2 on x86-64, NEON on arm64, plain scalar code elsewhere), or sixteen, in two
// groups of eight, on an x86-64 CPU with AVX2 (chosen at run time: the build targets every x86-64).
// Results are bit-identical to md5_word(md5(key), 0).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace folsom::cluster {

/// Which lanes md5_first_words uses: the widest the CPU has, or a given width (for tests and
/// benchmarks; avx2 falls back to four lanes where the build has no AVX2 form).
enum class Md5Lanes : std::uint8_t { best, four, avx2 };

/// True when this build has the AVX2 form and this CPU runs it.
bool md5_lanes_avx2_available() noexcept;

/// out[i] = md5_word(md5(keys[i]), 0) for every i (out.size() must be >= keys.size()).
/// Keys of up to 55 bytes fit one MD5 block and go through the lanes; longer ones (memcached
/// allows 250) are hashed one by one with OpenSSL. Never allocates.
void md5_first_words(std::span<const std::string_view> keys, std::span<std::uint32_t> out,
                     Md5Lanes lanes = Md5Lanes::best) noexcept;

}  // namespace folsom::cluster
