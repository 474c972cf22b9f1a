#include "folsom/protocol/binary_decoder.hpp"

#include "protocol/decode_error.hpp"

namespace folsom::protocol::binary {
namespace {

// Big-endian loads from the header (bytes as unsigned, so 0x80.. do not sign-extend).
std::uint16_t load16(const unsigned char* p) noexcept {
    return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

std::uint32_t load32(const unsigned char* p) noexcept {
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
           std::uint32_t{p[3]};
}

std::uint64_t load64(const unsigned char* p) noexcept {
    return (std::uint64_t{load32(p)} << 32) | load32(p + 4);
}

// Header field offsets, so error reports can point at the field that is wrong.
constexpr std::size_t magic_at = 0;
constexpr std::size_t opcode_at = 1;
constexpr std::size_t key_length_at = 2;
constexpr std::size_t extras_length_at = 4;
constexpr std::size_t data_type_at = 5;
constexpr std::size_t status_at = 6;
constexpr std::size_t body_length_at = 8;
constexpr std::size_t opaque_at = 12;
constexpr std::size_t cas_at = 16;

}  // namespace

void Decoder::reset() noexcept {
    failed_ = false;
    error_ = DecodeError{};
}

ParseResult Decoder::fail(const char* reason, std::string_view input, std::size_t offset,
                          std::size_t length) noexcept {
    failed_ = true;
    error_ = binary_decode_error(
        reason, offset, offset <= input.size() ? input.substr(offset, length) : std::string_view{});
    return {ParseState::error};
}

ParseResult Decoder::parse(std::string_view input, Response& out) noexcept {
    if (failed_) return {ParseState::error};
    const auto* h = reinterpret_cast<const unsigned char*>(input.data());
    // The magic is checked on the first byte, not the 24th: a server answering in the text
    // protocol ("ERROR\r\n" is 7 bytes) must fail now, not leave us waiting for a header.
    if (!input.empty() && h[magic_at] != response_magic)
        return fail("bad magic byte", input, magic_at, 1);
    if (input.size() < header_size) return {ParseState::need_more, 0, header_size - input.size()};

    if (h[data_type_at] != raw_data_type) return fail("unknown data type", input, data_type_at, 1);

    const auto opcode = static_cast<Opcode>(h[opcode_at]);
    const std::size_t key_length = load16(h + key_length_at);
    const std::size_t extras_length = h[extras_length_at];
    const auto status = static_cast<ResponseStatus>(load16(h + status_at));
    const std::size_t body_length = load32(h + body_length_at);

    if (key_length + extras_length > body_length)
        return fail("key and extras longer than the body", input, key_length_at, 10);
    if (key_length > max_key_length) return fail("key length over limit", input, key_length_at, 2);
    const std::size_t value_length = body_length - key_length - extras_length;
    if (value_length > limits_.max_value_size)
        return fail("value size over limit", input, body_length_at, 4);
    if (is_retrieval(opcode) && extras_length != 0 && extras_length != 4)
        return fail("retrieval reply extras are not 0 or 4 bytes", input, extras_length_at, 1);
    if (is_arithmetic(opcode) && status == ResponseStatus::no_error &&
        (extras_length != 0 || key_length != 0 || value_length != 8))
        return fail("arithmetic reply is not an 8-byte number", input, key_length_at, 10);

    // size_t holds 24 + a 32-bit length on every platform we build for, so this cannot wrap.
    const std::size_t packet_size = header_size + body_length;
    if (input.size() < packet_size) return {ParseState::need_more, 0, packet_size - input.size()};

    out = Response{};
    out.opcode = opcode;
    out.status = status;
    out.opaque = load32(h + opaque_at);
    out.cas = load64(h + cas_at);
    out.extras = input.substr(header_size, extras_length);
    out.key = input.substr(header_size + extras_length, key_length);
    out.value = input.substr(header_size + extras_length + key_length, value_length);
    if (is_retrieval(opcode) && extras_length == 4) {
        out.flags = load32(h + header_size);
        out.has_flags = true;
    }
    if (is_arithmetic(opcode) && status == ResponseStatus::no_error)
        out.number = load64(h + header_size);
    return {ParseState::complete, packet_size, 0};
}

}  // namespace folsom::protocol::binary
