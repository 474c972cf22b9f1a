#include "folsom/protocol/base64.hpp"

#include <cstdint>

namespace folsom::protocol {
namespace {

constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// 0..63 for alphabet characters, 64 for anything else (including '=', handled separately).
constexpr std::uint8_t invalid = 64;
struct DecodeTable {
    std::uint8_t v[256];
    constexpr DecodeTable() : v{} {
        for (auto& x : v)
            x = invalid;
        for (std::uint8_t i = 0; i < 64; ++i)
            v[static_cast<unsigned char>(alphabet[i])] = i;
    }
};
constexpr DecodeTable table;

std::uint8_t sextet(char c) noexcept {
    return table.v[static_cast<unsigned char>(c)];
}

}  // namespace

std::size_t base64_encode(std::string_view in, char* out) noexcept {
    char* p = out;
    std::size_t i = 0;
    for (; i + 3 <= in.size(); i += 3) {
        const std::uint32_t n =
            static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])) << 16 |
            static_cast<std::uint32_t>(static_cast<unsigned char>(in[i + 1])) << 8 |
            static_cast<unsigned char>(in[i + 2]);
        *p++ = alphabet[n >> 18 & 63];
        *p++ = alphabet[n >> 12 & 63];
        *p++ = alphabet[n >> 6 & 63];
        *p++ = alphabet[n & 63];
    }
    const std::size_t rest = in.size() - i;
    if (rest > 0) {
        std::uint32_t n = static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])) << 16;
        if (rest == 2) n |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[i + 1])) << 8;
        *p++ = alphabet[n >> 18 & 63];
        *p++ = alphabet[n >> 12 & 63];
        *p++ = rest == 2 ? alphabet[n >> 6 & 63] : '=';
        *p++ = '=';
    }
    return static_cast<std::size_t>(p - out);
}

bool base64_decode(std::string_view in, char* out, std::size_t& out_size) noexcept {
    if (in.size() % 4 != 0) return false;
    char* p = out;
    for (std::size_t i = 0; i < in.size(); i += 4) {
        const bool last = i + 4 == in.size();
        // Padding may only appear in the last quantum, as "x===" is never valid.
        std::size_t pad = 0;
        if (last && in[i + 3] == '=') pad = in[i + 2] == '=' ? 2 : 1;
        std::uint32_t n = 0;
        for (std::size_t j = 0; j < 4 - pad; ++j) {
            const std::uint8_t s = sextet(in[i + j]);
            if (s == invalid) return false;
            n = n << 6 | s;
        }
        n <<= 6 * pad;
        // Canonical form only: the bits the padding stands in for must be zero.
        if (pad == 1 && (n & 0xff) != 0) return false;
        if (pad == 2 && (n & 0xffff) != 0) return false;
        *p++ = static_cast<char>(n >> 16 & 0xff);
        if (pad < 2) *p++ = static_cast<char>(n >> 8 & 0xff);
        if (pad < 1) *p++ = static_cast<char>(n & 0xff);
    }
    out_size = static_cast<std::size_t>(p - out);
    return true;
}

}  // namespace folsom::protocol
