// zstd and LZ4 behind folsom/compression.hpp. Every decompression is bounded before anything
// is allocated: by the size the value claims, which must not exceed the caller's cap, and the
// codec then writes into exactly that many bytes (so a value lying about its size fails
// instead of growing the buffer).
#include "folsom/compression.hpp"

#include "folsom/error.hpp"
#include "folsom/value_flags.hpp"

#include <cstring>
#include <limits>
#include <lz4.h>
#include <zstd.h>

namespace folsom::compression {
namespace {

constexpr std::size_t lz4_header = 4;  // decompressed size, little-endian

std::optional<std::string> compress_zstd(std::string_view input, int level) {
    // Room for one byte less than the input: a result that does not shrink is not worth a
    // flag, and ZSTD_compress then fails cheaply with dstSize_tooSmall.
    std::string out(input.size() - 1, '\0');
    const std::size_t n = ZSTD_compress(out.data(), out.size(), input.data(), input.size(),
                                        level == 0 ? ZSTD_CLEVEL_DEFAULT : level);
    if (ZSTD_isError(n)) return std::nullopt;
    out.resize(n);
    return out;
}

std::optional<std::string> compress_lz4(std::string_view input, int level) {
    if (input.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE) ||
        input.size() <= lz4_header + 1)
        return std::nullopt;
    std::string out(input.size() - 1, '\0');
    const auto size = static_cast<std::uint32_t>(input.size());
    for (std::size_t i = 0; i < lz4_header; ++i)
        out[i] = static_cast<char>((size >> (8 * i)) & 0xff);
    const int n =
        LZ4_compress_fast(input.data(), out.data() + lz4_header, static_cast<int>(input.size()),
                          static_cast<int>(out.size() - lz4_header), level < 1 ? 1 : level);
    if (n <= 0) return std::nullopt;  // 0: would not fit, i.e. not smaller
    out.resize(lz4_header + static_cast<std::size_t>(n));
    return out;
}

std::error_code decompress_zstd(std::string_view input, std::size_t max_size, std::string& out) {
    const unsigned long long claimed = ZSTD_getFrameContentSize(input.data(), input.size());
    // Unknown (a streamed frame) or unreadable: there is no bound to allocate by.
    if (claimed == ZSTD_CONTENTSIZE_UNKNOWN || claimed == ZSTD_CONTENTSIZE_ERROR)
        return errc::decode_failed;
    if (claimed > max_size) return errc::decode_failed;
    out.assign(static_cast<std::size_t>(claimed), '\0');
    const std::size_t n = ZSTD_decompress(out.data(), out.size(), input.data(), input.size());
    if (ZSTD_isError(n) || n != out.size()) return errc::decode_failed;
    return {};
}

std::error_code decompress_lz4(std::string_view input, std::size_t max_size, std::string& out) {
    if (input.size() < lz4_header) return errc::decode_failed;
    std::uint32_t claimed = 0;
    for (std::size_t i = 0; i < lz4_header; ++i)
        claimed |= static_cast<std::uint32_t>(static_cast<unsigned char>(input[i])) << (8 * i);
    if (claimed > max_size || claimed > static_cast<std::uint32_t>(LZ4_MAX_INPUT_SIZE) ||
        input.size() - lz4_header > static_cast<std::size_t>(std::numeric_limits<int>::max()))
        return errc::decode_failed;
    out.assign(claimed, '\0');
    const int n =
        LZ4_decompress_safe(input.data() + lz4_header, out.data(),
                            static_cast<int>(input.size() - lz4_header), static_cast<int>(claimed));
    if (n < 0 || static_cast<std::uint32_t>(n) != claimed) return errc::decode_failed;
    return {};
}

}  // namespace

std::uint32_t flag_of(Codec codec) noexcept {
    return codec == Codec::lz4 ? value_flags::lz4 : value_flags::zstd;
}

std::optional<std::string> compress(Codec codec, std::string_view input, int level) {
    if (input.size() < 2) return std::nullopt;  // nothing to gain
    return codec == Codec::lz4 ? compress_lz4(input, level) : compress_zstd(input, level);
}

std::error_code decompress(Codec codec, std::string_view input, std::size_t max_size,
                           std::string& out) {
    return codec == Codec::lz4 ? decompress_lz4(input, max_size, out)
                               : decompress_zstd(input, max_size, out);
}

}  // namespace folsom::compression
