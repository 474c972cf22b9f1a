#include "global_options.hpp"

#include "folsom/cluster/discovery.hpp"
#include "folsom/error.hpp"
#include "folsom/server_address.hpp"

#include "cli_error.hpp"

#include <CLI/CLI.hpp>
#include <asio/io_context.hpp>

#include <cstdlib>

namespace folsom::cli {

void GlobalOptions::add_to(CLI::App& app) {
    CLI::Option* servers_opt =
        app.add_option("--servers", servers,
                       "Comma-separated HOST:PORT list (default: $MEMCACHED_SERVERS, then "
                       "127.0.0.1:11211)")
            ->type_name("HOST:PORT[,...]");
    app.add_option("--elasticache", elasticache,
                   "Use the nodes an AWS ElastiCache configuration endpoint lists "
                   "(`config get cluster`) instead of --servers")
        ->type_name("HOST:PORT")
        ->excludes(servers_opt);
    app.add_option("--protocol", protocol_name, "Wire protocol: ascii, binary or meta")
        ->check(CLI::IsMember({"ascii", "binary", "meta"}))
        ->default_str("ascii");
    app.add_option("--timeout-ms", timeout_ms,
                   "Connect and request timeout in milliseconds (default 3000)")
        ->check(CLI::Range(1, 3'600'000));
}

bool GlobalOptions::servers_named() const {
    const char* env = std::getenv("MEMCACHED_SERVERS");
    return !servers.empty() || !elasticache.empty() || (env != nullptr && *env != '\0');
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
    if (parse_server_list(text, parsed))
        throw CliError("bad " + from + " '" + printable(text) +
                       "': expected HOST:PORT[,HOST:PORT...]");
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
    discovery->resolve(io.get_executor(), [&](std::error_code ec, std::vector<ServerAddress> s) {
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
    o.protocol = protocol_name == "binary" ? Protocol::binary
                 : protocol_name == "meta" ? Protocol::meta
                                           : Protocol::ascii;
    o.connect_timeout = std::chrono::milliseconds(timeout_ms);
    o.request_timeout = std::chrono::milliseconds(timeout_ms);
    return o;
}

}  // namespace folsom::cli
