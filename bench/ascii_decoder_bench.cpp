// ASCII (text protocol) decoder: the seed's three cases exactly as Folsom PR #247's JMH
// benchmark has them — "VALUE ... END" for one 64-byte hit, 16 hits then END, a bare END for
// a miss. Baseline "scan": memchr for every "\r\n", the least any line-based decoder does.
#include "folsom/protocol/ascii_decoder.hpp"

#include "decoder_bench.hpp"

#include <cstring>
#include <string>

namespace folsom::bench {
namespace {

struct AsciiProtocol {
    using Decoder = protocol::ascii::Decoder;
    using Reply = protocol::ascii::Reply;

    static std::string hit(int i) {
        return "VALUE " + seed_key(i) + " 0 64\r\n" + seed_value(i) + "\r\n";
    }

    static const std::string& response(Case c) {
        static const std::string single = hit(1) + "END\r\n";
        static const std::string batch = [] {
            std::string s;
            for (int i = 1; i <= 16; ++i)
                s += hit(i);
            return s + "END\r\n";
        }();
        static const std::string miss = "END\r\n";
        return c == Case::single_hit ? single : c == Case::batch16 ? batch : miss;
    }

    // Each hit is two lines (header, data block) but one reply; END is one more.
    static std::size_t replies(Case c) {
        return c == Case::single_hit ? 2 : c == Case::batch16 ? 17 : 1;
    }

    // Every "\r\n", found with memchr; reported as replies (a hit's two lines count once).
    static std::size_t baseline(const char* data, std::size_t size) {
        const char* p = data;
        const char* const end = data + size;
        std::size_t lines = 0;
        while (p < end) {
            const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
            if (nl == nullptr) break;
            const char* q = static_cast<const char*>(nl);
            lines += (q > data && q[-1] == '\r');
            p = q + 1;
        }
        return (lines + 1) / 2;
    }
};

[[maybe_unused]] const bool registered =
    register_decoder_benchmarks<AsciiProtocol>("ascii", "scan");

}  // namespace
}  // namespace folsom::bench
