#include "global_options.hpp"

#include "folsom/cluster/discovery.hpp"
#include "folsom/error.hpp"
#include "folsom/server_address.hpp"

#include "cli_error.hpp"

#include <CLI/CLI.hpp>
#include <asio/io_context.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace folsom::cli {
namespace {

/// Refuses a --tls-* file that cannot be opened, naming the option: clearer than OpenSSL's
/// own message, which comes later and without the option's name.
void check_readable(const char* option, const std::string& path) {
    if (path.empty()) return;
    std::ifstream f(path, std::ios::binary);
    if (!f)
        throw CliError(fmt::format("{} {}: cannot read the file: {}", option, printable(path, 200),
                                   std::strerror(errno)));
}

}  // namespace

void GlobalOptions::add_to(CLI::App& app) {
    CLI::Option* servers_opt =
        app.add_option("--servers", servers,
                       "Comma-separated list of HOST:PORT[:WEIGHT] and Unix socket paths "
                       "(/PATH[/?WEIGHT], memcached -s) (default: $MEMCACHED_SERVERS, then "
                       "127.0.0.1:11211)")
            ->type_name("SERVER[,...]");
    CLI::Option* elasticache_opt =
        app.add_option("--elasticache", elasticache,
                       "Use the nodes an AWS ElastiCache configuration endpoint lists "
                       "(`config get cluster`) instead of --servers")
            ->type_name("HOST:PORT")
            ->excludes(servers_opt);
    config_option_ =
        app.add_option("--config", config,
                       "Route requests as the mcrouter-style JSON route configuration in FILE says "
                       "(pools of servers and a route tree over them: replication, failover, "
                       "warm-up, shadowing, selection by key prefix or operation) instead of "
                       "--servers; $MEMCACHED_SERVERS is then ignored")
            ->type_name("FILE")
            ->excludes(servers_opt)
            ->excludes(elasticache_opt);
    protocol_option_ =
        app.add_option("--protocol", protocol_name,
                       "Wire protocol: ascii, binary or meta (default ascii; binary with "
                       "--username)")
            ->check(CLI::IsMember({"ascii", "binary", "meta"}))
            ->default_str("ascii");
    app.add_option("--distribution", distribution_name,
                   "How keys are placed on the servers, to keep the cache of the client you "
                   "move from: ketama (libmemcached's weighted ketama, the default), "
                   "libmemcached_modula[:HASH], libmemcached_consistent[:HASH], "
                   "ketama_libmemcached:HASH, ketama_spymemcached, folsom_murmur, mcrouter_ch3, "
                   "pymemcache_rendezvous[_bytes], gomemcache, dalli, cache_memcached, "
                   "cache_memcached_fast, pecl_memcache_consistent[:fnv], "
                   "pecl_memcache_standard[:fnv] (docs/placement.md)")
        ->type_name("NAME");
    app.add_option("--timeout-ms", timeout_ms,
                   "Connect and request timeout in milliseconds (default 3000)")
        ->check(CLI::Range(1, 3'600'000));
    app.add_option("--username", username,
                   "Log in as USER; the password is read from $MEMCACHED_PASSWORD, never from "
                   "the command line. SASL PLAIN over binary (memcached -S; the protocol "
                   "when --protocol is not given), text authentication over ascii or meta "
                   "(memcached -Y)")
        ->type_name("USER");
    app.add_flag("--binary-keys", binary_keys,
                 "Keys of any bytes (NUL, space, newline, 0x80-0xff; 1 to 186 of them), sent in "
                 "base64 over the meta protocol (the protocol when --protocol is not given). "
                 "Write a byte as \\xHH and a backslash as \\\\, e.g. 'user\\x00id'");
    app.add_flag("--tls", tls,
                 "Connect with TLS (memcached -Z), verifying the server's "
                 "certificate and name");
    app.add_option("--tls-ca", tls_ca,
                   "PEM CA certificates to verify the server with (default: the system's "
                   "trust store); implies --tls")
        ->type_name("FILE");
    app.add_option("--tls-cert", tls_cert,
                   "PEM client certificate, for servers that verify clients; implies --tls")
        ->type_name("FILE");
    app.add_option("--tls-key", tls_key,
                   "PEM private key of --tls-cert (default: read from the --tls-cert file); "
                   "implies --tls")
        ->type_name("FILE");
    app.add_option("--tls-server-name", tls_server_name,
                   "Name sent as SNI and checked against the server's certificate (default: "
                   "the host as written in --servers); implies --tls")
        ->type_name("NAME");
}

void GlobalOptions::finish() {
    if (!tls_ca.empty() || !tls_cert.empty() || !tls_key.empty() || !tls_server_name.empty())
        tls = true;
    if (!tls_key.empty() && tls_cert.empty())
        throw CliError("--tls-key needs --tls-cert (the certificate the key belongs to)");
    if (binary_keys) {
        if (!protocol_given())
            protocol_name = "meta";
        else if (protocol_name != "meta")
            throw CliError("--binary-keys needs --protocol meta (" + protocol_name +
                           " cannot carry keys of any bytes)");
    }
    if (!username.empty() && !protocol_given() && !binary_keys) protocol_name = "binary";
    if (!distribution_name.empty()) {
        std::string why;
        const auto parsed = cluster::parse_distribution(distribution_name, &why);
        if (!parsed) throw CliError("--distribution: " + printable(why, 2000));
        distribution = *parsed;
    }
    if (config_option_ != nullptr && config_option_->count() > 0) {
        try {
            routes = RouteConfig::load(config);
        } catch (const RouteConfigError& e) {
            throw CliError(e.message());  // "<json path>: <why>", one line
        }
    }
}

bool GlobalOptions::protocol_given() const {
    return protocol_option_ != nullptr && protocol_option_->count() > 0;
}

std::string unescape_key(std::string_view text) {
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\\') {
            out += text[i];
            continue;
        }
        if (i + 1 < text.size() && text[i + 1] == '\\') {
            out += '\\';
            ++i;
            continue;
        }
        if (i + 3 < text.size() && text[i + 1] == 'x' && hex(text[i + 2]) >= 0 &&
            hex(text[i + 3]) >= 0) {
            out += static_cast<char>(hex(text[i + 2]) * 16 + hex(text[i + 3]));
            i += 3;
            continue;
        }
        throw CliError("bad escape in key \"" + printable(text, 200) +
                       "\": with --binary-keys write a byte as \\xHH and a backslash as \\\\");
    }
    return out;
}

bool GlobalOptions::servers_named() const {
    const char* env = std::getenv("MEMCACHED_SERVERS");
    return routed() || !servers.empty() || !elasticache.empty() || (env != nullptr && *env != '\0');
}

std::vector<std::string> GlobalOptions::server_list() const {
    if (servers.empty() && !elasticache.empty()) return discover_elasticache();
    std::string text = servers;
    std::string from = "--servers";
    if (text.empty()) {
        const char* env = std::getenv("MEMCACHED_SERVERS");
        if (env != nullptr && *env != '\0') {
            text = env;
            from = "$MEMCACHED_SERVERS";
        }
    }
    if (text.empty()) return {"127.0.0.1:11211"};
    std::vector<ServerAddress> parsed;
    std::string why;
    if (parse_server_list(text, parsed, &why))
        throw CliError("bad " + from + ": " + printable(why, 400));
    // Keep each entry as written (trimmed): ketama hashes the text the user gave.
    std::vector<std::string> list;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find(',', start);
        if (end == std::string::npos) end = text.size();
        std::string entry = text.substr(start, end - start);
        const auto b = entry.find_first_not_of(" \t");
        const auto e = entry.find_last_not_of(" \t");
        list.push_back(entry.substr(b, e - b + 1));
        start = end + 1;
    }
    return list;
}

std::vector<std::string> GlobalOptions::discover_elasticache() const {
    std::shared_ptr<cluster::ElastiCacheDiscovery> discovery;
    try {
        discovery = cluster::make_elasticache_discovery(
            elasticache, {.timeout = std::chrono::milliseconds(timeout_ms)});
    } catch (const std::system_error&) {
        throw CliError("bad --elasticache '" + printable(elasticache) + "': expected HOST:PORT");
    }
    // One resolution, as the library's discovery does it, on a private io_context.
    asio::io_context io;
    std::error_code error = make_error_code(errc::timeout);
    std::vector<ServerAddress> nodes;
    // With --tls the endpoint is spoken to over TLS too, as the servers will be.
    discovery->resolve_for_client(io.get_executor(), tls_options(),
                                  [&](std::error_code ec, std::vector<ServerAddress> s) {
                                      error = ec;
                                      nodes = std::move(s);
                                  });
    io.run();  // bounded: the discovery's own deadline is --timeout-ms
    if (error) {
        ErrorContext ctx;
        ctx.server = elasticache;
        ctx.timeout_ms = timeout_ms;
        const std::string why = error == errc::resolve_failed
                                    ? "no node listed, or the name does not resolve"
                                    : describe(error, ctx);
        throw CliError("cannot discover the servers from the ElastiCache endpoint " +
                       printable(elasticache) + ": " + why);
    }
    std::vector<std::string> list;
    for (const auto& n : nodes)
        list.push_back(n.to_string());
    return list;
}

Options GlobalOptions::options(std::vector<std::string> server_list) const {
    Options o;
    o.servers = std::move(server_list);
    o.routes = routes;  // when set, the pools name the servers
    o.protocol = protocol_name == "binary" ? Protocol::binary
                 : protocol_name == "meta" ? Protocol::meta
                                           : Protocol::ascii;
    o.connect_timeout = std::chrono::milliseconds(timeout_ms);
    o.request_timeout = std::chrono::milliseconds(timeout_ms);
    o.distribution = distribution;
    o.binary_keys = binary_keys;
    if (!username.empty()) {
        const char* password = std::getenv(password_variable);
        if (password == nullptr || *password == '\0')
            throw CliError(
                fmt::format("--username {} needs the password in ${} (it is unset or "
                            "empty; the password is never taken from the command line)",
                            printable(username), password_variable));
        // SASL PLAIN over binary, the text login over ascii and meta (Options::username).
        o.username = username;
        o.password = password;
    }
    o.tls = tls_options();
    return o;
}

std::optional<TlsOptions> GlobalOptions::tls_options() const {
    if (!tls) return std::nullopt;
    check_readable("--tls-ca", tls_ca);
    check_readable("--tls-cert", tls_cert);
    check_readable("--tls-key", tls_key);
    TlsOptions t;
    t.ca_file = tls_ca;
    t.cert_file = tls_cert;
    t.key_file = tls_key;
    t.server_name = tls_server_name;
    return t;
}

}  // namespace folsom::cli
