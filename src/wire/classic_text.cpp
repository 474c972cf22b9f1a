#include "wire/classic_text.hpp"

namespace folsom::detail {

std::error_code encode_classic_only(const Request& r, protocol::OutputBuffer& out) {
    namespace ascii = protocol::ascii;
    switch (r.code) {
        case OpCode::flush_all:
            return ascii::encode_flush_all(out, r.delay);
        case OpCode::stats:
            return ascii::encode_stats(out, r.group);
        case OpCode::version:
            return ascii::encode_version(out);
        case OpCode::verbosity:
            return ascii::encode_verbosity(out, r.level);
        default:
            return errc::unsupported;
    }
}

}  // namespace folsom::detail
