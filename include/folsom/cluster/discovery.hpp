/// @file
/// Discovery: where a client's server list comes from when it is not fixed.
///
/// A Discovery answers "which servers are there now?"; the client asks at start and every
/// Options::discovery_interval, and follows the answer (see Options::discovery). Three are
/// provided: a static list that the program can change (useful for its own service registry,
/// and for tests), DNS SRV records resolved with c-ares, and the configuration endpoint of an
/// AWS ElastiCache (memcached) cluster (Folsom's folsom-elasticache module).
///
/// Ownership: the client holds its Discovery through a std::shared_ptr; resolve() hands the
/// servers to its handler by value, so the list the handler receives is the handler's own.
///
/// Thread-safety: StaticDiscovery::set() may be called from any thread while resolutions run;
/// a resolve()'s Cancel may be called from any thread.
///
/// Errors: a failed resolution completes its handler with a std::error_code in the folsom
/// category (e.g. errc::resolve_failed, errc::invalid_argument for bad name servers,
/// errc::protocol_error for a malformed ElastiCache configuration, errc::timeout,
/// errc::cancelled after Cancel), and the client keeps its current server set.
#pragma once

#include "folsom/options.hpp"
#include "folsom/server_address.hpp"

#include <asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace folsom::cluster {

/// The source of a client's server list: asked once per resolution, it answers with the
/// servers there are now (or an error). Implement it to plug in another service registry.
class Discovery {
  public:
    /// Called exactly once per resolve(), through the executor given to it: the servers, or
    /// an error (then the list is ignored and the client keeps its current set).
    using Handler = std::function<void(std::error_code, std::vector<ServerAddress>)>;
    /// Makes an unfinished resolve() complete promptly (with errc::cancelled). Thread-safe;
    /// harmless after completion.
    using Cancel = std::function<void()>;

    /// Destroys the discovery.
    virtual ~Discovery() = default;
    /// Starts one resolution, doing any I/O on `ex`.
    virtual Cancel resolve(asio::any_io_executor ex, Handler handler) = 0;
    /// As resolve(), for a client whose connections use `client_tls` (its Options::tls;
    /// nullopt: plain TCP). The client calls this one. A discovery that connects to the
    /// cluster itself (ElastiCache's configuration endpoint) speaks TLS when the client does,
    /// with the same settings; the default ignores `client_tls`.
    virtual Cancel resolve_for_client(asio::any_io_executor ex,
                                      const std::optional<TlsOptions>& client_tls,
                                      Handler handler) {
        (void)client_tls;
        return resolve(std::move(ex), std::move(handler));
    }
};

/// A list held in memory; set() changes what the next resolution answers. Thread-safe.
class StaticDiscovery final : public Discovery {
  public:
    /// Starts with `servers` (none by default).
    explicit StaticDiscovery(std::vector<ServerAddress> servers = {})
        : servers_(std::move(servers)) {}
    /// Replaces the list; resolutions started afterwards answer with it. Thread-safe.
    void set(std::vector<ServerAddress> servers);
    /// Posts the current list to `handler` on `ex` (never an error); the returned Cancel does
    /// nothing.
    Cancel resolve(asio::any_io_executor ex, Handler handler) override;

  private:
    std::mutex mu_;
    std::vector<ServerAddress> servers_;
};

/// DNS SRV discovery (RFC 2782), e.g. "_memcache._tcp.example.org": every target of the
/// lowest priority present becomes a server "target:port" with the record's weight as its
/// ketama weight (0 counts as 1). Targets are used as written (not resolved here): ketama
/// hashes the name, as other clients given the same names do, and connections resolve it.
/// Servers are sorted by (host, port), so the ring does not depend on the answer's order.
struct DnsSrvOptions {
    /// Name servers as c-ares takes them ("127.0.0.1:5353,[::1]:53"); empty: the system's
    /// (/etc/resolv.conf).
    std::string nameservers;
    std::chrono::milliseconds timeout{2000};  ///< per try
    int tries = 2;  ///< attempts per name server before giving up (at least 1 is made)
};
/// A Discovery that resolves the SRV records of `name` (e.g. "_memcache._tcp.example.org") as
/// DnsSrvOptions describes. A resolution that fails, or finds no record, completes with
/// errc::resolve_failed; name servers c-ares cannot parse, with errc::invalid_argument.
std::shared_ptr<Discovery> make_dns_srv_discovery(std::string name, DnsSrvOptions options = {});

/// How an ElastiCache configuration endpoint is asked (see make_elasticache_discovery).
struct ElastiCacheOptions {
    /// The whole exchange — name lookup, connect, request and reply — must finish within this,
    /// or the resolution fails with errc::timeout.
    std::chrono::milliseconds timeout{2000};
    /// Largest configuration accepted (the byte count of the reply's data block). A reply that
    /// declares or sends more fails with errc::protocol_error before it is buffered, so a
    /// hostile endpoint cannot make the client allocate without bound. 1 MiB holds thousands
    /// of nodes.
    std::size_t max_reply_bytes = 1024 * 1024;
    /// Ask with `get AmazonElastiCache:cluster`, for engines older than memcached 1.4.14,
    /// instead of `config get cluster`.
    bool legacy_get = false;
    /// TLS to the endpoint (a cluster with in-transit encryption): these settings when set
    /// (server_name empty: the endpoint's host is checked). Unset: the client's Options::tls
    /// when the client has TLS (resolve_for_client), plain TCP otherwise. The handshake and
    /// the certificate check count in `timeout`; a failed one fails the resolution with
    /// errc::tls_error.
    std::optional<TlsOptions> tls = std::nullopt;
};

/// A Discovery that asks an AWS ElastiCache (memcached) configuration endpoint for the
/// cluster's nodes, as Folsom's folsom-elasticache module and AWS's cluster client do.
///
/// Each resolution opens a new TCP (or TLS: ElastiCacheOptions::tls) connection to the
/// endpoint, sends `config get cluster`
/// (or the legacy get), reads the reply
///
///     CONFIG cluster 0 57
///     12
///     cache-1.example|10.0.0.1|11211 cache-2.example||11211
///
///     END
///
/// (lines end with CR LF, except the version and node lines, which end with LF and are
/// counted by the header's byte count) and closes the connection. Every node becomes a server
/// "ip:port" (the hostname when the ip is empty), weight 1, in the order listed. The answer is
/// taken as it comes: a version lower than the last one seen is followed too (a cluster that was
/// re-created starts again at 1).
///
/// Errors (the client then keeps its current servers): errc::resolve_failed when the
/// endpoint's name does not resolve or the configuration lists no node; errc::connect_failed
/// when the endpoint refuses the connection; errc::tls_error when the TLS handshake or the
/// certificate check fails; errc::timeout when the exchange takes longer than
/// ElastiCacheOptions::timeout; errc::protocol_error for a malformed reply (bad header, a byte
/// count that does not match the data, a bad version or node entry, a bad port, no END, over
/// max_reply_bytes); errc::server_error for ERROR or SERVER_ERROR (e.g. a plain memcached,
/// which has no `config get cluster`), errc::client_error for CLIENT_ERROR;
/// errc::connection_lost when the endpoint closes before the reply is complete;
/// errc::cancelled after Cancel.
class ElastiCacheDiscovery : public Discovery {
  public:
    /// The version of the last configuration received (ElastiCache raises it on every change
    /// of the node list); empty until a resolution succeeded. Thread-safe.
    virtual std::optional<std::uint64_t> cluster_version() const noexcept = 0;
};

/// An ElastiCacheDiscovery of `config_endpoint` ("host" or "host:port", port 11211 by default;
/// an IPv6 literal in brackets), e.g.
///
///     options.discovery = folsom::cluster::make_elasticache_discovery(
///         "mycluster.abc123.cfg.use1.cache.amazonaws.com:11211");
///
/// Throws std::system_error(errc::invalid_argument) when `config_endpoint` is malformed.
std::shared_ptr<ElastiCacheDiscovery> make_elasticache_discovery(std::string config_endpoint,
                                                                 ElastiCacheOptions options = {});

}  // namespace folsom::cluster
