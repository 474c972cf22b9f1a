// What the encoder fuzz targets share: reading one command back out of the bytes an encoder
// appended, and the key rules written out independently of key.hpp (so the two check each
// other).
#pragma once

#include "folsom/error.hpp"
#include "folsom/protocol/key.hpp"

#include "fuzz_check.hpp"

#include <algorithm>
#include <cstddef>
#include <fuzzer/FuzzedDataProvider.h>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace folsom::fuzz {

/// One command as it went on the wire: its line split into tokens, and what followed the line.
struct Command {
    std::vector<std::string_view> tokens;
    std::string_view after_line;  // the data block of a store ("" for everything else)
};

/// Reads `bytes` as exactly one command line: one "\r\n" ends it, no other '\r' or '\n' is in
/// it, and its tokens are separated by exactly one space (no empty token).
inline Command read_command(std::string_view bytes) {
    Command c;
    const std::size_t end = bytes.find("\r\n");
    FUZZ_CHECK(end != std::string_view::npos, "the command line is not terminated by \\r\\n");
    const std::string_view line = bytes.substr(0, end);
    FUZZ_CHECK(line.find_first_of("\r\n") == std::string_view::npos,
               "a \\r or \\n inside the command line");
    FUZZ_CHECK(line.find('\0') == std::string_view::npos, "a NUL inside the command line");
    std::size_t pos = 0;
    for (;;) {
        const std::size_t sp = line.find(' ', pos);
        const std::string_view tok = line.substr(pos, sp - pos);
        FUZZ_CHECK(!tok.empty(), "an empty token (leading, trailing or double space)");
        c.tokens.push_back(tok);
        if (sp == std::string_view::npos) break;
        pos = sp + 1;
    }
    c.after_line = bytes.substr(end + 2);
    return c;
}

/// The key rules of the text and meta protocols, as key.hpp documents them.
inline bool key_ok(std::string_view key) {
    if (key.empty() || key.size() > protocol::max_key_length) return false;
    return std::none_of(key.begin(), key.end(), [](char ch) {
        const auto u = static_cast<unsigned char>(ch);
        return u <= 0x20 || u == 0x7f;
    });
}

/// validate_key() must agree with the documented rules; returns the verdict.
inline bool checked_key_ok(std::string_view key) {
    const bool ok = key_ok(key);
    FUZZ_CHECK(!protocol::validate_key(key) == ok, "validate_key() disagrees with the key rules");
    return ok;
}

/// The argument of "stats": one token or a few ("cachedump 1 0"), each following the key rules
/// and separated by exactly one space, so it can never end the line or start a second command.
inline bool stats_group_ok(std::string_view group) {
    if (group.empty()) return true;
    std::size_t pos = 0;
    for (;;) {
        const std::size_t sp = group.find(' ', pos);
        if (!key_ok(group.substr(pos, sp - pos))) return false;
        if (sp == std::string_view::npos) return true;
        pos = sp + 1;
    }
}

/// A key that is valid often and invalid in every way sometimes: raw bytes, printable bytes,
/// printable bytes with one hostile byte planted (space, \r, \n, NUL, DEL, ...), or a length
/// right around the 250-byte limit.
inline std::string fuzz_key(FuzzedDataProvider& p) {
    std::string k = p.ConsumeRandomLengthString(300);
    switch (p.ConsumeIntegralInRange<int>(0, 4)) {
        case 0:
            break;
        case 1:
        case 2:
            for (char& ch : k)
                ch = static_cast<char>(0x21 + static_cast<unsigned char>(ch) % 94);
            if (k.empty()) k = "k";
            break;
        case 3: {
            for (char& ch : k)
                ch = static_cast<char>(0x21 + static_cast<unsigned char>(ch) % 94);
            static constexpr char hostile[] = {' ', '\r', '\n', '\0', '\x7f', '\t', '\x01', '\x20'};
            const char bad = hostile[p.ConsumeIntegralInRange<std::size_t>(0, sizeof hostile - 1)];
            k.insert(p.ConsumeIntegralInRange<std::size_t>(0, k.size()), 1, bad);
            break;
        }
        case 4:
            k.assign(p.ConsumeIntegralInRange<std::size_t>(245, 256), 'k');
            break;
    }
    return k;
}

/// Data for a store: usually small, sometimes holding "\r\n" or looking like a command.
inline std::string fuzz_data(FuzzedDataProvider& p) {
    std::string d = p.ConsumeRandomLengthString(512);
    if (p.ConsumeBool()) d += "\r\nget x\r\n";
    return d;
}

/// Checks the outcome of one encoder call: refused with one of `allowed` (and nothing
/// appended), or, when `allowed` is empty, accepted. Returns true when accepted.
inline bool check_verdict(std::error_code ec, const std::vector<errc>& allowed,
                          std::size_t size_before, std::size_t size_after) {
    if (allowed.empty()) {
        FUZZ_CHECK(!ec, "valid arguments were refused");
        FUZZ_CHECK(size_after > size_before, "accepted, yet nothing was appended");
        return true;
    }
    FUZZ_CHECK(ec, "invalid arguments were accepted");
    FUZZ_CHECK(std::any_of(allowed.begin(), allowed.end(),
                           [&](errc e) { return ec == make_error_code(e); }),
               "refused with an unexpected error code");
    FUZZ_CHECK(size_after == size_before, "refused, yet bytes were appended");
    return false;
}

}  // namespace folsom::fuzz
