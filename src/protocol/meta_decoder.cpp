#include "folsom/protocol/meta_decoder.hpp"

#include "base/decimal.hpp"
#include "protocol/decode_error.hpp"

#include <cstring>
#include <limits>

namespace folsom::protocol::meta {
namespace {

using folsom::detail::parse_decimal;

// Signed, because 't' reports -1 for an item that never expires.
bool parse_i64(std::string_view s, std::int64_t& v) noexcept {
    const bool negative = !s.empty() && s.front() == '-';
    if (negative) s.remove_prefix(1);
    std::uint64_t r = 0;
    if (!parse_decimal(s, r)) return false;
    const auto limit = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (r > limit + (negative ? 1 : 0)) return false;
    v = negative ? static_cast<std::int64_t>(0 - r) : static_cast<std::int64_t>(r);
    return true;
}

// A token the server built from a key or an opaque: printable, no space.
bool is_token(std::string_view s) noexcept {
    for (char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7f) return false;
    }
    return true;
}

struct Problem {
    const char* reason = nullptr;  // nullptr: no problem
    std::size_t offset = 0;        // within the line
    std::size_t length = 0;
};

// Parses the return flags in `line` from `pos` on into `r`.
Problem parse_flags(std::string_view line, std::size_t pos, Reply& r) noexcept {
    while (pos < line.size()) {
        if (line[pos] == ' ') {  // tolerate repeated or trailing spaces
            ++pos;
            continue;
        }
        // One pass finds the token's end and checks its bytes (is_token's rule: a space ends
        // it, any other control byte is an error).
        std::size_t end = pos;
        bool control = false;
        for (; end < line.size(); ++end) {
            const auto u = static_cast<unsigned char>(line[end]);
            if (u == ' ') break;
            control = control || u < 0x20 || u == 0x7f;
        }
        const std::string_view tok = line.substr(pos, end - pos);
        const std::string_view arg = tok.substr(1);
        auto problem = [&](const char* reason) { return Problem{reason, pos, tok.size()}; };
        if (control) return problem("control character in reply flags");
        switch (tok.front()) {
            case 'O':
                r.opaque = arg;
                break;
            case 'k':
                if (arg.empty() || arg.size() > max_key_length) return problem("bad key flag");
                r.key = arg;
                break;
            case 'b':
                if (!arg.empty()) return problem("unexpected token on b flag");
                r.key_base64 = true;
                break;
            case 'c': {
                std::uint64_t v = 0;
                if (!parse_decimal(arg, v)) return problem("bad cas flag");
                r.cas = v;
                break;
            }
            case 'f': {
                std::uint32_t v = 0;
                if (!parse_decimal(arg, v)) return problem("bad client flags");
                r.client_flags = v;
                break;
            }
            case 't': {
                std::int64_t v = 0;
                if (!parse_i64(arg, v)) return problem("bad ttl flag");
                r.ttl = v;
                break;
            }
            case 's': {
                std::uint64_t v = 0;
                if (!parse_decimal(arg, v)) return problem("bad size flag");
                r.size = v;
                break;
            }
            case 'h':
                if (arg != "0" && arg != "1") return problem("bad hit-before flag");
                r.hit_before = arg == "1";
                break;
            case 'l': {
                std::uint64_t v = 0;
                if (!parse_decimal(arg, v)) return problem("bad last-access flag");
                r.last_access = v;
                break;
            }
            case 'W':
            case 'X':
            case 'Z':
                if (!arg.empty()) return problem("unexpected token on W/X/Z flag");
                (tok.front() == 'W' ? r.win : tok.front() == 'X' ? r.stale : r.win_sent) = true;
                break;
            default:
                // A flag this decoder does not know: the request chose it, so a newer caller
                // can still read it from the line; skipping it keeps old decoders working.
                break;
        }
        pos = end;
    }
    return {};
}

}  // namespace

std::optional<std::uint64_t> Reply::opaque_number() const noexcept {
    std::uint64_t v = 0;
    if (!parse_decimal(opaque, v)) return std::nullopt;
    return v;
}

void Decoder::reset() noexcept {
    failed_ = false;
    error_ = DecodeError{};
    scanned_ = 0;
    have_header_ = false;
    header_size_ = 0;
    value_size_ = 0;
    header_ = Reply{};
    key_offset_ = 0;
    opaque_offset_ = 0;
}

ParseResult Decoder::fail(const char* reason, std::string_view input, std::size_t offset,
                          std::size_t length) noexcept {
    failed_ = true;
    error_ = text_decode_error(
        reason, offset, offset <= input.size() ? input.substr(offset, length) : std::string_view{});
    return {ParseState::error, 0, 0};
}

ParseResult Decoder::parse(std::string_view input, Reply& out) noexcept {
    if (failed_) return {ParseState::error, 0, 0};
    if (have_header_) return finish_value(input, out);

    // Only the bytes not searched by an earlier call are searched again.
    if (scanned_ > input.size()) scanned_ = 0;  // not the same bytes: start over, stay correct
    // An empty view may have a null data(), which memchr must never be given (UB even for 0).
    if (input.empty()) return {ParseState::need_more, 0, 1};
    const void* nl = std::memchr(input.data() + scanned_, '\n', input.size() - scanned_);
    if (nl == nullptr) {
        if (input.size() >= limits_.max_line_length)
            return fail("reply line too long", input, 0, input.size());
        scanned_ = input.size();
        return {ParseState::need_more, 0, 1};
    }
    const auto pos = static_cast<std::size_t>(static_cast<const char*>(nl) - input.data());
    scanned_ = 0;
    if (pos + 1 > limits_.max_line_length) return fail("reply line too long", input, 0, pos + 1);
    if (pos == 0 || input[pos - 1] != '\r')
        return fail("reply line not terminated by \\r\\n", input, 0, pos + 1);
    return parse_line(input, pos - 1, out);
}

ParseResult Decoder::parse_line(std::string_view input, std::size_t line_end, Reply& out) noexcept {
    const std::string_view line = input.substr(0, line_end);
    const std::size_t consumed = line_end + 2;

    // The two-letter codes (every reply but the errors) are told apart by their two bytes.
    ReplyKind kind = ReplyKind::noop;
    bool known = line.size() >= 2 && (line.size() == 2 || line[2] == ' ');
    if (known) {
        switch ((static_cast<unsigned>(static_cast<unsigned char>(line[0])) << 8) |
                static_cast<unsigned char>(line[1])) {
            case ('V' << 8) | 'A':
                kind = ReplyKind::value;
                break;
            case ('H' << 8) | 'D':
                kind = ReplyKind::hit;
                break;
            case ('E' << 8) | 'N':
                kind = ReplyKind::miss;
                break;
            case ('E' << 8) | 'X':
                kind = ReplyKind::exists;
                break;
            case ('N' << 8) | 'F':
                kind = ReplyKind::not_found;
                break;
            case ('N' << 8) | 'S':
                kind = ReplyKind::not_stored;
                break;
            case ('M' << 8) | 'N':
                kind = ReplyKind::noop;
                break;
            case ('M' << 8) | 'E':
                kind = ReplyKind::debug;
                break;
            default:
                known = false;
        }
    }
    const std::size_t rest = line.size() > 2 ? 3 : 2;
    if (!known) {
        std::size_t sp = line.find(' ');
        if (sp == std::string_view::npos) sp = line.size();
        const std::string_view code = line.substr(0, sp);
        // Error replies carry free text, not flags.
        const auto text_reply = [&](ReplyKind k) {
            out = Reply{};
            out.kind = k;
            out.data = line.substr(sp < line.size() ? sp + 1 : line.size());
            return ParseResult{ParseState::complete, consumed, 0};
        };
        if (code == "ERROR") return text_reply(ReplyKind::error);
        if (code == "CLIENT_ERROR") return text_reply(ReplyKind::client_error);
        if (code == "SERVER_ERROR") return text_reply(ReplyKind::server_error);
        return fail("unknown reply code", input, 0, line.size());
    }

    out = Reply{};
    std::size_t flags_from = rest;
    std::uint64_t value_size = 0;
    if (kind == ReplyKind::value) {
        std::size_t end = line.find(' ', rest);
        if (end == std::string_view::npos) end = line.size();
        const std::string_view size_tok = line.substr(rest, end - rest);
        if (!parse_decimal(size_tok, value_size))
            return fail("bad value size", input, rest, size_tok.size());
        if (value_size > limits_.max_value_size)
            return fail("value size over limit", input, rest, size_tok.size());
        flags_from = end;
    } else if (kind == ReplyKind::debug) {
        std::size_t end = line.find(' ', rest);
        if (end == std::string_view::npos) end = line.size();
        const std::string_view key = line.substr(rest, end - rest);
        if (key.empty() || key.size() > max_key_length || !is_token(key))
            return fail("bad key in ME reply", input, rest, key.size());
        out.kind = ReplyKind::debug;
        out.key = key;
        out.data = line.substr(end < line.size() ? end + 1 : end);
        return {ParseState::complete, consumed, 0};
    }

    if (const Problem p = parse_flags(line, flags_from, out); p.reason)
        return fail(p.reason, input, p.offset, p.length);
    out.kind = kind;
    if (kind != ReplyKind::value) return {ParseState::complete, consumed, 0};

    const std::size_t size = static_cast<std::size_t>(value_size);
    const std::size_t total = consumed + size + 2;
    if (input.size() >= total) {  // the usual case: the data block is here already
        if (input[consumed + size] != '\r' || input[consumed + size + 1] != '\n')
            return fail("data block not terminated by \\r\\n", input, consumed + size, 2);
        out.data = input.substr(consumed, size);
        return {ParseState::complete, total, 0};
    }
    // Remember the header so that waiting for a large data block never re-parses it.
    have_header_ = true;
    header_size_ = consumed;
    value_size_ = size;
    header_ = out;
    key_offset_ = out.key.empty() ? 0 : static_cast<std::size_t>(out.key.data() - input.data());
    opaque_offset_ =
        out.opaque.empty() ? 0 : static_cast<std::size_t>(out.opaque.data() - input.data());
    return {ParseState::need_more, 0, total - input.size()};
}

ParseResult Decoder::finish_value(std::string_view input, Reply& out) noexcept {
    const std::size_t total = header_size_ + value_size_ + 2;
    if (input.size() < total) return {ParseState::need_more, 0, total - input.size()};
    const std::size_t end = header_size_ + value_size_;
    if (input[end] != '\r' || input[end + 1] != '\n')
        return fail("data block not terminated by \\r\\n", input, end, 2);
    out = header_;
    // The header's views may point into an earlier copy of these bytes: re-base them.
    out.key =
        header_.key.empty() ? std::string_view{} : input.substr(key_offset_, header_.key.size());
    out.opaque = header_.opaque.empty() ? std::string_view{}
                                        : input.substr(opaque_offset_, header_.opaque.size());
    out.data = input.substr(header_size_, value_size_);
    have_header_ = false;
    return {ParseState::complete, total, 0};
}

}  // namespace folsom::protocol::meta
