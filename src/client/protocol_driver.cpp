#include "client/protocol_driver.hpp"

#include "folsom/error.hpp"

#include "client/ascii_driver.hpp"

namespace folsom::detail {

std::unique_ptr<ProtocolDriver> make_protocol_driver(const Options& options) {
    switch (options.protocol) {
        case Protocol::ascii:
            return std::make_unique<AsciiDriver>(options);
        case Protocol::binary:
        case Protocol::meta:
            break;
    }
    throw std::system_error(errc::unsupported, "protocol not available yet");
}

}  // namespace folsom::detail
