/// @file
/// Discovery: where a client's server list comes from when it is not fixed.
///
/// A Discovery answers "which servers are there now?"; the client asks at start and every
/// Options::discovery_interval, and follows the answer (see Options::discovery). Two are
/// provided: a static list that the program can change (useful for its own service registry,
/// and for tests), and DNS SRV records resolved with c-ares.
///
/// Ownership: the client holds its Discovery through a std::shared_ptr; resolve() hands the
/// servers to its handler by value, so the list the handler receives is the handler's own.
///
/// Thread-safety: StaticDiscovery::set() may be called from any thread while resolutions run;
/// a resolve()'s Cancel may be called from any thread.
///
/// Errors: a failed resolution completes its handler with a std::error_code in the folsom
/// category (e.g. errc::resolve_failed, errc::invalid_argument for bad name servers,
/// errc::cancelled after Cancel), and the client keeps its current server set.
#pragma once

#include "folsom/server_address.hpp"

#include <asio/any_io_executor.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
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

}  // namespace folsom::cluster
