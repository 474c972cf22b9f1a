// The client side of TLS as Options::tls configures it: one OpenSSL context (trust store or
// CA file, verification, optional client certificate), and the per-stream settings (SNI and
// the host name check). Used by every connection to a server and by discovery endpoints that
// speak TLS (ElastiCache's configuration endpoint), so both verify alike.
#pragma once

#include "folsom/options.hpp"

#include <asio/ssl/context.hpp>
#include <asio/ssl/host_name_verification.hpp>
#include <asio/ssl/stream.hpp>

#include <memory>
#include <string>

namespace folsom::net {

/// A client TLS context for `tls`. Throws std::system_error(errc::tls_error) naming the step
/// that failed (a CA file or certificate that cannot be loaded).
std::unique_ptr<asio::ssl::context> make_tls_context(const TlsOptions& tls);

/// Sets SNI and, when `tls.verify`, the host name check on `stream` before its handshake: the
/// name is TlsOptions::server_name, or `host` (as written in the address) when that is empty.
template <class Stream>
void prepare_tls_stream(asio::ssl::stream<Stream>& stream, const TlsOptions& tls,
                        const std::string& host) {
    const std::string& name = tls.server_name.empty() ? host : tls.server_name;
    // SNI, so a server behind one address with several certificates picks the right one.
    SSL_set_tlsext_host_name(stream.native_handle(), name.c_str());
    if (tls.verify) stream.set_verify_callback(asio::ssl::host_name_verification(name));
}

}  // namespace folsom::net
