#include "global_options.hpp"

#include "folsom/server_address.hpp"

#include "cli_error.hpp"

#include <CLI/CLI.hpp>

#include <cstdlib>

namespace folsom::cli {

void GlobalOptions::add_to(CLI::App& app) {
    app.add_option("--servers", servers,
                   "Comma-separated HOST:PORT list (default: $MEMCACHED_SERVERS, then "
                   "127.0.0.1:11211)")
        ->type_name("HOST:PORT[,...]");
    app.add_option("--protocol", protocol_name, "Wire protocol: ascii, binary or meta")
        ->check(CLI::IsMember({"ascii", "binary", "meta"}))
        ->default_str("ascii");
    app.add_option("--timeout-ms", timeout_ms,
                   "Connect and request timeout in milliseconds (default 3000)")
        ->check(CLI::Range(1, 3'600'000));
}

bool GlobalOptions::servers_named() const {
    const char* env = std::getenv("MEMCACHED_SERVERS");
    return !servers.empty() || (env != nullptr && *env != '\0');
}

std::vector<std::string> GlobalOptions::server_list() const {
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
