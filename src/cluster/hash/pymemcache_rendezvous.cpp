#include "cluster/hash/pymemcache_rendezvous.hpp"

#include "cluster/hash/murmur3.hpp"

#include <algorithm>
#include <numeric>

namespace folsom::cluster {
namespace {

// A memcached key is at most 250 bytes, so at most 250 characters; longer text is hashed as
// bytes (no such key reaches a server).
constexpr std::size_t max_decoded = 256;

// The low byte of each character of `utf8` into `out`, as pymemcache's murmur3 reads a str.
// False when the text is not well-formed UTF-8 (or too long): then the bytes are hashed as
// they are.
bool low_bytes_of_characters(std::string_view utf8, char (&out)[max_decoded],
                             std::size_t& size) noexcept {
    size = 0;
    std::size_t i = 0;
    while (i < utf8.size()) {
        if (size == max_decoded) return false;
        const auto lead = static_cast<unsigned char>(utf8[i]);
        std::uint32_t cp = 0;
        std::size_t extra = 0;
        if (lead < 0x80) {
            cp = lead;
        } else if (lead >= 0xc2 && lead < 0xe0) {
            cp = lead & 0x1fu;
            extra = 1;
        } else if (lead >= 0xe0 && lead < 0xf0) {
            cp = lead & 0x0fu;
            extra = 2;
        } else if (lead >= 0xf0 && lead < 0xf5) {
            cp = lead & 0x07u;
            extra = 3;
        } else {
            return false;
        }
        for (std::size_t k = 1; k <= extra; ++k) {
            if (i + k >= utf8.size()) return false;
            const auto next = static_cast<unsigned char>(utf8[i + k]);
            if ((next & 0xc0u) != 0x80u) return false;
            cp = cp << 6 | (next & 0x3fu);
        }
        // Overlong forms and surrogates are not UTF-8 (Python never encodes them).
        if ((extra == 2 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) ||
            (extra == 3 && (cp < 0x10000 || cp > 0x10ffff)))
            return false;
        out[size++] = static_cast<char>(cp & 0xffu);
        i += extra + 1;
    }
    return true;
}

}  // namespace

std::string pymemcache_node_name(const ServerAddress& server) {
    if (server.is_unix_socket()) return server.host;
    return server.host + ':' + std::to_string(server.port);
}

void pymemcache_rendezvous_prepare(std::span<const ServerAddress> servers,
                                   std::vector<std::uint32_t>& words) {
    std::vector<std::string> names;
    names.reserve(servers.size());
    for (const auto& s : servers)
        names.push_back(pymemcache_node_name(s));
    // Python compares str by code point; for UTF-8 text that is byte order.
    std::vector<std::uint32_t> order(servers.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return names[a] < names[b]; });
    std::vector<std::uint32_t> rank(servers.size());
    for (std::uint32_t r = 0; r < order.size(); ++r)
        rank[order[r]] = r;
    for (std::size_t s = 0; s < servers.size(); ++s) {
        Murmur3_32 prefix;
        std::string text = names[s] + '-';
        char decoded[max_decoded];
        std::size_t size = 0;
        if (low_bytes_of_characters(text, decoded, size)) text.assign(decoded, size);
        prefix.update(text);
        const auto state = prefix.words();
        words.insert(words.end(), state.begin(), state.end());
        words.push_back(rank[s]);
    }
}

std::size_t pymemcache_rendezvous_pick(std::span<const std::uint32_t> words,
                                       std::string_view key) noexcept {
    const std::size_t servers = words.size() / pymemcache_rendezvous_words;
    if (servers <= 1) return 0;
    char decoded[max_decoded];
    std::size_t size = 0;
    const bool ascii = std::all_of(key.begin(), key.end(),
                                   [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    if (!ascii && low_bytes_of_characters(key, decoded, size))
        key = std::string_view(decoded, size);

    std::size_t winner = 0;
    std::uint32_t best_score = 0;
    std::uint32_t best_rank = 0;
    for (std::size_t s = 0; s < servers; ++s) {
        const std::uint32_t* w = words.data() + s * pymemcache_rendezvous_words;
        const std::uint32_t score =
            Murmur3_32(Murmur3_32::Words{w[0], w[1], w[2]}).update(key).digest();
        // The first server always wins against pymemcache's initial -1; later ones by a higher
        // score, or an equal one with a greater name.
        if (s == 0 || score > best_score || (score == best_score && w[3] > best_rank)) {
            winner = s;
            best_score = score;
            best_rank = w[3];
        }
    }
    return winner;
}

}  // namespace folsom::cluster
