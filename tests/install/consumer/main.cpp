// A program outside the folsom tree, built against the installed package.
#include <folsom/compressed.hpp>
#include <folsom/error.hpp>
#include <folsom/protocol/ascii_encoder.hpp>
#include <iostream>

int main() {
    folsom::protocol::OutputBuffer out;
    std::string_view keys[] = {"hello"};
    if (folsom::protocol::ascii::encode_retrieve(out, folsom::protocol::ascii::RetrieveCommand::get,
                                                 keys))
        return 1;
    if (out.contiguous() != "get hello\r\n") return 1;
    // Compression links zstd and LZ4 through the package config (a static libfolsom needs them).
    const folsom::Compressed<folsom::Transcoder<std::string>> zstd(
        folsom::CompressionOptions{.codec = folsom::Codec::zstd, .threshold = 16});
    const folsom::Compressed<folsom::Transcoder<std::string>> lz4(
        folsom::CompressionOptions{.codec = folsom::Codec::lz4, .threshold = 16});
    const std::string text(4096, 'z');
    for (const auto* codec : {&zstd, &lz4}) {
        folsom::Encoded e = codec->encode(text);
        if (!(e.flags & folsom::value_flags::compression_mask) || e.data.size() >= text.size())
            return 1;
        std::string back;
        if (codec->decode(std::move(e), back) || back != text) return 1;
    }
    std::error_code ec = folsom::errc::invalid_key;
    std::cout << ec.category().name() << ": " << ec.message() << "\n";
    return 0;
}
