#include "cluster/hash/fnv.hpp"

namespace folsom::cluster {
namespace {

constexpr std::uint32_t fnv32_basis = 2166136261u;
constexpr std::uint32_t fnv32_prime = 16777619u;
constexpr std::uint64_t fnv64_basis = 0xcbf29ce484222325u;
constexpr std::uint64_t fnv64_prime = 0x100000001b3u;

// A byte as libmemcached reads it: a signed char, widened with its sign.
constexpr std::int64_t widened(char c) noexcept {
    return static_cast<signed char>(c);
}

}  // namespace

std::uint32_t fnv1_32(std::string_view data) noexcept {
    std::uint32_t hash = fnv32_basis;
    for (const char c : data) {
        hash *= fnv32_prime;
        hash ^= static_cast<std::uint32_t>(widened(c));
    }
    return hash;
}

std::uint32_t fnv1a_32(std::string_view data) noexcept {
    std::uint32_t hash = fnv32_basis;
    for (const char c : data) {
        hash ^= static_cast<std::uint32_t>(widened(c));
        hash *= fnv32_prime;
    }
    return hash;
}

std::uint32_t fnv1_64(std::string_view data) noexcept {
    std::uint64_t hash = fnv64_basis;
    for (const char c : data) {
        hash *= fnv64_prime;
        hash ^= static_cast<std::uint64_t>(widened(c));
    }
    return static_cast<std::uint32_t>(hash);
}

std::uint32_t fnv1a_64(std::string_view data) noexcept {
    auto hash = static_cast<std::uint32_t>(fnv64_basis);
    for (const char c : data) {
        hash ^= static_cast<std::uint32_t>(widened(c));
        hash *= static_cast<std::uint32_t>(fnv64_prime);
    }
    return hash;
}

}  // namespace folsom::cluster
