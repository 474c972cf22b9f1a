// GlobalOptions: what every `folsom` command shares — which servers, which protocol, how long
// to wait — and how they become folsom::Options.
#pragma once

#include "folsom/options.hpp"

#include <CLI/App.hpp>

#include <string>
#include <vector>

namespace folsom::cli {

struct GlobalOptions {
    std::string servers;      ///< --servers as given (empty when not given)
    std::string elasticache;  ///< --elasticache as given (empty when not given)
    std::string protocol_name = "ascii";
    int timeout_ms = 3000;

    /// Adds --servers, --elasticache, --protocol and --timeout-ms to `app`.
    void add_to(CLI::App& app);

    /// True when the user named the servers (--servers, --elasticache or $MEMCACHED_SERVERS).
    bool servers_named() const;
    /// The server list: --servers, else the nodes the --elasticache configuration endpoint
    /// lists now (asked once), else $MEMCACHED_SERVERS, else 127.0.0.1:11211.
    /// Throws CliError for a malformed list or a failed discovery.
    std::vector<std::string> server_list() const;

    /// The nodes --elasticache lists now (one `config get cluster`, within --timeout-ms).
    /// Throws CliError when the endpoint cannot be asked or answers badly.
    std::vector<std::string> discover_elasticache() const;

    /// folsom::Options for `servers`, with the protocol and both timeouts set.
    Options options(std::vector<std::string> server_list) const;
};

}  // namespace folsom::cli
