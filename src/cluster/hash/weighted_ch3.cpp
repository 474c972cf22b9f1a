#include "cluster/hash/weighted_ch3.hpp"

#include "cluster/hash/furc_hash.hpp"
#include "cluster/hash/spooky_hash_v2.hpp"

#include <cstring>
#include <string>

namespace folsom::cluster {
namespace {

constexpr std::uint32_t tries = 32;
constexpr std::uint32_t spooky_seed = 0xface2014;
// Salts go up to tries - 2 = 30: two digits at most.
constexpr std::size_t max_salt_digits = 2;
static_assert(tries - 2 < 100);

// mcrouter compares the 32-bit hash with weight * UINT32_MAX truncated to an integer.
std::uint64_t threshold(double weight) noexcept {
    if (!(weight >= 0.0)) return 0;
    if (weight > 1.0) weight = 1.0;
    return static_cast<std::uint64_t>(weight * 4294967295.0);
}

std::uint32_t pick(char* key, std::size_t key_size, std::span<const double> weights) noexcept {
    const auto n = static_cast<std::uint32_t>(weights.size());
    std::size_t size = key_size;
    std::uint32_t index = 0;
    for (std::uint32_t t = 0; t < tries; ++t) {
        const std::string_view salted(key, size);
        index = furc_hash(salted, n);
        if (spooky_hash_v2_32(salted, spooky_seed) < threshold(weights[index])) return index;
        // The next salt: try number t in decimal, lowest digit first.
        size = key_size;
        std::uint32_t s = t;
        do {
            key[size++] = static_cast<char>('0' + s % 10);
            s /= 10;
        } while (s != 0);
    }
    return index;
}

}  // namespace

std::uint32_t weighted_ch3(std::string_view key, std::span<const double> weights) {
    if (weights.empty()) return 0;
    char stack[512];
    if (key.size() + max_salt_digits <= sizeof stack) {
        if (!key.empty()) std::memcpy(stack, key.data(), key.size());
        return pick(stack, key.size(), weights);
    }
    std::string heap(key);
    heap.resize(key.size() + max_salt_digits);
    return pick(heap.data(), key.size(), weights);
}

}  // namespace folsom::cluster
