#include "cluster/hash/jenkins.hpp"

namespace folsom::cluster {
namespace {

constexpr std::uint32_t rot(std::uint32_t x, int k) noexcept {
    return (x << k) | (x >> (32 - k));
}

void mix(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c) noexcept {
    a -= c;
    a ^= rot(c, 4);
    c += b;
    b -= a;
    b ^= rot(a, 6);
    a += c;
    c -= b;
    c ^= rot(b, 8);
    b += a;
    a -= c;
    a ^= rot(c, 16);
    c += b;
    b -= a;
    b ^= rot(a, 19);
    a += c;
    c -= b;
    c ^= rot(b, 4);
    b += a;
}

void final_mix(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c) noexcept {
    c ^= b;
    c -= rot(b, 14);
    a ^= c;
    a -= rot(c, 11);
    b ^= a;
    b -= rot(a, 25);
    c ^= b;
    c -= rot(b, 16);
    a ^= c;
    a -= rot(c, 4);
    b ^= a;
    b -= rot(a, 14);
    c ^= b;
    c -= rot(b, 24);
}

// Bytes [0, n) of a 12-byte block as three little-endian words (n <= 12; the rest zero).
void load_block(const unsigned char* k, std::size_t n, std::uint32_t (&w)[3]) noexcept {
    w[0] = w[1] = w[2] = 0;
    for (std::size_t i = 0; i < n; ++i)
        w[i / 4] += static_cast<std::uint32_t>(k[i]) << (8 * (i % 4));
}

}  // namespace

std::uint32_t jenkins_lookup3(std::string_view data) noexcept {
    const auto* k = reinterpret_cast<const unsigned char*>(data.data());
    std::size_t length = data.size();
    std::uint32_t a = 0xdeadbeefu + static_cast<std::uint32_t>(length) + 13u;
    std::uint32_t b = a;
    std::uint32_t c = a;
    std::uint32_t w[3];
    while (length > 12) {
        load_block(k, 12, w);
        a += w[0];
        b += w[1];
        c += w[2];
        mix(a, b, c);
        length -= 12;
        k += 12;
    }
    if (length == 0) return c;  // zero-length tails need no mixing
    load_block(k, length, w);
    a += w[0];
    b += w[1];
    c += w[2];
    final_mix(a, b, c);
    return c;
}

}  // namespace folsom::cluster
