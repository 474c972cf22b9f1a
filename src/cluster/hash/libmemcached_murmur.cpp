#include "cluster/hash/libmemcached_murmur.hpp"

namespace folsom::cluster {

std::uint32_t libmemcached_murmur(std::string_view data) noexcept {
    constexpr std::uint32_t m = 0x5bd1e995u;
    constexpr int r = 24;
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    std::size_t length = data.size();
    const std::uint32_t seed = 0xdeadbeefu * static_cast<std::uint32_t>(length);
    std::uint32_t h = seed ^ static_cast<std::uint32_t>(length);
    while (length >= 4) {
        std::uint32_t k = static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
                          static_cast<std::uint32_t>(p[2]) << 16 |
                          static_cast<std::uint32_t>(p[3]) << 24;
        k *= m;
        k ^= k >> r;
        k *= m;
        h *= m;
        h ^= k;
        p += 4;
        length -= 4;
    }
    if (length != 0) {
        std::uint32_t k = 0;
        for (std::size_t i = 0; i < length; ++i)
            k |= static_cast<std::uint32_t>(p[i]) << (8 * i);
        h ^= k;
        h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}

}  // namespace folsom::cluster
