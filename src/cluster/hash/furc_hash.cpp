#include "cluster/hash/furc_hash.hpp"

#include "cluster/hash/murmur_hash_64a.hpp"

#include <bit>
#include <cstddef>

namespace folsom::cluster {
namespace {

// mcrouter's constants; every one of them is part of where a key lands.
constexpr std::uint64_t seed = 4193360111u;
// Tries at an index below n before the walk gives up and answers 0 (rare: each try succeeds
// with probability > 1/2).
constexpr std::uint32_t max_tries = 32;
// Bits read for one level of the tree are this far apart in the stream, so that the bits of
// 2^shift servers never overlap: it is what bounds a pool to furc_max_servers.
constexpr std::uint32_t shift = 23;
static_assert(furc_max_servers == 1u << shift);

// The furthest bit a walk reads: it starts at depth <= shift, and each try moves on by
// `shift` per level of at most `shift` levels. (A try that steps back up the tree restarts
// below 64, so it never reads further.)
constexpr std::uint32_t last_bit = shift + max_tries * shift * shift;
constexpr std::size_t stream_words = last_bit / 64 + 1;

// The key's bit stream: word 0 is the key's hash, word i + 1 the hash of word i. Words are
// made on first use and kept, since the walk goes back to low bits at every try.
class KeyBits {
  public:
    explicit KeyBits(std::string_view key) noexcept : words_{murmur_hash_64a(key, seed)} {}

    unsigned operator[](std::uint32_t bit) noexcept {
        const std::uint32_t word = bit >> 6;
        for (; made_ < word; ++made_)
            words_[made_ + 1] = murmur_hash_64a_word(words_[made_], seed);
        return static_cast<unsigned>(words_[word] >> (bit & 63)) & 1u;
    }

  private:
    std::uint64_t words_[stream_words];
    std::uint32_t made_ = 0;  // words_[0..made_] are made
};

}  // namespace

std::uint32_t furc_hash(std::string_view key, std::uint32_t n) noexcept {
    if (n > furc_max_servers) n = furc_max_servers;
    if (n <= 1) return 0;
    // The tree has `depth` levels: the smallest power of two that holds n servers.
    auto depth = static_cast<std::uint32_t>(std::bit_width(n - 1));
    KeyBits bits(key);
    std::uint32_t at = depth;
    for (std::uint32_t t = 0; t < max_tries; ++t) {
        // The first set bit, from the top level down, picks the key's size class: an index in
        // [2^(level-1), 2^level). Growing the pool only adds classes above, and a key moves
        // only if its bits choose a server that did not exist before.
        while (bits[at] == 0) {
            if (--depth == 0) return 0;
            at = depth;
        }
        at += shift;
        // The lower bits of the index, one per level below.
        std::uint32_t index = 1;
        for (std::uint32_t level = 1; level < depth; ++level) {
            index = index << 1 | bits[at];
            at += shift;
        }
        if (index < n) return index;
    }
    return 0;  // mcrouter's answer after max_tries misses: a server every pool has
}

}  // namespace folsom::cluster
