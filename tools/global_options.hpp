// GlobalOptions: what every `folsom` command shares — which servers, which protocol, how long
// to wait, who to log in as, whether to use TLS — and how they become folsom::Options.
#pragma once

#include "folsom/options.hpp"

#include <CLI/App.hpp>

#include <string>
#include <vector>

namespace folsom::cli {

/// The environment variable the SASL password is read from (never from the command line,
/// where other users could read it in the process list).
inline constexpr const char* password_variable = "MEMCACHED_PASSWORD";

struct GlobalOptions {
    std::string servers;      ///< --servers as given (empty when not given)
    std::string elasticache;  ///< --elasticache as given (empty when not given)
    std::string protocol_name = "ascii";
    int timeout_ms = 3000;

    std::string username;  ///< --username: SASL PLAIN login (empty: none)

    bool tls = false;             ///< --tls, or implied by any --tls-* option
    std::string tls_ca;           ///< --tls-ca
    std::string tls_cert;         ///< --tls-cert
    std::string tls_key;          ///< --tls-key
    std::string tls_server_name;  ///< --tls-server-name

    /// Adds --servers, --elasticache, --protocol, --timeout-ms, --username and the --tls
    /// options to `app`.
    void add_to(CLI::App& app);

    /// Settles what the options imply once they are parsed: --username selects the binary
    /// protocol when --protocol was not given (and refuses an explicit ascii or meta), any
    /// --tls-* turns on --tls. Throws CliError for a contradiction.
    void finish();

    /// True when the user named the servers (--servers, --elasticache or $MEMCACHED_SERVERS).
    bool servers_named() const;
    /// The server list: --servers, else the nodes the --elasticache configuration endpoint
    /// lists now (asked once), else $MEMCACHED_SERVERS, else 127.0.0.1:11211.
    /// Throws CliError for a malformed list or a failed discovery.
    std::vector<std::string> server_list() const;

    /// True when connections log in (--username) or use TLS (--tls, --tls-*).
    bool secured() const { return !username.empty() || tls; }

    /// The nodes --elasticache lists now (one `config get cluster`, within --timeout-ms).
    /// Throws CliError when the endpoint cannot be asked or answers badly.
    std::vector<std::string> discover_elasticache() const;

    /// folsom::Options for `servers`, with the protocol, both timeouts, SASL and TLS set.
    /// Throws CliError when --username has no password in $MEMCACHED_PASSWORD, conflicts with
    /// an explicit --protocol, or a --tls-* file cannot be read.
    Options options(std::vector<std::string> server_list) const;

  private:
    const CLI::Option* protocol_option_ = nullptr;  // to tell "--protocol ascii" from the default
};

}  // namespace folsom::cli
