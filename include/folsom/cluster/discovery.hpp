// Discovery: where a client's server list comes from when it is not fixed.
//
// A Discovery answers "which servers are there now?"; the client asks at start and every
// Options::discovery_interval, and follows the answer (see Options::discovery). Two are
// provided: a static list that the program can change (useful for its own service registry,
// and for tests), and DNS SRV records resolved with c-ares.
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

class Discovery {
  public:
    /// Called exactly once per resolve(), through the executor given to it: the servers, or
    /// an error (then the list is ignored and the client keeps its current set).
    using Handler = std::function<void(std::error_code, std::vector<ServerAddress>)>;
    /// Makes an unfinished resolve() complete promptly (with errc::cancelled). Thread-safe;
    /// harmless after completion.
    using Cancel = std::function<void()>;

    virtual ~Discovery() = default;
    /// Starts one resolution, doing any I/O on `ex`.
    virtual Cancel resolve(asio::any_io_executor ex, Handler handler) = 0;
};

/// A list held in memory; set() changes what the next resolution answers. Thread-safe.
class StaticDiscovery final : public Discovery {
  public:
    explicit StaticDiscovery(std::vector<ServerAddress> servers = {})
        : servers_(std::move(servers)) {}
    void set(std::vector<ServerAddress> servers);
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
    int tries = 2;
};
std::shared_ptr<Discovery> make_dns_srv_discovery(std::string name, DnsSrvOptions options = {});

}  // namespace folsom::cluster
