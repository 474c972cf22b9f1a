// Meta protocol decoder: the seed's three cases as memcached 1.6 sends them to folsom's meta
// driver — a single get ("mg <key> v f") is "VA 64 f0" and the data block, a multi-get is one
// quiet "mg <key> v k f q O<n>" per key, answered "VA 64 k<key> f0 O<n>" and closed by MN,
// and a single get's miss is EN.
// Baseline "scan": memchr for every "\r\n", the least any line-based decoder does.
#include "folsom/protocol/meta_decoder.hpp"

#include "decoder_bench.hpp"

#include <cstring>
#include <string>

namespace folsom::bench {
namespace {

struct MetaProtocol {
    using Decoder = protocol::meta::Decoder;
    using Reply = protocol::meta::Reply;

    static const std::string& response(Case c) {
        static const std::string single = "VA 64 f0\r\n" + seed_value(1) + "\r\n";
        static const std::string batch = [] {
            std::string s;
            for (int i = 1; i <= 16; ++i)
                s += "VA 64 k" + seed_key(i) + " f0 O" + std::to_string(i - 1) + "\r\n" +
                     seed_value(i) + "\r\n";
            return s + "MN\r\n";
        }();
        static const std::string miss = "EN\r\n";
        return c == Case::single_hit ? single : c == Case::batch16 ? batch : miss;
    }

    static std::size_t replies(Case c) { return c == Case::batch16 ? 17 : 1; }

    // Every "\r\n", found with memchr; reported as replies (a VA's two lines count once).
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

[[maybe_unused]] const bool registered = register_decoder_benchmarks<MetaProtocol>("meta", "scan");

}  // namespace
}  // namespace folsom::bench
