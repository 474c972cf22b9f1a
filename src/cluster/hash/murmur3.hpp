// MurmurHash3, x86 32-bit variant: the hash Spotify Folsom's ketama ring is made of (Guava's
// Hashing.murmur3_32(), seed 0, over bytes), and pymemcache's rendezvous hash.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace folsom::cluster {

std::uint32_t murmur3_32(std::string_view data, std::uint32_t seed = 0) noexcept;

/// MurmurHash3 x86_32 fed in pieces: murmur3_32(a + b) == Murmur3_32().update(a).update(b)
/// .digest(). A state saved after a common prefix (pymemcache's "host:port-") is resumed for
/// every key without copying the prefix again. A plain value: copy it to branch off; words()
/// and the constructor from them store it in three 32-bit words.
class Murmur3_32 {
  public:
    using Words = std::array<std::uint32_t, 3>;

    explicit Murmur3_32(std::uint32_t seed = 0) noexcept : h_(seed) {}
    explicit Murmur3_32(const Words& w) noexcept : h_(w[0]), carry_(w[1]), length_(w[2]) {}

    Murmur3_32& update(std::string_view data) noexcept;
    /// The hash of everything fed so far (the state is unchanged).
    std::uint32_t digest() const noexcept;
    Words words() const noexcept { return {h_, carry_, length_}; }

  private:
    std::uint32_t h_;
    std::uint32_t carry_ = 0;   // the bytes of an unfinished 4-byte block (length_ % 4 of them)
    std::uint32_t length_ = 0;  // mod 2^32, as the one-shot function takes it
};

}  // namespace folsom::cluster
