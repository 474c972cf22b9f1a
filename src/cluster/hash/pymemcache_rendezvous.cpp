#include "cluster/hash/pymemcache_rendezvous.hpp"

#include "cluster/hash/murmur3.hpp"

#include <algorithm>
#include <functional>
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

namespace {

// The server whose murmur3("<node>-" + text) scores highest among those `usable` accepts; a
// tie goes to the greater name. `servers` (the count) when it accepts none.
template <class Usable>
std::size_t highest_score(std::span<const std::uint32_t> words, std::string_view text,
                          Usable&& usable) noexcept {
    const std::size_t servers = words.size() / pymemcache_rendezvous_words;
    std::size_t winner = servers;
    std::uint32_t best_score = 0;
    std::uint32_t best_rank = 0;
    for (std::size_t s = 0; s < servers; ++s) {
        if (!usable(s)) continue;
        const std::uint32_t* w = words.data() + s * pymemcache_rendezvous_words;
        const std::uint32_t score =
            Murmur3_32(Murmur3_32::Words{w[0], w[1], w[2]}).update(text).digest();
        // The first server always wins against pymemcache's initial -1; later ones by a higher
        // score, or an equal one with a greater name.
        if (winner == servers || score > best_score || (score == best_score && w[3] > best_rank)) {
            winner = s;
            best_score = score;
            best_rank = w[3];
        }
    }
    return winner;
}

// Python's repr of a bytes object (Objects/bytesobject.c, PyBytes_Repr): b'...', or b"..."
// when the bytes hold a ' and no "; a backslash, the quote, \t, \n and \r escaped; other bytes
// below 0x20 or from 0x7f as \xhh. At most 3 + 4 bytes per key byte.
constexpr std::size_t max_repr_key = 256;
constexpr std::size_t max_repr = 3 + 4 * max_repr_key;

std::size_t bytes_repr(std::string_view key, char (&out)[max_repr]) noexcept {
    const bool double_quote =
        key.find('\'') != std::string_view::npos && key.find('"') == std::string_view::npos;
    const char quote = double_quote ? '"' : '\'';
    constexpr char hex[] = "0123456789abcdef";
    std::size_t n = 0;
    out[n++] = 'b';
    out[n++] = quote;
    for (char ch : key) {
        const auto c = static_cast<unsigned char>(ch);
        if (ch == quote || ch == '\\') {
            out[n++] = '\\';
            out[n++] = ch;
        } else if (ch == '\t' || ch == '\n' || ch == '\r') {
            out[n++] = '\\';
            out[n++] = ch == '\t' ? 't' : ch == '\n' ? 'n' : 'r';
        } else if (c < 0x20 || c >= 0x7f) {
            out[n++] = '\\';
            out[n++] = 'x';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 0xfu];
        } else {
            out[n++] = ch;
        }
    }
    out[n++] = quote;
    return n;
}

}  // namespace

namespace {

// Calls f(text) with the text pymemcache hashes after "<node>-" for `key`: its characters'
// low bytes (a str key), or its repr (a bytes key).
template <class F>
std::size_t with_hashed_text(std::string_view key, bool as_bytes, F&& f) noexcept {
    if (as_bytes) {
        // A memcached key is at most 250 bytes; a longer one never reaches a server (any
        // server will do), so only its first max_repr_key bytes are hashed.
        char repr[max_repr];
        const std::size_t size = bytes_repr(key.substr(0, max_repr_key), repr);
        return f(std::string_view(repr, size));
    }
    char decoded[max_decoded];
    std::size_t size = 0;
    const bool ascii = std::all_of(key.begin(), key.end(),
                                   [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    if (!ascii && low_bytes_of_characters(key, decoded, size))
        key = std::string_view(decoded, size);
    return f(key);
}

constexpr auto every_server = [](std::size_t) { return true; };

}  // namespace

std::size_t pymemcache_rendezvous_pick(std::span<const std::uint32_t> words,
                                       std::string_view key) noexcept {
    if (words.size() / pymemcache_rendezvous_words <= 1) return 0;
    return with_hashed_text(key, false, [&](std::string_view text) {
        return highest_score(words, text, every_server);
    });
}

std::size_t pymemcache_rendezvous_pick_bytes(std::span<const std::uint32_t> words,
                                             std::string_view key) noexcept {
    if (words.size() / pymemcache_rendezvous_words <= 1) return 0;
    return with_hashed_text(
        key, true, [&](std::string_view text) { return highest_score(words, text, every_server); });
}

std::size_t pymemcache_rendezvous_pick_among(std::span<const std::uint32_t> words,
                                             std::string_view key, bool as_bytes,
                                             const std::function<bool(std::size_t)>& usable,
                                             std::size_t none) noexcept {
    const std::size_t servers = words.size() / pymemcache_rendezvous_words;
    const std::size_t s = with_hashed_text(
        key, as_bytes, [&](std::string_view text) { return highest_score(words, text, usable); });
    return s == servers ? none : s;
}

}  // namespace folsom::cluster
