/// @file
/// Options: everything a Client is configured with. Defaults follow Folsom's where Folsom has
/// one (max_outstanding_requests = 1000, a 10 ms .. 60 s reconnect backoff, 3 s request timeout).
///
/// Thread-safety and lifetime: the client copies the Options it is given; changing them
/// afterwards has no effect. Errors: a malformed server list makes Client::connect throw
/// std::system_error(errc::invalid_argument).
#pragma once

#include "folsom/cluster/continuum.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace folsom {

/// The memcached wire protocol a client speaks: text (ascii), binary, or meta commands.
enum class Protocol : std::uint8_t { ascii, binary, meta };

/// TLS for every connection (memcached started with -Z). Certificates are PEM files.
struct TlsOptions {
    /// CA certificates to verify the server with; empty: the system's default trust store.
    std::string ca_file;
    /// Optional client certificate and its private key (for servers that verify clients).
    std::string cert_file;
    std::string key_file;  ///< the private key of cert_file
    /// Name sent as SNI and checked against the server's certificate; empty: the server's
    /// host as written in Options::servers.
    std::string server_name;
    /// Verify the server's certificate chain and name. Turn off only for tests.
    bool verify = true;
};

/// Everything a Client is configured with; every field has a usable default.
struct Options {
    /// "host:port" entries (port defaults to 11211; "host:port:weight" sets a ketama weight).
    std::vector<std::string> servers = {"127.0.0.1:11211"};

    /// The wire protocol; ASCII works with every memcached.
    Protocol protocol = Protocol::ascii;

    /// How keys are placed on servers. The default places every key exactly where libmemcached
    /// (MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED) does, so a service can switch clients without
    /// losing its cache.
    cluster::Distribution distribution = cluster::Distribution::ketama_libmemcached;

    /// Requests in flight across the whole client; past it a request fails at once with
    /// errc::overloaded (Folsom's MemcacheOverloadedException).
    std::size_t max_outstanding_requests = 1000;

    /// Largest value accepted on the way out and on the way in (memcached's default item size).
    std::size_t max_value_size = 1024 * 1024;

    /// Connections per server; requests are spread over them round-robin.
    std::size_t connections_per_server = 1;

    /// A TCP connect (plus TLS/SASL handshake) that takes longer fails with errc::timeout.
    std::chrono::milliseconds connect_timeout{3000};

    /// With requests outstanding on a connection, no byte from the server for this long closes
    /// the connection and fails its requests with errc::timeout (Folsom's request timeout).
    std::chrono::milliseconds request_timeout{3000};

    /// Reconnect backoff after a connection is lost or a connect fails: starts at
    /// reconnect_initial_delay, doubles on every failed attempt, capped at reconnect_max_delay.
    std::chrono::milliseconds reconnect_initial_delay{10};
    std::chrono::milliseconds reconnect_max_delay{60000};  ///< cap of the reconnect backoff

    /// Values at least this long, moved into a request as std::string, are written to the
    /// socket straight from the caller's string (scatter-gather) instead of being copied.
    std::size_t scatter_threshold = 16 * 1024;

    /// Disable Nagle's algorithm (small pipelined requests go out at once).
    bool tcp_nodelay = true;

    /// TLS on every connection when set. A failed handshake or certificate check fails the
    /// connect with errc::tls_error (and the connection retries with the usual backoff).
    std::optional<TlsOptions> tls = std::nullopt;
};

}  // namespace folsom
