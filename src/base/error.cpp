#include "folsom/error.hpp"

namespace folsom {
namespace {

class FolsomCategory final : public std::error_category {
  public:
    const char* name() const noexcept override { return "folsom"; }

    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
            case errc::not_connected:
                return "not connected to the server";
            case errc::closed:
                return "client shut down (or server removed from the cluster)";
            case errc::overloaded:
                return "too many outstanding requests";
            case errc::timeout:
                return "timed out";
            case errc::protocol_error:
                return "protocol error: malformed reply from the server";
            case errc::invalid_key:
                return "invalid key";
            case errc::value_too_large:
                return "value too large";
            case errc::auth_failed:
                return "authentication failed";
            case errc::server_error:
                return "server error";
            case errc::client_error:
                return "client error reported by the server";
            case errc::invalid_argument:
                return "invalid argument";
            case errc::resolve_failed:
                return "could not resolve server address";
            case errc::connect_failed:
                return "could not connect to the server";
            case errc::tls_error:
                return "TLS error";
            case errc::unsupported:
                return "operation not supported by this protocol";
            case errc::cancelled:
                return "request cancelled";
            case errc::connection_lost:
                return "connection to the server lost";
            case errc::decode_failed:
                return "stored value could not be decoded (corrupt, oversized or wrong type)";
            case errc::fill_failed:
                return "the fill function of a cache recipe failed";
            case errc::no_sasl_mechanism:
                return "the server offers no SASL PLAIN mechanism (on its host, install "
                       "libsasl2-modules)";
        }
        return "unknown folsom error";
    }
};

}  // namespace

const std::error_category& category() noexcept {
    static const FolsomCategory instance;
    return instance;
}

}  // namespace folsom
