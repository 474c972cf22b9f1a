/// @file
/// Options: everything a Client is configured with. Defaults follow Folsom's where Folsom has
/// one (max_outstanding_requests = 1000, a 10 ms .. 60 s reconnect backoff, 3 s request timeout).
///
/// Thread-safety and lifetime: the client copies the Options it is given; changing them
/// afterwards has no effect. Errors: a malformed server list makes Client::connect throw
/// std::system_error(errc::invalid_argument).
#pragma once

#include "folsom/cluster/continuum.hpp"
#include "folsom/connection_state.hpp"
#include "folsom/export.hpp"
#include "folsom/routes.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace folsom {

namespace cluster {
class Discovery;  // cluster/discovery.hpp
}
class Metrics;  // metrics.hpp
class Tracer;   // tracing.hpp

/// The wire protocol. Every Client operation works over all three, except that only binary and
/// meta can create a missing counter (incr/decr with an initial value; ascii: errc::unsupported)
/// and only binary does SASL. Keys follow the text protocol's rules over all three (1..250
/// bytes, no space or control character), so a key means the same whatever the protocol.
/// Keys of any bytes: Options::binary_keys over meta (base64 on the wire), or
/// Options::raw_binary_protocol_keys over binary (as libmemcached sends them there).
enum class Protocol : std::uint8_t { ascii, binary, meta };

/// TLS for every connection (memcached started with -Z). Certificates are PEM files.
struct FOLSOM_EXPORT TlsOptions {
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

/// A SASL user for servers started with `memcached -S`. Sent with the PLAIN mechanism, so the
/// password crosses the network in clear: use it on trusted networks (or over TLS: Options::tls).
struct FOLSOM_EXPORT SaslCredentials {
    std::string username{};  ///< the SASL user name
    std::string password{};  ///< the user's password (sent in clear: see above)
    // Both have initialisers: designated initialisers may leave either out.
};

/// The server a Client connects to when Options::servers is empty (and neither discovery nor
/// routes name the servers): memcached's own default address.
inline constexpr const char* default_server = "127.0.0.1:11211";

/// TCP keepalive (Options::tcp_keepalive): on an idle connection, a probe after `idle`, then
/// every `interval`; after `count` unanswered probes the kernel ends the connection, which
/// then fails and reconnects as on any other loss. It finds a peer that vanished without a
/// word (a host gone, a NAT or load balancer that forgot the connection), which an idle
/// connection would otherwise never notice. Linux limits: idle and interval 1..32767 s, count
/// 1..127; outside them Client::connect throws std::system_error(errc::invalid_argument).
struct FOLSOM_EXPORT TcpKeepalive {
    std::chrono::seconds idle{60};      ///< idle time before the first probe (TCP_KEEPIDLE)
    std::chrono::seconds interval{10};  ///< between probes (TCP_KEEPINTVL)
    int count = 3;                      ///< unanswered probes before the end (TCP_KEEPCNT)
};

/// Everything a Client is configured with; every field has a usable default.
struct FOLSOM_EXPORT Options {
    /// "host:port" entries (port defaults to 11211; "host:port:weight" sets a ketama weight).
    /// Starts empty, so that `push_back` (as with libmemcached's memcached_server_add) gives
    /// exactly the servers pushed. Empty at connect (without `discovery` or `routes`): one
    /// server, default_server (127.0.0.1:11211, memcached's default). The environment
    /// ($MEMCACHED_SERVERS) is not read here; the `folsom` program reads it.
    std::vector<std::string> servers{};

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
    /// Each wait is that backoff spread at random over 80..120%, so that connections that
    /// failed together (a pool, every client of a restarted server) come back spread out.
    std::chrono::milliseconds reconnect_initial_delay{10};
    std::chrono::milliseconds reconnect_max_delay{60000};  ///< cap of the reconnect backoff

    /// Values at least this long, moved into a request as std::string, are written to the
    /// socket straight from the caller's string (scatter-gather) instead of being copied.
    std::size_t scatter_threshold = 16 * 1024;

    /// Disable Nagle's algorithm (small pipelined requests go out at once).
    bool tcp_nodelay = true;

    /// TCP keepalive on every TCP connection (not Unix sockets) when set; see TcpKeepalive.
    std::optional<TcpKeepalive> tcp_keepalive = std::nullopt;

    /// TCP_USER_TIMEOUT: data written but unacknowledged for this long ends the connection
    /// (and, with tcp_keepalive, so do unanswered probes once this long has passed, whatever
    /// the count). 0: the system's default. 0..2^31-1 ms, else Client::connect throws
    /// std::system_error(errc::invalid_argument).
    std::chrono::milliseconds tcp_user_timeout{0};

    // ---- key namespace ------------------------------------------------------------------

    /// Keys are binary: any bytes (NUL, space, CR, LF, 0x80..0xff included), 1..186 of them
    /// (protocol::max_binary_key_length: memcached limits the *encoded* key to 250 bytes).
    /// Every key of every call (get, get_multi and its view forms, gets/cas, the stores,
    /// delete, touch, gat, incr/decr, delete_all, the meta calls, QuietClient, TypedClient,
    /// the recipes) is sent in base64 with the meta 'b' flag. A key outside 1..186 bytes
    /// fails with errc::invalid_key and nothing is sent. Results come back under the caller's
    /// own bytes (MultiGetResult, ValueView::key: the server's base64 keys are decoded).
    ///
    /// Meta protocol only: with Protocol::ascii or Protocol::binary (or a route pool whose
    /// "protocol" is one of them), Client::connect throws std::system_error(errc::unsupported)
    /// (RouteConfigError for a pool): ascii cannot carry such a key, and over binary
    /// raw_binary_protocol_keys is the switch (keys as they are, up to 250 bytes). Both name
    /// the same items, since memcached stores the raw bytes either way.
    ///
    /// memcached stores the decoded bytes, so a key that is also a valid text key names the
    /// same item with or without this switch (a client without it reads what one with it
    /// wrote): there is no per-call choice because none is needed. Placement hashes the raw
    /// bytes, never the base64 form, so a key lands where any client hashing the raw key puts
    /// it. key_prefix, when set, is put in front of the raw key and the two are encoded
    /// together (the 186-byte limit counts both); with binary_keys the prefix may hold any
    /// bytes, up to 185. A multi-key get or gets holding a key that is not a valid text key
    /// goes as one mg per key (its position in the opaque) rather than one classic
    /// "get k1 k2 ..." line, which has no base64 form; one of valid text keys keeps the line
    /// (the same items, and its replies name keys by their raw bytes).
    bool binary_keys = false;

    /// Prepended to the key of every operation before it is sent (libmemcached's
    /// MEMCACHED_CALLBACK_PREFIX_KEY / namespace), so that several applications can share
    /// servers without their keys colliding. The caller never sees it: keys given to and
    /// returned by the client (multi-get results, ValueView::key) are without it. The prefix
    /// counts toward the 250-byte key limit: a key that is too long once prefixed fails with
    /// errc::invalid_key. It follows the key rules (no space or control character) and is at
    /// most 249 bytes (with binary_keys: any bytes, at most 185); otherwise Client::connect
    /// throws std::system_error(invalid_argument).
    /// Empty (the default): keys are sent as given, and nothing is added to the request path.
    std::string key_prefix{};

    /// Over Protocol::binary: send keys as the binary protocol carries them, 1..250 bytes of
    /// any value (space, CR, LF, NUL and other control bytes included), rather than by the
    /// text protocol's rules. This is what libmemcached does over binary (where it never
    /// checks a key's bytes), and what the libmemcached drop-in needs for the keys PHP and
    /// pylibmc store there. Such a key names an item only another binary client of this kind,
    /// or a meta client with binary_keys, can name (memcached stores the raw bytes). A key
    /// outside 1..250 bytes still fails with errc::invalid_key and nothing is sent. Off (the
    /// default): the text rules everywhere. Only with Protocol::binary: Client::connect throws
    /// std::system_error(invalid_argument) otherwise (a route pool of another protocol keeps the
    /// text rules).
    bool raw_binary_protocol_keys = false;

    /// With key_prefix set: place keys on servers by the prefixed key (true, the default), or
    /// by the key without the prefix (false: libmemcached's default, where
    /// MEMCACHED_BEHAVIOR_HASH_WITH_PREFIX_KEY is off). Either way placement matches
    /// libmemcached configured alike; use false to share a cache with a libmemcached client
    /// that left that behaviour at its default.
    bool hash_with_key_prefix = true;

    /// TLS on every connection when set. A failed handshake or certificate check fails the
    /// connect with errc::tls_error (and the connection retries with the usual backoff).
    std::optional<TlsOptions> tls = std::nullopt;

    // ---- many servers -------------------------------------------------------------------

    /// Retry an idempotent request (get, gets, gat, gats, touch, delete; never a store, incr
    /// or decr) once when the connection it was in flight on is lost (errc::connection_lost;
    /// never after shutdown). The retry goes to the next connection of the key's server (or,
    /// with failover, to the server the key fails over to); if that fails too, the second
    /// error is the result. On by default, as in Folsom: repeating these requests cannot
    /// change what is stored, and a dropped connection is the failure most worth hiding.
    /// Caveat: a delete that did reach the server before the connection dropped answers
    /// not_found on its retry.
    bool retry_idempotent = true;

    /// libmemcached-style auto-eject (off by default, so that placement never differs from
    /// libmemcached's while servers are up — and while one is down, its keys simply fail).
    /// When enabled, a server whose every connection is down is marked dead; keys it owns go
    /// to the next live server on the ring until it reconnects or `dead_timeout` passes.
    struct Failover {
        bool enabled = false;  ///< turns auto-eject on
        /// How long a server stays dead after its last connection goes down or a reconnect
        /// attempt fails (each failure restarts it); a connection coming up ends it at once.
        std::chrono::milliseconds dead_timeout{1000};
        /// Consecutive failures (the last live connection lost, a connect or reconnect attempt
        /// that fails) before the server is marked dead; a connection coming up resets the
        /// count. 1 (the default) marks it at the first failure; until the limit its keys stay
        /// on it and fail (not_connected while it reconnects). libmemcached's
        /// MEMCACHED_BEHAVIOR_SERVER_FAILURE_LIMIT; pymemcache HashClient's retry_attempts + 1.
        /// 0 is taken as 1.
        std::uint32_t failure_limit = 1;
    };
    Failover failover{};  ///< auto-eject of dead servers (off by default); see Failover

    /// Called when a server's state changes (connecting, connected, disconnected, closed),
    /// with its "host:port". Runs on the I/O thread, inside the connection's event loop: keep
    /// it short and do not block. May run (with `closed`) after shutdown(), until the
    /// executor has run the pending work.
    std::function<void(const std::string& server, ConnectionState state)> on_connection_state{};

    /// Where the server list comes from, when it is not fixed (cluster/discovery.hpp:
    /// make_dns_srv_discovery for DNS SRV records, make_elasticache_discovery for an ElastiCache
    /// configuration endpoint, or your own Discovery). When set, `servers` is ignored: the client
    /// starts with no server (requests fail fast with not_connected) and resolves at once, then
    /// every discovery_interval. When the set changes, the ring is rebuilt and swapped atomically;
    /// new servers are connected; removed servers keep serving requests already routed to them and
    /// are closed after discovery_drain_delay. A failed or empty resolution keeps the current set.
    std::shared_ptr<cluster::Discovery> discovery{};
    /// How often `discovery` is asked again after the first resolution (at least 1 ms).
    std::chrono::milliseconds discovery_interval{30000};
    /// How long a server that left the discovered set keeps serving the requests already
    /// routed to it before its connections are closed.
    std::chrono::milliseconds discovery_drain_delay{10000};
    /// Pools and a route tree over them (routes.hpp, docs/routing.md): replication,
    /// failover, warm-up, shadowing and selection by key prefix or operation, as mcrouter
    /// configures them. When set, `servers` and `discovery` are not used: every server comes
    /// from the pools (each pool a ketama ring), and every other option applies to every
    /// pool. Client::connect throws RouteConfigError for a configuration that cannot be used.
    std::optional<RouteConfig> routes = std::nullopt;

    /// Authenticate every connection with SASL PLAIN before any request (binary protocol only:
    /// memcached speaks SASL over the binary protocol; with ascii or meta, Client::connect
    /// throws std::system_error(errc::unsupported)). A refused login fails the requests waiting
    /// for that connection with errc::auth_failed, and the connection retries with the usual
    /// growing backoff (requests in between fail fast with errc::not_connected).
    std::optional<SaslCredentials> sasl = std::nullopt;

    /// Log in on every connect and reconnect, before any request. Over ascii and meta:
    /// memcached's text-protocol authentication (a server started with `-Y <auth file>`,
    /// memcached >= 1.5.15; see docs/connections.md). Over binary: SASL PLAIN, as `sasl`
    /// (set one or the other, not both). A refused login fails the requests waiting for that
    /// connection with errc::auth_failed, and the connection retries with the usual growing
    /// backoff; a text server that does not ask for a login fails the connect with
    /// errc::unsupported and is never sent the password. For the text login, each is 1..250
    /// bytes with no space or control character, and the username has no ':'; otherwise
    /// Client::connect throws std::system_error(errc::invalid_argument). The password
    /// crosses the network in clear (use TLS off trusted networks) and is never written into
    /// an error message, a metric or a log.
    std::string username{};
    std::string password{};  ///< see username

    // ---- observability (docs/observability.md) ----------------------------------------

    /// Per-server telemetry: every request, its latency and outcome, bytes, connection events
    /// (metrics.hpp; MetricsRegistry is a ready-made implementation with Prometheus output).
    /// Unset: no cost beyond a null check.
    std::shared_ptr<Metrics> metrics{};

    /// One span per operation (tracing.hpp), e.g. bridged to OpenTelemetry. Unset: no cost
    /// beyond a null check.
    std::shared_ptr<Tracer> tracer{};
};

}  // namespace folsom
