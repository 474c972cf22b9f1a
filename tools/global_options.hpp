// GlobalOptions: what every `folsom` command shares — which servers (or which route
// configuration), which protocol, how long to wait, who to log in as, whether to use TLS —
// and how they become folsom::Options.
#pragma once

#include "folsom/options.hpp"
#include "folsom/routes.hpp"

#include <CLI/App.hpp>

#include <optional>
#include <string>
#include <vector>

namespace folsom::cli {

/// A --binary-keys KEY as bytes: "\xHH" (two hex digits, either case) is the byte 0xHH and
/// "\\" a backslash; every other byte stands for itself. Any other backslash sequence is a
/// CliError (so that a key never means something other than what was typed). The escapes are
/// those `printable` writes, so a key in an error message can be pasted back.
std::string unescape_key(std::string_view text);

/// The environment variable the SASL password is read from (never from the command line,
/// where other users could read it in the process list).
inline constexpr const char* password_variable = "MEMCACHED_PASSWORD";

struct GlobalOptions {
    std::string servers;      ///< --servers as given (empty when not given)
    std::string elasticache;  ///< --elasticache as given (empty when not given)
    std::string config;       ///< --config as given (empty when not given)
    /// The route configuration read from --config by finish() (nothing without --config).
    std::optional<RouteConfig> routes;
    std::string protocol_name = "ascii";
    int timeout_ms = 3000;
    /// --distribution as given ("" when not given: Options' default, libmemcached's ketama),
    /// and what finish() read from it.
    std::string distribution_name;
    cluster::Distribution distribution = Options{}.distribution;

    std::string username;  ///< --username: SASL (binary) or text (ascii, meta) login; empty: none

    /// --binary-keys: keys of any bytes (Options::binary_keys, meta only), written on the
    /// command line with \xHH escapes (unescape_key).
    bool binary_keys = false;

    bool tls = false;             ///< --tls, or implied by any --tls-* option
    std::string tls_ca;           ///< --tls-ca
    std::string tls_cert;         ///< --tls-cert
    std::string tls_key;          ///< --tls-key
    std::string tls_server_name;  ///< --tls-server-name

    /// Adds --servers, --elasticache, --config, --protocol, --distribution, --timeout-ms,
    /// --username and the --tls options to `app`.
    void add_to(CLI::App& app);

    /// Settles what the options imply once they are parsed: --username selects the binary
    /// protocol when --protocol was not given (ascii and meta log in with text auth),
    /// --binary-keys selects meta (and refuses another --protocol), any
    /// --tls-* turns on --tls, --config is read into `routes`, --distribution is read (an
    /// unknown name is a CliError listing the names). Throws CliError for a
    /// contradiction or a configuration that cannot be used (its message is the
    /// RouteConfigError's one line: "<json path>: <why>").
    void finish();

    /// True when the user named the servers (--servers, --elasticache, --config or
    /// $MEMCACHED_SERVERS).
    bool servers_named() const;
    /// True with --config: the servers are the route configuration's pools.
    bool routed() const { return routes.has_value(); }
    /// The server list (not used with --config): --servers, else the nodes the --elasticache
    /// configuration endpoint lists now (asked once), else $MEMCACHED_SERVERS, else
    /// 127.0.0.1:11211. Throws CliError for a malformed list or a failed discovery.
    std::vector<std::string> server_list() const;

    /// True when connections log in (--username) or use TLS (--tls, --tls-*).
    bool secured() const { return !username.empty() || tls; }

    /// The nodes --elasticache lists now (one `config get cluster`, within --timeout-ms).
    /// Throws CliError when the endpoint cannot be asked or answers badly.
    std::vector<std::string> discover_elasticache() const;
    /// The --tls* options as TlsOptions (nullopt without --tls); refuses unreadable files.
    std::optional<TlsOptions> tls_options() const;

    /// folsom::Options for `servers`, with the protocol, both timeouts, SASL and TLS set, and
    /// with --config the routes (which then name the servers: `server_list` is not used).
    /// Throws CliError when --username has no password in $MEMCACHED_PASSWORD, or a --tls-*
    /// file cannot be read.
    Options options(std::vector<std::string> server_list) const;
    /// options() for the servers the user named: the --config routes, else server_list().
    Options options() const {
        return options(routed() ? std::vector<std::string>{} : server_list());
    }

  private:
    bool protocol_given() const;
    const CLI::Option* protocol_option_ = nullptr;  // to tell "--protocol ascii" from the default
    const CLI::Option* config_option_ = nullptr;    // to tell "--config ''" from no --config
};

}  // namespace folsom::cli
