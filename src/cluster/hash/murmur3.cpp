#include "cluster/hash/murmur3.hpp"

namespace folsom::cluster {
namespace {

constexpr std::uint32_t c1 = 0xcc9e2d51;
constexpr std::uint32_t c2 = 0x1b873593;

constexpr std::uint32_t rotl(std::uint32_t x, int r) noexcept {
    return (x << r) | (x >> (32 - r));
}

constexpr std::uint32_t mix_k(std::uint32_t k) noexcept {
    return rotl(k * c1, 15) * c2;
}

constexpr std::uint32_t mix_h(std::uint32_t h, std::uint32_t k) noexcept {
    h ^= mix_k(k);
    return rotl(h, 13) * 5 + 0xe6546b64;
}

constexpr std::uint32_t finish(std::uint32_t h, std::uint32_t length) noexcept {
    h ^= length;
    h ^= h >> 16;
    h *= 0x85ebca6b;
    h ^= h >> 13;
    h *= 0xc2b2ae35;
    h ^= h >> 16;
    return h;
}

// Bytes are read one by one, little-endian, so the result does not depend on the host's
// byte order or on the alignment of the input.
std::uint32_t load_le32(const unsigned char* p) noexcept {
    return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
           static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

}  // namespace

std::uint32_t murmur3_32(std::string_view data, std::uint32_t seed) noexcept {
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    const std::size_t n = data.size();
    std::uint32_t h = seed;

    std::size_t i = 0;
    for (; i + 4 <= n; i += 4)
        h = mix_h(h, load_le32(p + i));

    std::uint32_t k = 0;
    switch (n - i) {
        case 3:
            k ^= static_cast<std::uint32_t>(p[i + 2]) << 16;
            [[fallthrough]];
        case 2:
            k ^= static_cast<std::uint32_t>(p[i + 1]) << 8;
            [[fallthrough]];
        case 1:
            k ^= p[i];
            h ^= mix_k(k);
            break;
        default:
            break;
    }

    // The length enters mod 2^32, as Java's int length does.
    return finish(h, static_cast<std::uint32_t>(n));
}

Murmur3_32& Murmur3_32::update(std::string_view data) noexcept {
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    const std::size_t n = data.size();
    std::size_t i = 0;
    // Complete the block a previous piece left open.
    while (length_ % 4 != 0 && i < n) {
        carry_ |= static_cast<std::uint32_t>(p[i++]) << (8 * (length_ % 4));
        if (++length_ % 4 == 0) {
            h_ = mix_h(h_, carry_);
            carry_ = 0;
        }
    }
    const std::size_t blocks_start = i;
    for (; i + 4 <= n; i += 4)
        h_ = mix_h(h_, load_le32(p + i));
    length_ += static_cast<std::uint32_t>(i - blocks_start);
    for (; i < n; ++i)
        carry_ |= static_cast<std::uint32_t>(p[i]) << (8 * (length_++ % 4));
    return *this;
}

std::uint32_t Murmur3_32::digest() const noexcept {
    std::uint32_t h = h_;
    if (length_ % 4 != 0) h ^= mix_k(carry_);
    return finish(h, length_);
}

}  // namespace folsom::cluster
