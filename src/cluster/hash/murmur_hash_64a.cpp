#include "cluster/hash/murmur_hash_64a.hpp"

#include <cstddef>

namespace folsom::cluster {
namespace {

constexpr std::uint64_t m = 0xc6a4a7935bd1e995ULL;
constexpr int r = 47;

std::uint64_t load_le64(const unsigned char* p) noexcept {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
        v = v << 8 | p[i];
    return v;
}

constexpr std::uint64_t mix_word(std::uint64_t k) noexcept {
    k *= m;
    k ^= k >> r;
    return k * m;
}

constexpr std::uint64_t finish(std::uint64_t h) noexcept {
    h ^= h >> r;
    h *= m;
    return h ^ (h >> r);
}

}  // namespace

std::uint64_t murmur_hash_64a(std::string_view data, std::uint64_t seed) noexcept {
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    const std::size_t n = data.size();
    std::uint64_t h = seed ^ (n * m);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        h ^= mix_word(load_le64(p + i));
        h *= m;
    }
    // The last 1..7 bytes, little-endian, folded in as one partial word.
    if (i < n) {
        std::uint64_t tail = 0;
        for (std::size_t j = n; j-- > i;)
            tail = tail << 8 | p[j];
        h ^= tail;
        h *= m;
    }
    return finish(h);
}

std::uint64_t murmur_hash_64a_word(std::uint64_t word, std::uint64_t seed) noexcept {
    // One whole word and no tail: the loop above run once, for a length of 8.
    std::uint64_t h = seed ^ (8 * m);
    h ^= mix_word(word);
    h *= m;
    return finish(h);
}

}  // namespace folsom::cluster
