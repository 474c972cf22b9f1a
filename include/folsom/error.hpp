/// @file
/// Error codes of folsom-cpp: every failure a request can complete with.
///
/// Failures are std::error_code values in the "folsom" category. Outcomes that are not
/// failures (a miss, NOT_STORED, EXISTS, ...) are a folsom::Status, never an error.
///
/// This header includes no Asio and is usable from the protocol layer.
///
/// Thread-safety: the category is a stateless singleton; everything here may be used from any
/// thread.
#pragma once

#include "folsom/export.hpp"

#include <string>
#include <system_error>

namespace folsom {

/// Every error a folsom request or codec can report. Values are stable (they appear in
/// metrics and logs); append new ones at the end.
enum class errc {
    not_connected = 1,  ///< no connection to the server that owns the key (down, or connecting)
    closed,             ///< the client was shut down (see connection_lost for a dropped connection)
    overloaded,         ///< more than Options::max_outstanding_requests in flight
    timeout,            ///< connect timeout, or no bytes from the server for too long
    protocol_error,     ///< the server sent bytes that are not a valid reply (connection dropped)
    invalid_key,        ///< empty, too long, or holds a space or control character
    value_too_large,    ///< a value over the configured maximum (refused before sending)
    auth_failed,        ///< SASL authentication was refused
    server_error,       ///< SERVER_ERROR (other than the ones mapped to a Status) or ERROR
    client_error,       ///< CLIENT_ERROR: the server says the request was malformed
    invalid_argument,   ///< a request argument out of range (e.g. no keys, bad server address)
    resolve_failed,     ///< a server host name could not be resolved
    connect_failed,     ///< the TCP (or TLS) connection could not be established
    tls_error,          ///< TLS handshake or certificate verification failed
    unsupported,        ///< the operation is not available with the chosen protocol
    cancelled,          ///< the caller cancelled the request (its reply, if any, is discarded)
    connection_lost,    ///< the connection broke under the request (server closed it, I/O error);
                        ///< unlike `closed`, the client is alive and reconnects by itself
    decode_failed,      ///< a stored value could not be turned back into the requested type:
                        ///< corrupt compressed data, a decompressed size over the cap (a
                        ///< decompression bomb), or a transcoder refusing the bytes or flags
    fill_failed,        ///< a cache recipe's fill function threw (cache_recipes.hpp)
    no_sasl_mechanism,  ///< the server offers no SASL mechanism the client speaks (PLAIN); a
                        ///< memcached -S without Cyrus' plugins (Debian: libsasl2-modules)
    // A feature this libfolsom was built without (its optional library was not found, or was
    // turned off with -DFOLSOM_WITH_<X>=OFF; folsom/config.hpp says which are in):
    built_without_c_ares,         ///< DNS SRV discovery (make_dns_srv_discovery)
    built_without_zstd,           ///< Codec::zstd
    built_without_lz4,            ///< Codec::lz4
    built_without_zlib,           ///< HashRoute's Crc32 hash function
    built_without_nlohmann_json,  ///< RouteConfig::parse and RouteConfig::load
};

/// The "folsom" error category.
FOLSOM_EXPORT const std::error_category& category() noexcept;

/// The std::error_code of `e` (found by argument-dependent lookup, so `ec == errc::timeout`
/// works).
inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), category()};
}

/// True when an error means the connection it happened on can no longer be trusted and must
/// be closed (its in-flight requests fail, the reconnect logic takes over).
constexpr bool is_fatal(errc e) noexcept {
    return e == errc::protocol_error || e == errc::timeout || e == errc::closed ||
           e == errc::connection_lost;
}

}  // namespace folsom

/// @cond
// Lets a folsom::errc compare with and convert to std::error_code.
template <>
struct std::is_error_code_enum<folsom::errc> : std::true_type {};
/// @endcond
