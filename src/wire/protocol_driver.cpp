#include "wire/protocol_driver.hpp"

#include "folsom/error.hpp"

#include "wire/ascii_driver.hpp"
#include "wire/binary_driver.hpp"
#include "wire/meta_driver.hpp"
#include "wire/text_login.hpp"

namespace folsom::detail {

namespace {

std::unique_ptr<ProtocolDriver> make_bare_driver(const Options& options) {
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

}  // namespace

void check_credentials(const Options& options) {
    // memcached authenticates over the binary protocol only; a text connection to a -S server
    // would be refused command by command, so say so before connecting.
    if (options.sasl && options.protocol != Protocol::binary)
        throw std::system_error(errc::unsupported, "SASL needs the binary protocol");
    const bool login = !options.username.empty() || !options.password.empty();
    if (!login) return;
    if (options.sasl)
        throw std::system_error(errc::invalid_argument,
                                "set either Options::sasl or Options::username/password, not "
                                "both");
    if (options.protocol == Protocol::binary) return;  // SASL PLAIN (memcached -S)
    if (auto why = text_login_refusal(options.username, options.password); !why.empty())
        throw std::system_error(errc::invalid_argument, "text login: " + why);
}

std::unique_ptr<ProtocolDriver> make_protocol_driver(const Options& options) {
    check_credentials(options);
    if (options.username.empty() && options.password.empty()) return make_bare_driver(options);
    if (options.protocol == Protocol::binary) {
        Options with_sasl = options;
        with_sasl.sasl = SaslCredentials{options.username, options.password};
        return make_bare_driver(with_sasl);
    }
    return with_text_login(make_bare_driver(options), options.username, options.password);
}

}  // namespace folsom::detail
