// The client side of TLS: one asio::ssl::context built from TlsOptions, shared by every
// stream of a connection (a stream is made anew on each connect; the context is not), and the
// per-stream settings (SNI, the host name check). Used by connections to servers and by
// discovery endpoints that speak TLS (ElastiCache's), so both verify alike.
#pragma once

#include "folsom/options.hpp"

#include <asio/ssl/context.hpp>
#include <asio/ssl/host_name_verification.hpp>
#include <asio/ssl/stream.hpp>

#include <memory>
#include <string>

namespace folsom::net {

/// A TLS client context: the trust store (TlsOptions::ca_file, or the system's), the verify
/// mode, and the client certificate and key when given. Throws std::system_error
/// (errc::tls_error) naming the step that failed, e.g. an unreadable CA file.
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
