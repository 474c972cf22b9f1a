// Zero-copy, allocation-free decoder for memcached's text protocol replies. See the header for
// the contract (one reply per call, resumption, sticky errors).
//
// Shape of the hot paths: no search for the line end. The fixed words are whole-line compares
// (fixed-length memcmp the compiler turns into a couple of loads); a whole VALUE reply is
// decoded in one forward pass over its header (the key 8 bytes at a time, short numbers read at
// fixed offsets) and its data block framed by arithmetic, never scanned, so binary data
// containing "\r\n" cannot confuse the framing. Anything else (a partial line, an error text,
// a STAT) takes the line path: one memchr for the line end, then a switch on the first byte.
#include "folsom/protocol/ascii_decoder.hpp"

#include "protocol/decode_error.hpp"
#include "protocol/store_refusal.hpp"

#include <bit>
#include <cstring>
#include <limits>

namespace folsom::protocol::ascii {

namespace detail {

// The fields of "VALUE <key> <flags> <bytes>[ <cas>]\r\n", scanned in one forward pass.
struct ValueHeader {
    enum Status : std::uint8_t { ok, bad, short_input } status = bad;
    const char* why = reason::malformed_value;  // bad: the reason
    std::size_t bad_offset = 0;                 // bad: where the offending token starts
    std::size_t key_size = 0;
    std::size_t header_size = 0;  // ok: including "\r\n"
    std::uint64_t flags = 0;
    std::uint64_t value_size = 0;
    std::uint64_t cas = 0;
    bool has_cas = false;
};

}  // namespace detail

namespace {

enum class NumberStatus : std::uint8_t { ok, empty, overflow };

// Parses the decimal digits at [p, end) into `out`, stopping at the first non-digit, and
// advances `p` past them. Max is a template argument so the overflow check is two compares
// against constants, not a division per digit.
template <std::uint64_t Max>
[[gnu::always_inline]] inline NumberStatus parse_decimal(const char*& p, const char* end,
                                                         std::uint64_t& out) noexcept {
    const char* const start = p;
    std::uint64_t v = 0;
    while (p != end) {
        const unsigned d = static_cast<unsigned>(static_cast<unsigned char>(*p)) - '0';
        if (d > 9) break;
        if (v > Max / 10 || (v == Max / 10 && d > Max % 10)) [[unlikely]]
            return NumberStatus::overflow;
        v = v * 10 + d;
        ++p;
    }
    out = v;
    return p == start ? NumberStatus::empty : NumberStatus::ok;
}

constexpr std::uint64_t u32_max = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();

// First bytes a reply line can start with. Anything else is rejected at once, without waiting
// for a line end, so garbage (an HTTP response, a TLS alert) fails on its first byte.
constexpr bool valid_first_byte(unsigned char c) noexcept {
    switch (c) {
        case 'V':  // VALUE, VERSION
        case 'E':  // END, ERROR, EXISTS
        case 'S':  // STORED, STAT, SERVER_ERROR
        case 'N':  // NOT_STORED, NOT_FOUND
        case 'D':  // DELETED
        case 'T':  // TOUCHED
        case 'O':  // OK
        case 'C':  // CLIENT_ERROR
        case 'I':  // ITEM (stats cachedump)
            return true;
        default:
            return c >= '0' && c <= '9';  // incr/decr result
    }
}

// `line` starts with a word of `word_size` bytes; accepts "WORD" (empty text) or "WORD <text>"
// and sets `text`. False when the word runs on into other bytes ("ERRORS" is not "ERROR").
inline bool word_with_text(std::string_view line, std::size_t word_size,
                           std::string_view& text) noexcept {
    if (line.size() == word_size) {
        text = {};
        return true;
    }
    if (line[word_size] != ' ') return false;
    text = line.substr(word_size + 1);
    return true;
}

inline bool starts_with(std::string_view s, std::string_view prefix) noexcept {
    return s.size() >= prefix.size() && std::memcmp(s.data(), prefix.data(), prefix.size()) == 0;
}

// Flags, in the high bit of each byte of x (8 bytes as loaded from memory), the bytes that
// cannot be part of a key (<= 0x20: the space that ends it, or a control character); the
// lowest flagged byte is exact, those above it are not (SWAR): for a byte b below 0x80,
// (b - 0x21) borrows into bit 7 exactly when b <= 0x20; bytes >= 0x80 are masked out by ~x. A
// borrow can only flag bytes above a true hit.
[[gnu::always_inline]] inline std::uint64_t key_stops(std::uint64_t x) noexcept {
    constexpr std::uint64_t ones = 0x0101010101010101ULL;
    constexpr std::uint64_t highs = 0x8080808080808080ULL;
    return (x - ones * 0x21) & ~x & highs;
}

// The index of the first (lowest-addressed) flagged byte of a non-zero key_stops() mask.
[[gnu::always_inline]] inline std::size_t first_stop(std::uint64_t stops) noexcept {
    if constexpr (std::endian::native == std::endian::little)
        return static_cast<unsigned>(std::countr_zero(stops)) >> 3;
    else
        return static_cast<unsigned>(std::countl_zero(stops)) >> 3;
}

[[gnu::always_inline]] inline std::uint64_t load8(const char* p) noexcept {
    std::uint64_t x;
    std::memcpy(&x, p, 8);
    return x;
}

// Returns the first byte in [p, lim) that cannot be part of a key, or lim. Eight bytes per step.
[[gnu::always_inline]] inline const char* skip_key_bytes(const char* p, const char* lim) noexcept {
    while (lim - p >= 8) {
        const std::uint64_t stops = key_stops(load8(p));
        if (stops != 0) return p + first_stop(stops);
        p += 8;
    }
    while (p != lim && static_cast<unsigned char>(*p) > 0x20)
        ++p;
    return p;
}

using detail::ValueHeader;

constexpr std::size_t value_prefix = 6;  // "VALUE "

// Scans a VALUE header starting at `base` (which starts with "VALUE ") up to `lim`. The key is
// 1 to 250 bytes above 0x20; fields are separated by exactly one space; every number has
// digits only and fits its type; "\r\n" follows the last field. short_input: `lim` came
// first. Used with `lim` = the input end by the fast path (which falls back to the line path
// on anything but ok) and with `lim` = just past the line's '\n' by the line path.
[[gnu::always_inline]] inline ValueHeader::Status scan_value_header(const char* base,
                                                                    const char* lim,
                                                                    ValueHeader& h) noexcept {
    // Fields live in locals until the end, so the fast path keeps them in registers; `h` is
    // written once (status first: the callers branch on the return value, not on h.status).
    const char* p = base + value_prefix;
    const char* const key = p;
    p = skip_key_bytes(p, lim);
    if (p == lim) return h.status = ValueHeader::short_input;
    const auto key_size = static_cast<std::size_t>(p - key);
    if (*p != ' ' || key_size == 0 || key_size > max_key_length) [[unlikely]] {
        h.why = reason::malformed_value;
        h.bad_offset = 0;
        return h.status = ValueHeader::bad;
    }
    const char* at = nullptr;
    NumberStatus st = NumberStatus::ok;
    std::uint64_t flags = 0;
    std::uint64_t value_size = 0;
    std::uint64_t cas = 0;
    bool has_cas = false;

    // Each "<digits>" field must be followed by one of its allowed separators.
    at = ++p;
    st = parse_decimal<u32_max>(p, lim, flags);
    if (st == NumberStatus::overflow) [[unlikely]]
        goto bad;
    if (p == lim) return h.status = ValueHeader::short_input;
    if (st == NumberStatus::empty || *p != ' ') [[unlikely]]
        goto malformed;

    at = ++p;
    st = parse_decimal<u64_max>(p, lim, value_size);
    if (st == NumberStatus::overflow) [[unlikely]]
        goto bad;
    if (p == lim) return h.status = ValueHeader::short_input;
    if (st == NumberStatus::empty || (*p != ' ' && *p != '\r')) [[unlikely]]
        goto malformed;

    if (*p == ' ') {
        at = ++p;
        st = parse_decimal<u64_max>(p, lim, cas);
        if (st == NumberStatus::overflow) [[unlikely]]
            goto bad;
        if (p == lim) return h.status = ValueHeader::short_input;
        if (st == NumberStatus::empty || *p != '\r') [[unlikely]]
            goto malformed;
        has_cas = true;
    }
    // *p == '\r'
    if (p + 1 == lim) return h.status = ValueHeader::short_input;
    if (p[1] != '\n') [[unlikely]]
        goto malformed;
    h.key_size = key_size;
    h.header_size = static_cast<std::size_t>(p + 2 - base);
    h.flags = flags;
    h.value_size = value_size;
    h.cas = cas;
    h.has_cas = has_cas;
    return h.status = ValueHeader::ok;

malformed:
    st = NumberStatus::empty;
bad:
    h.why = st == NumberStatus::overflow ? reason::number_overflow : reason::malformed_value;
    h.bad_offset = static_cast<std::size_t>(at - base);
    return h.status = ValueHeader::bad;
}

// The decimal digit at p, or a value above 9.
[[gnu::always_inline]] inline unsigned digit_at(const char* p) noexcept {
    return static_cast<unsigned>(static_cast<unsigned char>(*p)) - '0';
}

// Parses the digits at p (at least 1, at most MaxDigits) up to the first other byte, which must
// come before lim; advances p to it. False for anything else: no digit, too many, lim first, or
// fewer than 4 bytes before lim. A run of MaxDigits <= 19 digits cannot overflow 64 bits, so
// nothing tests for overflow. The first three bytes are read at fixed offsets from p, so that a
// short number (the usual flags, the size of a small value) costs loads that wait on p only,
// not on one another; a longer one goes on byte by byte.
template <std::size_t MaxDigits>
[[gnu::always_inline]] inline bool short_decimal(const char*& p, const char* lim,
                                                 std::uint64_t& out) noexcept {
    static_assert(MaxDigits >= 3 && MaxDigits <= 19);
    if (lim - p < 4) return false;
    const unsigned d0 = digit_at(p), d1 = digit_at(p + 1), d2 = digit_at(p + 2);
    if (d0 > 9) return false;
    if (d1 > 9) {
        out = d0;
        p += 1;
        return true;
    }
    if (d2 > 9) {
        out = d0 * 10 + d1;
        p += 2;
        return true;
    }
    const char* const start = p;
    std::uint64_t v = d0 * 100 + d1 * 10 + d2;
    p += 3;
    for (;;) {
        if (p == lim) return false;
        const unsigned d = digit_at(p);
        if (d > 9) break;
        v = v * 10 + d;
        ++p;
    }
    out = v;
    return static_cast<std::size_t>(p - start) <= MaxDigits;
}

// The fast path for a hit: the whole "VALUE <key> <flags> <bytes>[ <cas>]\r\n<data>\r\n" at
// the front of [data, data + size) (which starts with "VALUE "), within the limits, decoded in
// one forward pass over the header. Returns the reply's length, or 0 for anything else (partial,
// malformed, over a limit, or merely unusual: a <bytes> of 19 digits or more), which the caller
// hands to the line path; `out` may then have been written. Accepts only what scan_value_header
// and accept_value_header accept, with the same fields, so the paths cannot disagree: their
// limit on the header, reading no further than min(size, max_line_length), is here a test of
// the header's length at the end (reads stay below data + size).
//
// In a multi-get's replies this is the path from one reply's start to the next one's, so the
// loads on it are at fixed offsets from the start, from the key's end or from the <bytes>
// field's start, never one after the other.
[[gnu::always_inline]] inline std::size_t decode_whole_value(const char* data, std::size_t size,
                                                             const Limits& limits,
                                                             Reply& out) noexcept {
    const char* const end = data + size;
    const char* const key = data + value_prefix;
    // A key is 1 to max_key_length bytes, so its end is found in that many + 1 or not at all.
    const auto key_lim = [&] {
        constexpr std::size_t key_scan = value_prefix + max_key_length + 1;
        return data + (size < key_scan ? size : key_scan);
    };
    const char* p;
    if (size >= value_prefix + 16) [[likely]] {
        const std::uint64_t stops0 = key_stops(load8(key)), stops1 = key_stops(load8(key + 8));
        const char* word = key;
        std::uint64_t stops = stops0;
        if (stops0 == 0) {
            word = key + 8;
            stops = stops1;
        }
        if (stops != 0) [[likely]] {
            p = word + first_stop(stops);
        } else {
            p = skip_key_bytes(key + 16, key_lim());
            if (p == key_lim()) return 0;
        }
    } else {
        p = skip_key_bytes(key, key_lim());
        if (p == key_lim()) return 0;
    }
    const auto key_size = static_cast<std::size_t>(p - key);
    // From the space on, the shortest complete rest is " 0 0\r\n\r\n" (8 bytes): p[0..7] are
    // input (short_decimal() checks its own 4 bytes).
    if (*p != ' ' || key_size - 1 >= max_key_length || end - p < 8) return 0;  // 0 wraps
    out.key = std::string_view(key, key_size);

    std::uint64_t flags = digit_at(p + 1);
    if (p[2] == ' ' && flags <= 9) [[likely]] {  // one digit, as flags mostly are
        p += 3;
    } else {
        ++p;
        if (!short_decimal<10>(p, end, flags) || flags > u32_max || *p != ' ') return 0;
        ++p;
        if (end - p < 3) return 0;
    }
    out.flags = static_cast<std::uint32_t>(flags);
    // <bytes>, 18 digits at most (far from wrapping header + size + 2). p[0..2] are input.
    // The reply's length, header + <bytes> + 2, is what the next reply's start waits for; for
    // one or two digits it is summed in each case straight from the bytes loaded at fixed
    // offsets, the digit needing most work last.
    std::uint64_t value_size;
    std::size_t consumed;  // header_size + value_size + 2
    {
        const std::size_t c0 = static_cast<unsigned char>(p[0]);
        const std::size_t c1 = static_cast<unsigned char>(p[1]);
        const auto at = static_cast<std::size_t>(p - data);
        if (c0 - '0' > 9) return 0;
        if (c1 - '0' > 9) {  // "<d>\r\n": header ends at p + 3
            value_size = c0 - '0';
            consumed = (at + 3 + 2 - '0') + c0;
            p += 1;
        } else if (digit_at(p + 2) > 9) {  // "<d><d>\r\n"
            value_size = c0 * 10 + c1 - ('0' * 10 + '0');
            consumed = (at + 4 + 2 - ('0' * 10 + '0') + c1) + c0 * 10;
            p += 2;
        } else {
            if (!short_decimal<18>(p, end, value_size)) return 0;
            consumed = static_cast<std::size_t>(p - data) + 2 + value_size + 2;
        }
    }
    std::uint64_t cas = 0;
    bool has_cas = false;
    if (*p == ' ') {
        ++p;
        if (parse_decimal<u64_max>(p, end, cas) != NumberStatus::ok || p == end) return 0;
        has_cas = true;
        consumed = static_cast<std::size_t>(p - data) + 2 + value_size + 2;
    }
    if (end - p < 2 || p[0] != '\r' || p[1] != '\n') return 0;
    const auto header_size = static_cast<std::size_t>(p + 2 - data);
    if (header_size > limits.max_line_length || value_size > limits.max_value_size) return 0;
    // consumed cannot wrap: header_size <= size and value_size < 10^18.
    if (consumed > size || data[consumed - 2] != '\r' || data[consumed - 1] != '\n') return 0;
    out.kind = ReplyKind::value;
    out.data = std::string_view(data + header_size, static_cast<std::size_t>(value_size));
    out.cas = cas;
    out.has_cas = has_cas;
    out.number = 0;
    return consumed;
}

// "<name> <value>", what follows "STAT " (and "ITEM "), as a stat reply: the name is one
// token; the value is the rest of the line after one space, kept verbatim (any bytes, UTF-8
// included, spaces too: some settings print lists). A bare name has an empty value. False for
// a line without a name.
inline bool stat_line(std::string_view rest, Reply& out) noexcept {
    const std::size_t space = rest.find(' ');
    const std::string_view name = rest.substr(0, space);
    if (name.empty()) return false;
    out.kind = ReplyKind::stat;
    out.key = name;
    out.data = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
    return true;
}

// Exactly `word` (which includes its "\r\n") at the front of the input.
template <std::size_t N>
inline bool at_front(const char* data, std::size_t size, const char (&word)[N]) noexcept {
    return size >= N - 1 && std::memcmp(data, word, N - 1) == 0;
}

// A ParseResult as a Step: its state is implied by the fields (see detail::Step).
inline detail::Step to_step(const ParseResult& r) noexcept {
    return {r.consumed, r.needed};
}

}  // namespace

void Decoder::reset() noexcept {
    pending_ = 0;
    error_ = DecodeError{};
    scanned_ = 0;
    header_size_ = 0;
    header_ = Reply{};
    key_offset_ = 0;
    value_size_ = 0;
}

ParseResult Decoder::fail(const char* why, std::size_t offset, std::string_view bytes) noexcept {
    pending_ |= failed_bit;
    error_ = text_decode_error(why, offset, bytes);
    return {ParseState::error, 0, 0};
}

detail::Step Decoder::parse_pending(std::string_view input, Reply& out) noexcept {
    if ((pending_ & failed_bit) != 0) return {0, 0};
    return to_step(parse_data_block(input, out));
}

detail::Step Decoder::parse_reply(std::string_view input, Reply& out) noexcept {
    const char* const data = input.data();
    const std::size_t size = input.size();
    if (size == 0) return {0, 1};

    // Fast paths for the replies a busy client sees most, recognised in place without looking
    // for the line end first: whole-line compares for the fixed words, a one-pass scan for a
    // VALUE header. Anything they do not fully recognise (an incomplete or malformed line, an
    // error text) goes to the line path, which reports it.
    const auto word = [&](ReplyKind kind, std::size_t consumed) {
        out = Reply{};
        out.kind = kind;
        scanned_ = 0;
        return detail::Step{consumed, 0};
    };
    if (data[0] == 'V') {
        // Only on the first look at a reply: after a need_more, scanned_ > 0 and the line path
        // resumes where it stopped, so feeding byte by byte stays O(n).
        if (scanned_ == 0 && at_front(data, size, "VALUE ")) {
            const std::size_t consumed = decode_whole_value(data, size, limits_, out);
            if (consumed != 0) [[likely]]
                return {consumed, 0};
            // Over a limit, partial, or not recognised by the fast scan.
            return parse_value_slow(input, out);
        }
        return parse_general(input, out);
    }
    if (at_front(data, size, "END\r\n")) return word(ReplyKind::end, 5);
    switch (data[0]) {
        case 'S':
            if (at_front(data, size, "STORED\r\n")) return word(ReplyKind::stored, 8);
            break;
        case 'N':
            if (at_front(data, size, "NOT_FOUND\r\n")) return word(ReplyKind::not_found, 11);
            if (at_front(data, size, "NOT_STORED\r\n")) return word(ReplyKind::not_stored, 12);
            break;
        case 'D':
            if (at_front(data, size, "DELETED\r\n")) return word(ReplyKind::deleted, 9);
            break;
        case 'T':
            if (at_front(data, size, "TOUCHED\r\n")) return word(ReplyKind::touched, 9);
            break;
        case 'O':
            if (at_front(data, size, "OK\r\n")) return word(ReplyKind::ok, 4);
            break;
        default:
            break;
    }
    return parse_general(input, out);
}

detail::Step Decoder::parse_value_slow(std::string_view input, Reply& out) noexcept {
    // Scans again rather than taking the fast path's result, so that its fields never leave
    // registers there.
    const std::size_t lim =
        input.size() < limits_.max_line_length ? input.size() : limits_.max_line_length;
    ValueHeader h;
    if (scan_value_header(input.data(), input.data() + lim, h) == ValueHeader::ok)
        return to_step(accept_value_header(input, h, out));
    return parse_general(input, out);
}

detail::Step Decoder::parse_general(std::string_view input, Reply& out) noexcept {
    const char* const data = input.data();
    const std::size_t size = input.size();
    if (!valid_first_byte(static_cast<unsigned char>(data[0]))) [[unlikely]]
        return to_step(fail(reason::unknown_reply, 0, input));

    // Search only bytes not searched before (resumption), and never past the longest line we
    // accept: a server cannot make us scan or wait without bound.
    const std::size_t limit = size < limits_.max_line_length ? size : limits_.max_line_length;
    const std::size_t from = scanned_ <= limit ? scanned_ : 0;
    const void* nl = from < limit ? std::memchr(data + from, '\n', limit - from) : nullptr;
    if (nl == nullptr) {
        if (size >= limits_.max_line_length) return to_step(fail(reason::line_too_long, 0, input));
        scanned_ = size;
        return {0, 1};
    }
    const auto newline = static_cast<std::size_t>(static_cast<const char*>(nl) - data);
    if (newline == 0 || data[newline - 1] != '\r') [[unlikely]]
        return to_step(fail(reason::bare_newline, newline, input.substr(0, newline + 1)));
    return to_step(parse_line(input, newline, out));
}

ParseResult Decoder::parse_line(std::string_view input, std::size_t newline, Reply& out) noexcept {
    const std::string_view line = input.substr(0, newline - 1);  // without "\r\n"
    const std::size_t consumed = newline + 1;
    out = Reply{};
    std::string_view text;
    switch (line[0]) {
        case 'V':
            if (starts_with(line, "VALUE ")) return parse_value_header(input, newline, out);
            if (starts_with(line, "VERSION") && word_with_text(line, 7, text)) {
                out.kind = ReplyKind::version;
                out.data = text;
                goto done;
            }
            break;
        case 'E':
            if (line == "END") {
                out.kind = ReplyKind::end;
                goto done;
            }
            if (line == "EXISTS") {
                out.kind = ReplyKind::exists;
                goto done;
            }
            // Plain "ERROR" is the norm; newer servers may append a reason.
            if (starts_with(line, "ERROR") && word_with_text(line, 5, text)) {
                out.kind = ReplyKind::error;
                out.data = text;
                goto done;
            }
            break;
        case 'S':
            if (line == "STORED") {
                out.kind = ReplyKind::stored;
                goto done;
            }
            if (starts_with(line, "STAT ")) {
                if (!stat_line(line.substr(5), out)) return fail(reason::malformed_stat, 0, line);
                goto done;
            }
            if (starts_with(line, "SERVER_ERROR") && word_with_text(line, 12, text)) {
                // Folsom reports these two as statuses, not failures, so they get their own kinds.
                const std::optional<Status> refusal = store_refusal(text);
                out.kind = !refusal                              ? ReplyKind::server_error
                           : *refusal == Status::value_too_large ? ReplyKind::value_too_large
                                                                 : ReplyKind::out_of_memory;
                out.data = text;
                goto done;
            }
            break;
        case 'N':
            if (line == "NOT_FOUND") {
                out.kind = ReplyKind::not_found;
                goto done;
            }
            if (line == "NOT_STORED") {
                out.kind = ReplyKind::not_stored;
                goto done;
            }
            break;
        case 'D':
            if (line == "DELETED") {
                out.kind = ReplyKind::deleted;
                goto done;
            }
            break;
        case 'T':
            if (line == "TOUCHED") {
                out.kind = ReplyKind::touched;
                goto done;
            }
            break;
        case 'O':
            if (line == "OK") {
                out.kind = ReplyKind::ok;
                goto done;
            }
            break;
        case 'I':
            if (starts_with(line, "ITEM ")) {
                // "ITEM <key> [<size> b; <exptime> s]", a line of "stats cachedump": a stat
                // named by the key, the rest its value (what libmemcached's dump lists).
                if (!stat_line(line.substr(5), out)) return fail(reason::malformed_stat, 0, line);
                goto done;
            }
            break;
        case 'C':
            if (starts_with(line, "CLIENT_ERROR") && word_with_text(line, 12, text)) {
                out.kind = ReplyKind::client_error;
                out.data = text;
                goto done;
            }
            break;
        default: {
            // Only digits reach here (valid_first_byte): an incr/decr result, up to 2^64-1.
            const char* p = line.data();
            const char* const end = p + line.size();
            std::uint64_t v = 0;
            const NumberStatus st = parse_decimal<u64_max>(p, end, v);
            if (st == NumberStatus::overflow) return fail(reason::number_overflow, 0, line);
            if (p != end) return fail(reason::unknown_reply, 0, line);
            out.kind = ReplyKind::number;
            out.number = v;
            goto done;
        }
    }
    return fail(reason::unknown_reply, 0, input.substr(0, consumed));

done:
    scanned_ = 0;
    return {ParseState::complete, consumed, 0};
}

ParseResult Decoder::parse_value_header(std::string_view input, std::size_t newline,
                                        Reply& out) noexcept {
    ValueHeader h;
    if (scan_value_header(input.data(), input.data() + newline + 1, h) != ValueHeader::ok)
        [[unlikely]] {
        // The whole line shows a malformed key or layout; a bad number shows from its token.
        if (h.bad_offset == 0) return fail(h.why, 0, input.substr(0, newline + 1));
        return fail(h.why, h.bad_offset, input.substr(h.bad_offset, newline - 1 - h.bad_offset));
    }
    return accept_value_header(input, h, out);
}

ParseResult Decoder::accept_value_header(std::string_view input, const ValueHeader& h,
                                         Reply& out) noexcept {
    // Refuse an oversized value on its header: we never wait for, nor buffer, its body. The
    // second test keeps header + size + 2 from wrapping whatever the configured limit.
    if (h.value_size > limits_.max_value_size ||
        h.value_size > std::numeric_limits<std::size_t>::max() - h.header_size - 2) [[unlikely]]
        return fail(reason::value_too_large, 0, input.substr(0, h.header_size));

    const auto value_size = static_cast<std::size_t>(h.value_size);
    const std::size_t data_end = h.header_size + value_size;
    const char* const base = input.data();
    if (input.size() >= data_end + 2 && base[data_end] == '\r' && base[data_end + 1] == '\n')
        [[likely]] {
        // The whole value is here: hand it over without touching the resumption state.
        out.kind = ReplyKind::value;
        out.key = std::string_view(base + value_prefix, h.key_size);
        out.data = std::string_view(base + h.header_size, value_size);
        out.flags = static_cast<std::uint32_t>(h.flags);
        out.cas = h.cas;
        out.has_cas = h.has_cas;
        out.number = 0;
        scanned_ = 0;
        return {ParseState::complete, data_end + 2, 0};
    }
    pending_ |= header_bit;
    header_size_ = h.header_size;
    key_offset_ = value_prefix;
    value_size_ = value_size;
    header_.kind = ReplyKind::value;
    header_.key = std::string_view(base + value_prefix, h.key_size);  // size kept; data re-based
    header_.flags = static_cast<std::uint32_t>(h.flags);
    header_.cas = h.cas;
    header_.has_cas = h.has_cas;
    return parse_data_block(input, out);
}

ParseResult Decoder::parse_data_block(std::string_view input, Reply& out) noexcept {
    const std::size_t data_end = header_size_ + value_size_;  // offset of the "\r\n"
    const std::size_t total = data_end + 2;
    const char* const base = input.data();
    if (input.size() < total) {
        // Reject a wrong terminator as soon as its first byte is here, not only when complete.
        if (input.size() > data_end && base[data_end] != '\r') [[unlikely]]
            return fail(reason::bad_data_terminator, data_end, input.substr(data_end));
        return {ParseState::need_more, 0, total - input.size()};
    }
    if (base[data_end] != '\r' || base[data_end + 1] != '\n') [[unlikely]]
        return fail(reason::bad_data_terminator, data_end, input.substr(data_end));

    out.kind = ReplyKind::value;
    out.key = std::string_view(base + key_offset_, header_.key.size());
    out.data = std::string_view(base + header_size_, value_size_);
    out.flags = header_.flags;
    out.cas = header_.cas;
    out.has_cas = header_.has_cas;
    out.number = 0;
    pending_ &= static_cast<std::uint8_t>(~header_bit);
    scanned_ = 0;
    return {ParseState::complete, total, 0};
}

}  // namespace folsom::protocol::ascii
