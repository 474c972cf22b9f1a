#include "net/tls_context.hpp"

#include "folsom/error.hpp"

#include <string>
#include <system_error>

namespace folsom::net {

std::unique_ptr<asio::ssl::context> make_tls_context(const TlsOptions& tls) {
    auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
    std::error_code ec;
    const char* step = "";
    auto check = [&](const char* what) {
        if (ec) throw std::system_error(errc::tls_error, std::string(what) + ": " + ec.message());
    };
    if (tls.verify) {
        step = tls.ca_file.empty() ? "loading the default trust store" : "loading the CA file";
        if (tls.ca_file.empty())
            ctx->set_default_verify_paths(ec);
        else
            ctx->load_verify_file(tls.ca_file, ec);
        check(step);
        ctx->set_verify_mode(asio::ssl::verify_peer, ec);
    } else {
        ctx->set_verify_mode(asio::ssl::verify_none, ec);
    }
    check("setting the verify mode");
    if (!tls.cert_file.empty()) {
        ctx->use_certificate_chain_file(tls.cert_file, ec);
        check("loading the client certificate");
        ctx->use_private_key_file(tls.key_file.empty() ? tls.cert_file : tls.key_file,
                                  asio::ssl::context::pem, ec);
        check("loading the client key");
    }
    return ctx;
}

}  // namespace folsom::net
