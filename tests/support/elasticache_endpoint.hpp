// ElastiCacheEndpoint: a stand-in for an AWS ElastiCache configuration endpoint on a loopback
// port. memcached itself has no `config get cluster`, so this small server answers it (and the
// legacy `get AmazonElastiCache:cluster`) with whatever node list the test sets, pointing at
// real memcached processes; or with bytes the test chooses (malformed replies), or not at all.
#pragma once

#include "folsom/server_address.hpp"

#include "support/fake_server.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace folsom::test {

class ElastiCacheEndpoint {
  public:
    /// Starts listening; answers every command with ERROR until told what to serve.
    ElastiCacheEndpoint();

    std::uint16_t port() const noexcept { return server_.port(); }
    /// "127.0.0.1:<port>"
    std::string address() const { return server_.address(); }

    /// The well-formed reply for `nodes` ("host|ip|port" each, as written) at `version`; with
    /// `legacy`, as the answer to `get AmazonElastiCache:cluster`.
    static std::string reply(std::uint64_t version, const std::vector<std::string>& nodes,
                             bool legacy = false);
    /// "name|127.0.0.1|port" for each server (a made-up name, the loopback ip).
    static std::vector<std::string> entries(const std::vector<ServerAddress>& servers);

    /// Answers `config get cluster` with `nodes` at `version` (and, with `legacy`, only the
    /// legacy get, as engines before 1.4.14: `config get` then gets ERROR).
    void serve(std::uint64_t version, const std::vector<std::string>& nodes, bool legacy = false);
    /// Answers either command with exactly `bytes` (then waits for the client to close).
    void serve_raw(std::string bytes);
    /// Reads requests and never answers (the client's timeout must end the exchange).
    void go_silent();

    /// Configuration requests received so far.
    std::size_t requests() const noexcept { return requests_.load(); }

  private:
    void session(FakeConnection& c);

    std::mutex mu_;
    std::string reply_ = "ERROR\r\n";
    bool legacy_ = false;
    bool raw_ = true;
    bool silent_ = false;
    std::atomic<std::size_t> requests_{0};
    FakeServer server_;  // last: its threads use the members above, and stop first
};

}  // namespace folsom::test
