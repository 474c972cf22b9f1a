#include "folsom/protocol/decode_result.hpp"

#include "protocol/decode_error.hpp"

#include <cstring>

namespace folsom::protocol {
namespace {

constexpr char hex_digits[] = "0123456789abcdef";

// Writes the escaped form of `c` to `buf` and returns its length (1 to 4 characters).
std::size_t escape(unsigned char c, char* buf) noexcept {
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
    buf[2] = hex_digits[c >> 4];
    buf[3] = hex_digits[c & 0xf];
    return 4;
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

DecodeError text_decode_error(const char* reason, std::size_t offset,
                              std::string_view bytes) noexcept {
    DecodeError e;
    e.reason = reason;
    e.offset = offset;
    constexpr std::size_t cap = sizeof(e.context) - 1;  // keep room for the NUL
    // The context never holds more input bytes than it has characters.
    bytes = bytes.substr(0, sizeof(e.context));
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
    return e;
}

DecodeError binary_decode_error(const char* reason, std::size_t offset,
                                std::string_view bytes) noexcept {
    DecodeError e;
    e.reason = reason;
    e.offset = offset;
    std::size_t n = 0;
    for (char c : bytes) {
        if (n + 4 > sizeof e.context) break;
        const auto u = static_cast<unsigned char>(c);
        e.context[n++] = '\\';
        e.context[n++] = 'x';
        e.context[n++] = hex_digits[u >> 4];
        e.context[n++] = hex_digits[u & 0xf];
    }
    e.context_size = n;
    return e;
}

}  // namespace folsom::protocol
