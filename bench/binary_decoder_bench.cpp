// Binary protocol decoder: the seed's three cases as memcached sends them to folsom's binary
// driver — a single get is a GETK (one packet: 4 bytes of flags, the key, the value), a
// multi-get is one GETKQ hit per key closed by a NOOP, and a single get's miss is a GETK
// with status "key not found" and memcached's "Not found" text.
// Baseline "walk": read each header's body length and jump over the body, the least any
// binary decoder does.
#include "folsom/protocol/binary_decoder.hpp"

#include "decoder_bench.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace folsom::bench {
namespace {

namespace bin = protocol::binary;

void put_be(std::string& out, std::uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i)
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

/// One response packet: header, then extras, key and value.
std::string packet(bin::Opcode op, bin::ResponseStatus status, std::uint32_t opaque,
                   std::uint64_t cas, std::string_view extras, std::string_view key,
                   std::string_view value) {
    std::string p;
    p.push_back(static_cast<char>(bin::response_magic));
    p.push_back(static_cast<char>(op));
    put_be(p, key.size(), 2);
    put_be(p, extras.size(), 1);
    put_be(p, bin::raw_data_type, 1);
    put_be(p, static_cast<std::uint16_t>(status), 2);
    put_be(p, extras.size() + key.size() + value.size(), 4);
    put_be(p, opaque, 4);
    put_be(p, cas, 8);
    p.append(extras).append(key).append(value);
    return p;
}

const std::string no_flags(4, '\0');

std::string hit(bin::Opcode op, int i) {
    return packet(op, bin::ResponseStatus::no_error, static_cast<std::uint32_t>(i),
                  static_cast<std::uint64_t>(1000 + i), no_flags, seed_key(i), seed_value(i));
}

struct BinaryProtocol {
    using Decoder = bin::Decoder;
    using Reply = bin::Response;

    static const std::string& response(Case c) {
        static const std::string single = hit(bin::Opcode::getk, 1);
        static const std::string batch = [] {
            std::string s;
            for (int i = 1; i <= 16; ++i)
                s += hit(bin::Opcode::getkq, i);
            return s + packet(bin::Opcode::noop, bin::ResponseStatus::no_error, 17, 0, {}, {}, {});
        }();
        static const std::string miss = packet(
            bin::Opcode::getk, bin::ResponseStatus::key_not_found, 1, 0, {}, {}, "Not found");
        return c == Case::single_hit ? single : c == Case::batch16 ? batch : miss;
    }

    static std::size_t replies(Case c) { return c == Case::batch16 ? 17 : 1; }

    static std::size_t baseline(const char* data, std::size_t size) {
        const auto* p = reinterpret_cast<const unsigned char*>(data);
        std::size_t at = 0, packets = 0;
        while (size - at >= bin::header_size) {
            const std::size_t body = (std::size_t{p[at + 8]} << 24) |
                                     (std::size_t{p[at + 9]} << 16) |
                                     (std::size_t{p[at + 10]} << 8) | std::size_t{p[at + 11]};
            at += bin::header_size + body;
            ++packets;
        }
        return packets;
    }
};

[[maybe_unused]] const bool registered =
    register_decoder_benchmarks<BinaryProtocol>("binary", "walk");

}  // namespace
}  // namespace folsom::bench
