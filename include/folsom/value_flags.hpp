/// @file
/// The bits of an item's 32-bit client flags that folsom-cpp's transcoders use.
///
/// memcached stores the flags with the item and returns them unchanged; clients use them to
/// say how the bytes were encoded. folsom-cpp's transcoders use only bits 24-31 (the top byte),
/// leaving bits 0-23 to the application (user transcoders and folsom::Value carry them through):
///
/// | bit | mask         | meaning                                                           |
/// |-----|--------------|-------------------------------------------------------------------|
/// | 24  | `0x01000000` | `string`: UTF-8/text written by Transcoder<std::string>           |
/// | 25  | `0x02000000` | `zstd`: the bytes are a zstd frame (Compressed<>)                 |
/// | 26  | `0x04000000` | `lz4`: the bytes are a 4-byte little-endian size + an LZ4 block   |
/// | 27-31 | `0xf8000000` | reserved for later folsom-cpp use                               |
///
/// Values written by other clients, which leave the top byte clear (spymemcached, Folsom,
/// libmemcached and pylibmc use bits 0-15), are read untouched.
///
/// Thread-safety: constants only. Errors: none here; a value whose compression bits cannot be
/// honoured fails to decode with errc::decode_failed (see compressed.hpp).
#pragma once

#include <cstdint>

namespace folsom::value_flags {

/// The value is text (Transcoder<std::string>); informative, never required to read it.
inline constexpr std::uint32_t string = 1u << 24;
/// The value is compressed with zstd (a frame that records the decompressed size).
inline constexpr std::uint32_t zstd = 1u << 25;
/// The value is compressed with LZ4: a 4-byte little-endian decompressed size, then one block.
inline constexpr std::uint32_t lz4 = 1u << 26;
/// Every compression bit: a transcoder that finds one of these set must decompress first.
inline constexpr std::uint32_t compression_mask = zstd | lz4;
/// The bits folsom-cpp owns; applications use the others.
inline constexpr std::uint32_t reserved_mask = 0xff000000u;

}  // namespace folsom::value_flags
