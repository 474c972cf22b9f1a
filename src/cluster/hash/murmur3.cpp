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
    for (; i + 4 <= n; i += 4) {
        h ^= mix_k(load_le32(p + i));
        h = rotl(h, 13) * 5 + 0xe6546b64;
    }

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
    h ^= static_cast<std::uint32_t>(n);
    h ^= h >> 16;
    h *= 0x85ebca6b;
    h ^= h >> 13;
    h *= 0xc2b2ae35;
    h ^= h >> 16;
    return h;
}

}  // namespace folsom::cluster
