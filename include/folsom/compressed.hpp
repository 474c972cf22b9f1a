/// @file
/// Compressed<Inner>: a transcoder that compresses the bytes of another one (zstd or LZ4)
/// when they reach a threshold, and decompresses on read.
///
///     folsom::TypedClient<std::string, folsom::Compressed<folsom::Transcoder<std::string>>>
///         client(folsom::Client::connect(io, options),
///                folsom::Compressed<folsom::Transcoder<std::string>>(
///                    {.codec = folsom::Codec::lz4, .threshold = 512}));
///
/// Writing: the inner transcoder encodes; when its bytes are at least
/// CompressionOptions::threshold long (and at most max_decompressed_size), they are compressed
/// and the codec's bit (value_flags::zstd or value_flags::lz4) is added to the flags. A value
/// that does not shrink is stored as it is, unflagged.
///
/// Reading: a value flagged with a codec bit is decompressed, the bit cleared, and the result
/// given to the inner transcoder; a value without one (stored by a client that does not
/// compress, or below the threshold) goes to the inner transcoder untouched. Either codec is
/// read whatever CompressionOptions::codec says.
///
/// Errors: a decompressed size over CompressionOptions::max_decompressed_size (a decompression
/// bomb: refused before anything is allocated for it), corrupt compressed bytes, or both codec
/// bits at once fail the read with errc::decode_failed; the inner transcoder's errors pass
/// through. Compression failure on write is not an error: the value is stored uncompressed.
/// A codec this libfolsom was built without: the constructor throws std::system_error with
/// errc::built_without_zstd or errc::built_without_lz4 for CompressionOptions::codec, and a
/// read of a value flagged with the missing codec fails with that error.
///
/// Thread-safety: immutable after construction; encode and decode may run concurrently.
#pragma once

#include "folsom/compression.hpp"
#include "folsom/error.hpp"
#include "folsom/transcoder.hpp"
#include "folsom/value_flags.hpp"

#include <string>
#include <system_error>
#include <utility>

namespace folsom {

/// Wraps the transcoder `Inner`, compressing what it encodes and decompressing what it is
/// given back. A transcoder for T whenever Inner is one.
template <class Inner>
class Compressed {
  public:
    /// Compresses with `options` around `inner`. Throws std::system_error when
    /// `options.codec` is not built in (compression::available).
    explicit Compressed(CompressionOptions options = {}, Inner inner = Inner{})
        : options_(options), inner_(std::move(inner)) {
        if (auto ec = compression::available(options_.codec)) throw std::system_error(ec);
    }

    /// The inner encoding, compressed when it is at least options().threshold bytes long.
    template <class T>
    requires TranscoderFor<Inner, T> Encoded encode(const T& value)
    const {
        Encoded e = inner_.encode(value);
        // Already carrying a codec bit (an inner Value read raw): compressing again would
        // lose the first codec's mark.
        if (e.flags & value_flags::compression_mask) return e;
        if (e.data.size() < options_.threshold || e.data.size() > options_.max_decompressed_size)
            return e;
        if (auto packed = compression::compress(options_.codec, e.data, options_.level)) {
            e.data = std::move(*packed);
            e.flags |= compression::flag_of(options_.codec);
        }
        return e;
    }

    /// Decompresses a value flagged with a codec bit, then decodes it with the inner
    /// transcoder; an unflagged value goes to the inner transcoder untouched.
    template <class T>
    requires TranscoderFor<Inner, T> std::error_code decode(Encoded&& stored, T& out)
    const {
        const std::uint32_t codec_bits = stored.flags & value_flags::compression_mask;
        if (codec_bits == 0) return inner_.decode(std::move(stored), out);
        Codec codec;
        if (codec_bits == value_flags::zstd)
            codec = Codec::zstd;
        else if (codec_bits == value_flags::lz4)
            codec = Codec::lz4;
        else
            return errc::decode_failed;  // both bits: no writer does that
        Encoded plain;
        plain.flags = stored.flags & ~value_flags::compression_mask;
        if (auto ec = compression::decompress(codec, stored.data, options_.max_decompressed_size,
                                              plain.data))
            return ec;
        return inner_.decode(std::move(plain), out);
    }

    /// The options it compresses with.
    const CompressionOptions& options() const noexcept { return options_; }
    /// The wrapped transcoder.
    const Inner& inner() const noexcept { return inner_; }

  private:
    CompressionOptions options_;
    Inner inner_;
};

}  // namespace folsom
