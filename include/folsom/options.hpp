// Options: everything a Client is configured with. Defaults follow Folsom's where Folsom has
// one (max_outstanding_requests = 1000, a 10 ms .. 60 s reconnect backoff, 3 s request timeout).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "folsom/cluster/continuum.hpp"

namespace folsom {

/// The wire protocol. Every Client operation works over all three, except that only binary and
/// meta can create a missing counter (incr/decr with an initial value; ascii: errc::unsupported)
/// and only binary does SASL. Keys follow the text protocol's rules over all three (1..250
/// bytes, no space or control character), so a key means the same whatever the protocol.
enum class Protocol : std::uint8_t { ascii, binary, meta };

/// A SASL user for servers started with `memcached -S`. Sent with the PLAIN mechanism, so the
/// password crosses the network in clear: use it on trusted networks (or, later, over TLS).
struct SaslCredentials {
    std::string username{};  // initialisers: designated initialisers may leave either out
    std::string password{};
};

struct Options {
    /// "host:port" entries (port defaults to 11211; "host:port:weight" sets a ketama weight).
    std::vector<std::string> servers = {"127.0.0.1:11211"};

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
    std::chrono::milliseconds reconnect_max_delay{60000};

    /// Values at least this long, moved into a request as std::string, are written to the
    /// socket straight from the caller's string (scatter-gather) instead of being copied.
    std::size_t scatter_threshold = 16 * 1024;

    /// Disable Nagle's algorithm (small pipelined requests go out at once).
    bool tcp_nodelay = true;

    /// Authenticate every connection with SASL PLAIN before any request (binary protocol only:
    /// memcached speaks SASL over the binary protocol; with ascii or meta, Client::connect
    /// throws std::system_error(errc::unsupported)). A refused login fails the requests waiting
    /// for that connection with errc::auth_failed, and the connection retries with the usual
    /// growing backoff (requests in between fail fast with errc::not_connected).
    std::optional<SaslCredentials> sasl = std::nullopt;
};

}  // namespace folsom
