#include "cluster/hash/spooky_hash_v2.hpp"

#include <array>
#include <cstddef>
#include <cstring>

namespace folsom::cluster {
namespace {

using State = std::array<std::uint64_t, 12>;

// Messages shorter than this take the short path (4 words of state), longer ones the 12-word
// one. The two give different results, so the cut-over is part of the hash's definition.
constexpr std::size_t long_message = 192;
constexpr std::size_t block = 96;  // what one step of the long path consumes
// Any odd, irregular constant would do; this is the one the hash is defined with.
constexpr std::uint64_t filler = 0xdeadbeefdeadbeefULL;

constexpr std::uint64_t rot(std::uint64_t x, int k) noexcept {
    return (x << k) | (x >> (64 - k));
}

// Words are read little-endian byte by byte: the same result on any host and at any alignment
// (the compiler turns it into one load on little-endian machines).
std::uint64_t load_le64(const unsigned char* p) noexcept {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
        v = v << 8 | p[i];
    return v;
}

std::uint64_t load_le32(const unsigned char* p) noexcept {
    return static_cast<std::uint64_t>(p[0]) | static_cast<std::uint64_t>(p[1]) << 8 |
           static_cast<std::uint64_t>(p[2]) << 16 | static_cast<std::uint64_t>(p[3]) << 24;
}

// The short path's mixing round: twelve rotate-add-xor steps over four words, each step
// rotating one word, adding the next and folding it into the one before.
void short_mix(std::array<std::uint64_t, 4>& h) noexcept {
    static constexpr int r[12] = {50, 52, 30, 41, 54, 48, 38, 37, 62, 34, 5, 36};
    for (int j = 0; j < 12; ++j) {
        auto& x = h[(j + 2) % 4];
        x = rot(x, r[j]);
        x += h[(j + 3) % 4];
        h[j % 4] ^= x;
    }
}

// The short path's finish: eleven xor-rotate-add steps, so that every input bit reaches the
// two output words.
void short_end(std::array<std::uint64_t, 4>& h) noexcept {
    static constexpr int r[11] = {15, 52, 26, 51, 28, 9, 47, 54, 32, 25, 63};
    for (int j = 0; j < 11; ++j) {
        auto& t = h[(j + 3) % 4];
        auto& s = h[(j + 2) % 4];
        t ^= s;
        s = rot(s, r[j]);
        t += s;
    }
}

// The long path's round over one 96-byte block (12 words of input into 12 words of state).
void mix(const std::uint64_t* data, State& s) noexcept {
    static constexpr int r[12] = {11, 32, 43, 31, 17, 28, 39, 57, 55, 54, 22, 46};
    for (int i = 0; i < 12; ++i) {
        s[i] += data[i];
        s[(i + 2) % 12] ^= s[(i + 10) % 12];
        s[(i + 11) % 12] ^= s[i];
        s[i] = rot(s[i], r[i]);
        s[(i + 11) % 12] += s[(i + 1) % 12];
    }
}

// One pass of the long path's finish; it runs three times, enough for a 128-bit result.
void end_partial(State& h) noexcept {
    static constexpr int r[12] = {44, 15, 34, 21, 38, 33, 10, 13, 38, 53, 42, 54};
    for (int j = 0; j < 12; ++j) {
        auto& a = h[(j + 11) % 12];
        auto& b = h[(j + 1) % 12];
        a += b;
        h[(j + 2) % 12] ^= a;
        b = rot(b, r[j]);
    }
}

Spooky128 short_hash(const unsigned char* p, std::size_t length, std::uint64_t seed1,
                     std::uint64_t seed2) noexcept {
    std::array<std::uint64_t, 4> h = {seed1, seed2, filler, filler};
    std::size_t rest = length % 32;
    if (length > 15) {
        // Whole 32-byte chunks: two words in, a round, two more words in.
        for (const unsigned char* end = p + length / 32 * 32; p < end; p += 32) {
            h[2] += load_le64(p);
            h[3] += load_le64(p + 8);
            short_mix(h);
            h[0] += load_le64(p + 16);
            h[1] += load_le64(p + 24);
        }
        if (rest >= 16) {
            h[2] += load_le64(p);
            h[3] += load_le64(p + 8);
            short_mix(h);
            p += 16;
            rest -= 16;
        }
    }
    // The last 0..15 bytes, and the length in the top byte of the fourth word. Bytes 0..7 go
    // into the third word and 8..15 into the fourth, each little-endian; an empty tail adds
    // the filler to both instead.
    h[3] += static_cast<std::uint64_t>(length) << 56;
    if (rest == 0) {
        h[2] += filler;
        h[3] += filler;
    } else if (rest >= 12) {
        for (std::size_t i = 12; i < rest; ++i)
            h[3] += static_cast<std::uint64_t>(p[i]) << (8 * (i - 8));
        h[3] += load_le32(p + 8);
        h[2] += load_le64(p);
    } else if (rest >= 8) {
        for (std::size_t i = 8; i < rest; ++i)
            h[3] += static_cast<std::uint64_t>(p[i]) << (8 * (i - 8));
        h[2] += load_le64(p);
    } else if (rest >= 4) {
        for (std::size_t i = 4; i < rest; ++i)
            h[2] += static_cast<std::uint64_t>(p[i]) << (8 * i);
        h[2] += load_le32(p);
    } else {
        for (std::size_t i = 0; i < rest; ++i)
            h[2] += static_cast<std::uint64_t>(p[i]) << (8 * i);
    }
    short_end(h);
    return {h[0], h[1]};
}

}  // namespace

Spooky128 spooky_hash_v2_128(std::string_view data, std::uint64_t seed1,
                             std::uint64_t seed2) noexcept {
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    const std::size_t length = data.size();
    if (length < long_message) return short_hash(p, length, seed1, seed2);

    State h;
    for (std::size_t i = 0; i < 12; i += 3) {
        h[i] = seed1;
        h[i + 1] = seed2;
        h[i + 2] = filler;
    }
    std::uint64_t words[12];
    const std::size_t whole = length / block * block;
    for (std::size_t at = 0; at < whole; at += block) {
        for (std::size_t w = 0; w < 12; ++w)
            words[w] = load_le64(p + at + 8 * w);
        mix(words, h);
    }
    // The last partial block (0..95 bytes), zero-padded, with its length in its last byte.
    unsigned char last[block] = {};
    const std::size_t rest = length - whole;
    if (rest != 0) std::memcpy(last, p + whole, rest);
    last[block - 1] = static_cast<unsigned char>(rest);
    for (std::size_t w = 0; w < 12; ++w)
        h[w] += load_le64(last + 8 * w);
    end_partial(h);
    end_partial(h);
    end_partial(h);
    return {h[0], h[1]};
}

}  // namespace folsom::cluster
