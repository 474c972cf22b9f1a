#include "wire/protocol_driver.hpp"

#include "folsom/error.hpp"

#include "wire/ascii_driver.hpp"
#include "wire/binary_driver.hpp"
#include "wire/meta_driver.hpp"

namespace folsom::detail {

std::unique_ptr<ProtocolDriver> make_protocol_driver(const Options& options) {
    // memcached authenticates over the binary protocol only; a text connection to a -S server
    // would be refused command by command, so say so before connecting.
    if (options.sasl && options.protocol != Protocol::binary)
        throw std::system_error(errc::unsupported, "SASL needs the binary protocol");
    switch (options.protocol) {
        case Protocol::ascii:
            return std::make_unique<AsciiDriver>(options);
        case Protocol::binary:
            return std::make_unique<BinaryDriver>(options);
        case Protocol::meta:
            return std::make_unique<MetaDriver>(options);
    }
    throw std::system_error(errc::unsupported, "unknown protocol");
}

}  // namespace folsom::detail
