#include "cluster/hash/md5_lanes.hpp"

#include "cluster/hash/md5.hpp"

// The AVX2 form: x86-64 with GCC or Clang (function-level target attributes, cpu detection).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FOLSOM_MD5_AVX2 1
#else
#define FOLSOM_MD5_AVX2 0
#endif

#include <array>
#include <cstddef>
#include <utility>

namespace folsom::cluster {

namespace {

// 32-bit lanes: four in a 16-byte vector, the widest every x86-64 has (SSE2) and the widest GCC
// passes between functions without an ABI warning; eight in a 32-byte one, compiled only into
// a function built for AVX2 and chosen at run time when the CPU has it. Two groups per pass
// (eight or sixteen keys): one group's dependency chain fills the other's latency.
using Lanes4 = std::uint32_t __attribute__((vector_size(16)));
using Lanes8 = std::uint32_t __attribute__((vector_size(32)));
constexpr std::size_t group_count = 2;
constexpr std::size_t max_batch = 8 * group_count;
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

template <class Lanes>
struct State {
    Lanes a, b, c, d;
};

// Step i of the 64, on one group. Written once with the round as a template argument so that
// every constant (function, message word, rotation) is known where the step is inlined.
template <int I, class Lanes>
[[gnu::always_inline]] inline void step(State<Lanes>& s, const Lanes* m) noexcept {
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
template <class Lanes, int... I>
[[gnu::always_inline]] inline void steps(State<Lanes> (&s)[group_count],
                                         const Lanes (&m)[group_count][16],
                                         std::integer_sequence<int, I...>) noexcept {
    ((step<I>(s[0], m[0]), step<I>(s[1], m[1])), ...);
}

// A little-endian 32-bit word, whatever the host's byte order (one load on x86-64).
inline std::uint32_t load_le32(const unsigned char* p) noexcept {
    return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
           static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

// Hashes up to group_count * lanes keys of at most max_one_block bytes; unused lanes hash "".
// Always inlined into the function of each width, so that the 32-byte form is compiled only
// where AVX2 is enabled.
template <class Lanes>
[[gnu::always_inline]] inline void hash_batch(const std::string_view* keys, std::size_t n,
                                              std::uint32_t* out) noexcept {
    constexpr std::size_t lane_count = sizeof(Lanes) / sizeof(std::uint32_t);
    constexpr std::size_t batch = lane_count * group_count;
    // The message words of each group, lane by lane: m[group][j][lane], written in place (a
    // vector's elements can be assigned one by one). A short key fills only its first few words
    // and the length word; the rest stay zero.
    Lanes m[group_count][16] = {};
    for (std::size_t k = 0; k < batch; ++k) {
        // One padded block: key, 0x80, zeros, the length in bits (little-endian, 64-bit; the
        // high word is 0 for one-block keys). Read straight from the key: whole words, then
        // the last 0-3 bytes with the 0x80 after them.
        const std::size_t len = k < n ? keys[k].size() : 0;
        const auto* p = k < n ? reinterpret_cast<const unsigned char*>(keys[k].data()) : nullptr;
        Lanes(&words)[16] = m[k / lane_count];
        const std::size_t lane = k % lane_count;
        std::size_t j = 0;
        for (; 4 * j + 4 <= len; ++j)
            words[j][lane] = load_le32(p + 4 * j);
        std::uint32_t tail = 0x80u << (8 * (len % 4));
        for (std::size_t b = 0; b < len % 4; ++b)
            tail |= static_cast<std::uint32_t>(p[4 * j + b]) << (8 * b);
        words[j][lane] = tail;
        words[14][lane] = static_cast<std::uint32_t>(len * 8);
    }
    State<Lanes> s[group_count];
    for (auto& st : s)
        st = State<Lanes>{Lanes{} + init_a, Lanes{} + init_b, Lanes{} + init_c, Lanes{} + init_d};
    steps(s, m, std::make_integer_sequence<int, 64>{});
    // Word 0 of the digest is a0 + A, read little-endian: exactly the register's value.
    for (std::size_t k = 0; k < n; ++k)
        out[k] = s[k / lane_count].a[k % lane_count] + init_a;
}

void hash_batch_4(const std::string_view* keys, std::size_t n, std::uint32_t* out) noexcept {
    hash_batch<Lanes4>(keys, n, out);
}

#if FOLSOM_MD5_AVX2
[[gnu::target("avx2")]] void hash_batch_8(const std::string_view* keys, std::size_t n,
                                          std::uint32_t* out) noexcept {
    hash_batch<Lanes8>(keys, n, out);
}
#endif

using HashBatch = void (*)(const std::string_view*, std::size_t, std::uint32_t*) noexcept;

void first_words(std::span<const std::string_view> keys, std::span<std::uint32_t> out,
                 HashBatch hash, std::size_t batch) noexcept {
    std::string_view pending[max_batch];
    std::size_t where[max_batch];
    std::uint32_t hashed[max_batch];
    std::size_t n = 0;
    auto flush = [&] {
        hash(pending, n, hashed);
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

}  // namespace

bool md5_lanes_avx2_available() noexcept {
#if FOLSOM_MD5_AVX2
    static const bool available = __builtin_cpu_supports("avx2");
    return available;
#else
    return false;
#endif
}

void md5_first_words(std::span<const std::string_view> keys, std::span<std::uint32_t> out,
                     Md5Lanes lanes) noexcept {
#if FOLSOM_MD5_AVX2
    if (lanes != Md5Lanes::four && md5_lanes_avx2_available()) {
        first_words(keys, out, hash_batch_8, 8 * group_count);
        return;
    }
#else
    (void)lanes;
#endif
    first_words(keys, out, hash_batch_4, 4 * group_count);
}

}  // namespace folsom::cluster
