/// @file
/// Compression codecs for stored values (zstd and LZ4), as used by Compressed<Inner>
/// (compressed.hpp), with the limits that keep a hostile or corrupt value from making the
/// client allocate without bound.
///
/// Formats (what another client must write for folsom-cpp to read it, and reads back):
///   - Codec::zstd, flag value_flags::zstd: one zstd frame whose header records the content
///     size (ZSTD_compress writes it); a frame without it is refused.
///   - Codec::lz4, flag value_flags::lz4: the decompressed size as 4 bytes little-endian, then
///     one LZ4 block (python-lz4's block format with store_size=True).
///
/// Errors: decompress() refuses with errc::decode_failed a value that claims a decompressed
/// size over `max_size` (a decompression bomb: nothing is allocated for it), that does not
/// decompress to exactly the size it claims, or that is otherwise corrupt.
///
/// Thread-safety: the functions are reentrant and may be called from any thread at once.
/// Ownership: inputs are read during the call only; outputs are owned by the caller.
#pragma once

#include "folsom/export.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace folsom {

/// A compression algorithm for values.
enum class Codec : std::uint8_t {
    zstd,  ///< zstd: better ratio; the default
    lz4,   ///< LZ4: faster, lower ratio
};

/// How Compressed<Inner> compresses.
struct FOLSOM_EXPORT CompressionOptions {
    /// The algorithm new values are written with (values written with the other one are
    /// still read: the flags say which).
    Codec codec = Codec::zstd;
    /// Encoded values at least this many bytes long are compressed; shorter ones are stored as
    /// they are (compression rarely pays for small values).
    std::size_t threshold = 1024;
    /// The largest decompressed size a read accepts (the decompression-bomb limit). Values
    /// longer than this are stored uncompressed, so everything written stays readable; keep
    /// it at least Options::max_value_size. Default: memcached's 1 MiB item size.
    std::size_t max_decompressed_size = 1024 * 1024;
    /// Codec level: zstd's compression level (0: zstd's default, 3), or LZ4's acceleration
    /// (0 or 1: the default; higher is faster with a lower ratio).
    int level = 0;
};

namespace compression {

/// Whether this libfolsom has `codec`: empty, or errc::built_without_zstd /
/// errc::built_without_lz4 when it was built without that library (folsom/config.hpp).
FOLSOM_EXPORT std::error_code available(Codec codec) noexcept;

/// The client flag bit that marks values compressed with `codec` (value_flags.hpp).
FOLSOM_EXPORT std::uint32_t flag_of(Codec codec) noexcept;

/// `input` compressed with `codec` in the format above; empty when compressing would not make
/// it smaller, the codec failed or is not built in (see available()), in which case the value
/// is best stored as it is.
FOLSOM_EXPORT std::optional<std::string> compress(Codec codec, std::string_view input,
                                                  int level = 0);

/// Decompresses `input` (written with `codec`) into `out`; errc::decode_failed when it claims
/// more than `max_size` bytes or is corrupt (`out` is then unspecified); the error of
/// available(codec) when the codec is not built in.
FOLSOM_EXPORT std::error_code decompress(Codec codec, std::string_view input, std::size_t max_size,
                                         std::string& out);

}  // namespace compression
}  // namespace folsom
