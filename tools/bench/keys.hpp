// Key texts of `folsom bench`: key n of a key space of N keys is "k" followed by n in decimal,
// zero-padded to the width of N-1 ("k0000".."k9999" for 10000 keys), so every key of a run has
// the same length. A key is written in place by a few multiplications (two digits at a time),
// with no format string to interpret: the bench writes one per request (a hundred per 100-key
// multi-get), and its cost is charged to the client's CPU per operation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

namespace folsom::bench {

/// The next of a splitmix64 sequence (advances `state`): tiny, fast, good enough for key choice.
inline std::uint64_t splitmix64(std::uint64_t& state) noexcept {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/// Key number below `keys` from 64 random bits: the high half scaled by a multiplication, not
/// a division, when the key space fits 32 bits (a 64-bit division costs tens of cycles).
inline std::uint64_t pick_key(std::uint64_t random, std::uint64_t keys) noexcept {
    return keys <= 0xffffffffu ? ((random >> 32) * keys) >> 32 : random % keys;
}

class KeyText {
  public:
    /// Keys of a key space of `keys` keys (at least 1).
    explicit KeyText(std::uint64_t keys) noexcept : width_(digits(keys > 0 ? keys - 1 : 0)) {}

    /// Decimal digits of `n` (at least 1).
    static constexpr unsigned digits(std::uint64_t n) noexcept {
        unsigned d = 1;
        while (n >= 10) {
            n /= 10;
            ++d;
        }
        return d;
    }

    /// Characters of every key: "k" and the digits.
    std::size_t size() const noexcept { return 1 + width_; }
    unsigned width() const noexcept { return width_; }

    /// Writes key `n` (n < keys) into out[0..size()).
    void write(char* out, std::uint64_t n) const noexcept {
        out[0] = 'k';
        char* p = out + 1 + width_;
        unsigned left = width_;
        while (left >= 2) {
            p -= 2;
            std::memcpy(p, pairs + 2 * (n % 100), 2);
            n /= 100;
            left -= 2;
        }
        if (left != 0) *--p = static_cast<char>('0' + n % 10);
    }

    /// Room a run needs after its last key (write_run copies keys eight bytes at a time).
    static constexpr std::size_t slack = 8;

    /// Writes the `count` keys n, n+1, ... (after key `keys`-1 comes key 0) from `out`, one
    /// every `stride` characters (0: size(), the keys back to back; more: each key followed by
    /// stride - size() copies of `separator`). `out` has room for count * stride characters
    /// and `slack` more. Each key after the first is the one before it, copied with what
    /// follows it, and its last digits counted up.
    void write_run(char* out, std::uint64_t n, std::size_t count, std::uint64_t keys,
                   std::size_t stride = 0, char separator = ' ') const noexcept {
        if (count == 0) return;
        const std::size_t len = size();
        if (stride < len) stride = len;
        auto write_key = [&](char* to, std::uint64_t k) {
            write(to, k);
            std::memset(to + len, separator, stride - len);
        };
        write_key(out, n);
        for (std::size_t i = 1; i < count; ++i) {
            char* const to = out + i * stride;
            if (++n == keys) {
                n = 0;
                write_key(to, 0);
                continue;
            }
            // Eight bytes at a time: what lands past the key and its separators is overwritten
            // by the next key (or falls in the slack), and each word is read before it is
            // written.
            const char* const from = to - stride;
            for (std::size_t j = 0; j < stride; j += 8) {
                std::uint64_t word;
                std::memcpy(&word, from + j, 8);
                std::memcpy(to + j, &word, 8);
            }
            char* d = to + len - 1;
            while (*d == '9')  // stops at a digit below 9: n < keys <= 10^width
                *d-- = '0';
            ++*d;
        }
    }

  private:
    static constexpr char pairs[] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";

    unsigned width_;
};

/// Every key text of a small key space, written once, back to back: a request then takes a view
/// of its key instead of writing it. Empty (texts() false) when the texts would not fit in
/// `max_bytes`, where random reads of them would miss the caches more than writing costs.
class KeyTable {
  public:
    static constexpr std::size_t default_max_bytes = std::size_t{1} << 20;

    explicit KeyTable(std::uint64_t keys, std::size_t max_bytes = default_max_bytes)
        : text_(keys), keys_(keys) {
        if (keys == 0 || keys > max_bytes / text_.size()) return;
        chars_ = std::make_unique<char[]>(keys * text_.size() + KeyText::slack);
        text_.write_run(chars_.get(), 0, keys, keys);
    }

    bool texts() const noexcept { return chars_ != nullptr; }
    const KeyText& text() const noexcept { return text_; }
    std::uint64_t keys() const noexcept { return keys_; }

    /// Key `n`'s text (texts() only).
    std::string_view at(std::uint64_t n) const noexcept {
        return {chars_.get() + n * text_.size(), text_.size()};
    }

  private:
    KeyText text_;
    std::uint64_t keys_;
    std::unique_ptr<char[]> chars_;
};

}  // namespace folsom::bench
