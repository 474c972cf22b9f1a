#include "cluster/md5_lanes.hpp"

#include "cluster/md5.hpp"

#include <array>
#include <cstddef>
#include <cstring>
#include <utility>

namespace folsom::cluster {

namespace {

// Four 32-bit lanes. 16 bytes is the widest vector every x86-64 has (SSE2) and the widest GCC
// passes between functions without an ABI warning; two groups give the eight keys per pass.
using Lanes = std::uint32_t __attribute__((vector_size(16)));
constexpr std::size_t lane_count = 4;
constexpr std::size_t group_count = 2;
constexpr std::size_t batch = lane_count * group_count;
constexpr std::size_t max_one_block = 55;  // 64 bytes less 0x80 and the 8-byte bit length

// RFC 1321: the sine table and the per-step rotations.
constexpr std::array<std::uint32_t, 64> sine = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};
constexpr std::array<int, 16> rotation = {7, 12, 17, 22, 5, 9,  14, 20,
                                          4, 11, 16, 23, 6, 10, 15, 21};

constexpr std::uint32_t init_a = 0x67452301, init_b = 0xefcdab89, init_c = 0x98badcfe,
                        init_d = 0x10325476;

struct State {
    Lanes a, b, c, d;
};

// Step i of the 64, on one group. Written once with the round as a template argument so that
// every constant (function, message word, rotation) is known where the step is inlined.
template <int I>
[[gnu::always_inline]] inline void step(State& s, const Lanes* m) noexcept {
    Lanes f;
    int g;
    if constexpr (I < 16) {
        f = (s.b & s.c) | (~s.b & s.d);
        g = I;
    } else if constexpr (I < 32) {
        f = (s.d & s.b) | (~s.d & s.c);
        g = (5 * I + 1) % 16;
    } else if constexpr (I < 48) {
        f = s.b ^ s.c ^ s.d;
        g = (3 * I + 5) % 16;
    } else {
        f = s.c ^ (s.b | ~s.d);
        g = (7 * I) % 16;
    }
    constexpr int r = rotation[(I / 16) * 4 + I % 4];
    f = f + s.a + sine[I] + m[g];
    s.a = s.d;
    s.d = s.c;
    s.c = s.b;
    s.b = s.b + ((f << r) | (f >> (32 - r)));
}

// All 64 steps, alternating between the groups so that one group's dependency chain fills
// the other's latency.
template <int... I>
[[gnu::always_inline]] inline void steps(State (&s)[group_count], const Lanes (&m)[group_count][16],
                                         std::integer_sequence<int, I...>) noexcept {
    ((step<I>(s[0], m[0]), step<I>(s[1], m[1])), ...);
}

// A little-endian 32-bit word, whatever the host's byte order (one load on x86-64).
inline std::uint32_t load_le32(const unsigned char* p) noexcept {
    return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
           static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

// Hashes up to `batch` keys of at most max_one_block bytes; unused lanes hash "".
void hash_batch(const std::string_view* keys, std::size_t n, std::uint32_t* out) noexcept {
    // The message words, transposed: words[group][j][lane]. A short key fills only its first
    // few words and the length word; the rest stay zero.
    alignas(16) std::uint32_t words[group_count][16][lane_count] = {};
    for (std::size_t k = 0; k < batch; ++k) {
        // One padded block: key, 0x80, zeros, the length in bits (little-endian, 64-bit; the
        // high word is 0 for one-block keys).
        unsigned char block[max_one_block + 1 + 3];
        const std::size_t len = k < n ? keys[k].size() : 0;
        if (len != 0) std::memcpy(block, keys[k].data(), len);
        block[len] = 0x80;
        const std::size_t used = (len + 1 + 3) / 4;  // words holding key bytes or the 0x80
        std::memset(block + len + 1, 0, used * 4 - len - 1);
        auto& lane = words[k / lane_count];
        for (std::size_t j = 0; j < used; ++j)
            lane[j][k % lane_count] = load_le32(block + 4 * j);
        lane[14][k % lane_count] = static_cast<std::uint32_t>(len * 8);
    }
    Lanes m[group_count][16];
    std::memcpy(m, words, sizeof m);
    State s[group_count];
    for (auto& st : s)
        st = State{Lanes{} + init_a, Lanes{} + init_b, Lanes{} + init_c, Lanes{} + init_d};
    steps(s, m, std::make_integer_sequence<int, 64>{});
    // Word 0 of the digest is a0 + A, read little-endian: exactly the register's value.
    for (std::size_t k = 0; k < n; ++k)
        out[k] = s[k / lane_count].a[k % lane_count] + init_a;
}

}  // namespace

void md5_first_words(std::span<const std::string_view> keys,
                     std::span<std::uint32_t> out) noexcept {
    std::string_view pending[batch];
    std::size_t where[batch];
    std::uint32_t hashed[batch];
    std::size_t n = 0;
    auto flush = [&] {
        hash_batch(pending, n, hashed);
        for (std::size_t k = 0; k < n; ++k)
            out[where[k]] = hashed[k];
        n = 0;
    };
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (keys[i].size() > max_one_block) {
            out[i] = md5_word(md5(keys[i]), 0);
            continue;
        }
        pending[n] = keys[i];
        where[n] = i;
        if (++n == batch) flush();
    }
    if (n != 0) flush();
}

}  // namespace folsom::cluster
