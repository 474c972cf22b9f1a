// The client side of TLS: one asio::ssl::context built from TlsOptions, shared by every
// stream of a connection (a stream is made anew on each connect; the context is not).
#pragma once

#include "folsom/options.hpp"

#include <asio/ssl/context.hpp>

#include <memory>

namespace folsom::net {

/// A TLS client context: the trust store (TlsOptions::ca_file, or the system's), the verify
/// mode, and the client certificate and key when given. Throws std::system_error
/// (errc::tls_error) naming the step that failed, e.g. an unreadable CA file.
std::unique_ptr<asio::ssl::context> make_tls_context(const TlsOptions& tls);

}  // namespace folsom::net
