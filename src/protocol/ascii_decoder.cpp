// Zero-copy, allocation-free decoder for memcached's text protocol replies. See the header for
// the contract (one reply per call, resumption, sticky errors).
//
// Shape of the hot path: one memchr for the line end, a switch on the first byte, exact word
// compares (fixed-length memcmp the compiler turns into a couple of loads) and a hand-rolled
// decimal parser. A VALUE header is parsed once; its data block is then framed by arithmetic,
// never scanned, so binary data containing "\r\n" cannot confuse the framing.
#include "folsom/protocol/ascii_decoder.hpp"

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

// Appends the escaped form of `c` to `buf` and returns its length (1 to 4 characters).
inline std::size_t escape(unsigned char c, char* buf) noexcept {
    static constexpr char hex[] = "0123456789abcdef";
    switch (c) {
        case '\r':
            buf[0] = '\\', buf[1] = 'r';
            return 2;
        case '\n':
            buf[0] = '\\', buf[1] = 'n';
            return 2;
        case '\t':
            buf[0] = '\\', buf[1] = 't';
            return 2;
        case '\\':
            buf[0] = '\\', buf[1] = '\\';
            return 2;
        case '"':
            buf[0] = '\\', buf[1] = '"';
            return 2;
        default:
            break;
    }
    if (c >= 0x20 && c < 0x7f) {
        buf[0] = static_cast<char>(c);
        return 1;
    }
    buf[0] = '\\';
    buf[1] = 'x';
    buf[2] = hex[c >> 4];
    buf[3] = hex[c & 0xf];
    return 4;
}

// Writes `bytes` escaped into the fixed context buffer; when they do not fit, keeps what fits
// (never half an escape) followed by "...".
void set_context(DecodeError& e, std::string_view bytes) noexcept {
    constexpr std::size_t cap = sizeof(e.context) - 1;  // keep room for the NUL
    std::size_t total = 0;
    for (char c : bytes) {
        char tmp[4];
        total += escape(static_cast<unsigned char>(c), tmp);
        if (total > cap) break;
    }
    const std::size_t budget = total > cap ? cap - 3 : cap;
    std::size_t n = 0;
    for (char c : bytes) {
        char tmp[4];
        const std::size_t len = escape(static_cast<unsigned char>(c), tmp);
        if (n + len > budget) break;
        std::memcpy(e.context + n, tmp, len);
        n += len;
    }
    if (total > cap) {
        std::memcpy(e.context + n, "...", 3);
        n += 3;
    }
    e.context[n] = '\0';
    e.context_size = n;
}

// Returns the first byte in [p, lim) that cannot be part of a key (<= 0x20: the space that
// ends it, or a control character), or lim. Eight bytes per step (SWAR): for a byte b below
// 0x80, (b - 0x21) borrows into bit 7 exactly when b <= 0x20; bytes >= 0x80 are masked out by
// ~x. A borrow can only flag bytes above a true hit, so the lowest flagged byte is exact.
[[gnu::always_inline]] inline const char* skip_key_bytes(const char* p, const char* lim) noexcept {
    constexpr std::uint64_t ones = 0x0101010101010101ULL;
    constexpr std::uint64_t highs = 0x8080808080808080ULL;
    while (lim - p >= 8) {
        std::uint64_t x;
        std::memcpy(&x, p, 8);
        const std::uint64_t hit = (x - ones * 0x21) & ~x & highs;
        if (hit != 0) {
            if constexpr (std::endian::native == std::endian::little)
                return p + (std::countr_zero(hit) >> 3);
            else
                return p + (std::countl_zero(hit) >> 3);
        }
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

// Exactly `word` (which includes its "\r\n") at the front of the input.
template <std::size_t N>
inline bool at_front(const char* data, std::size_t size, const char (&word)[N]) noexcept {
    return size >= N - 1 && std::memcmp(data, word, N - 1) == 0;
}

}  // namespace

std::string DecodeError::message() const {
    std::string s = reason;
    s += " at offset ";
    s += std::to_string(offset);
    s += ": \"";
    s.append(context, context_size);
    s += '"';
    return s;
}

void Decoder::reset() noexcept {
    failed_ = false;
    error_ = DecodeError{};
    scanned_ = 0;
    have_header_ = false;
    header_size_ = 0;
    header_ = Reply{};
    key_offset_ = 0;
    value_size_ = 0;
}

ParseResult Decoder::fail(const char* why, std::size_t offset, std::string_view bytes) noexcept {
    failed_ = true;
    error_.reason = why;
    error_.offset = offset;
    // The context never needs more input bytes than it has characters.
    set_context(error_, bytes.substr(0, sizeof(error_.context)));
    return {ParseState::error, 0, 0};
}

ParseResult Decoder::parse_reply(std::string_view input, Reply& out) noexcept {
    if (failed_) [[unlikely]]
        return {ParseState::error, 0, 0};
    if (have_header_) return parse_data_block(input, out);

    const char* const data = input.data();
    const std::size_t size = input.size();
    if (size == 0) return {ParseState::need_more, 0, 1};

    // Fast paths for the replies a busy client sees most, recognised in place without looking
    // for the line end first: whole-line compares for the fixed words, a one-pass scan for a
    // VALUE header. Anything they do not fully recognise (an incomplete or malformed line, an
    // error text) goes to the line path below, which reports it.
    const auto word = [&](ReplyKind kind, std::size_t consumed) {
        out = Reply{};
        out.kind = kind;
        scanned_ = 0;
        return ParseResult{ParseState::complete, consumed, 0};
    };
    if (data[0] == 'V') {
        // Only on the first look at a reply: after a need_more, scanned_ > 0 and the line path
        // resumes where it stopped, so feeding byte by byte stays O(n).
        if (scanned_ == 0 && at_front(data, size, "VALUE ")) {
            const std::size_t lim = size < limits_.max_line_length ? size : limits_.max_line_length;
            ValueHeader h;
            if (scan_value_header(data, data + lim, h) == ValueHeader::ok) {
                // Under the limit (and far from wrapping size_t), and all here: hand it over.
                const auto value_size = static_cast<std::size_t>(h.value_size);
                const std::size_t data_end = h.header_size + value_size;
                if (h.value_size <= limits_.max_value_size &&
                    h.value_size <= (std::numeric_limits<std::size_t>::max() >> 1) &&
                    size >= data_end + 2 && data[data_end] == '\r' && data[data_end + 1] == '\n') {
                    out.kind = ReplyKind::value;
                    out.key = std::string_view(data + value_prefix, h.key_size);
                    out.data = std::string_view(data + h.header_size, value_size);
                    out.flags = static_cast<std::uint32_t>(h.flags);
                    out.cas = h.cas;
                    out.has_cas = h.has_cas;
                    out.number = 0;
                    return {ParseState::complete, data_end + 2, 0};
                }
            }
            // Over the limit, partial, or not recognised by the fast scan.
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

ParseResult Decoder::parse_value_slow(std::string_view input, Reply& out) noexcept {
    // Scans again rather than taking the fast path's result, so that its fields never leave
    // registers there.
    const std::size_t lim =
        input.size() < limits_.max_line_length ? input.size() : limits_.max_line_length;
    ValueHeader h;
    if (scan_value_header(input.data(), input.data() + lim, h) == ValueHeader::ok)
        return accept_value_header(input, h, out);
    return parse_general(input, out);
}

ParseResult Decoder::parse_general(std::string_view input, Reply& out) noexcept {
    const char* const data = input.data();
    const std::size_t size = input.size();
    if (!valid_first_byte(static_cast<unsigned char>(data[0]))) [[unlikely]]
        return fail(reason::unknown_reply, 0, input);

    // Search only bytes not searched before (resumption), and never past the longest line we
    // accept: a server cannot make us scan or wait without bound.
    const std::size_t limit = size < limits_.max_line_length ? size : limits_.max_line_length;
    const std::size_t from = scanned_ <= limit ? scanned_ : 0;
    const void* nl = from < limit ? std::memchr(data + from, '\n', limit - from) : nullptr;
    if (nl == nullptr) {
        if (size >= limits_.max_line_length) return fail(reason::line_too_long, 0, input);
        scanned_ = size;
        return {ParseState::need_more, 0, 1};
    }
    const auto newline = static_cast<std::size_t>(static_cast<const char*>(nl) - data);
    if (newline == 0 || data[newline - 1] != '\r') [[unlikely]]
        return fail(reason::bare_newline, newline, input.substr(0, newline + 1));
    return parse_line(input, newline, out);
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
                // "STAT <name> <value>": the name is one token; the value is the rest of the
                // line after one space, kept verbatim (any bytes, UTF-8 included, spaces
                // too: some settings print lists). A bare name has an empty value.
                const std::string_view rest = line.substr(5);
                const std::size_t space = rest.find(' ');
                const std::string_view name = rest.substr(0, space);
                if (name.empty()) return fail(reason::malformed_stat, 0, line);
                out.kind = ReplyKind::stat;
                out.key = name;
                out.data =
                    space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
                goto done;
            }
            if (starts_with(line, "SERVER_ERROR") && word_with_text(line, 12, text)) {
                // Folsom reports these two as statuses, not failures, so they get their own kinds.
                if (text == "object too large for cache")
                    out.kind = ReplyKind::value_too_large;
                else if (text == "out of memory storing object")
                    out.kind = ReplyKind::out_of_memory;
                else
                    out.kind = ReplyKind::server_error;
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
    have_header_ = true;
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
    have_header_ = false;
    scanned_ = 0;
    return {ParseState::complete, total, 0};
}

}  // namespace folsom::protocol::ascii
