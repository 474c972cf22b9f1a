// libmemcached's configuration strings: memcached("--SERVER=... --BINARY-PROTOCOL", n) and
// libmemcached_check_configuration(), with the options of libmemcached_configuration(3).
#include "folsom/cluster/discovery.hpp"

#include "handle.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>

using namespace folsom::compat;

namespace {

std::string upper(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

/// Splits on white space; a double-quoted stretch stays one word (its quotes removed).
std::vector<std::string> words(std::string_view text) {
    std::vector<std::string> out;
    std::string cur;
    bool in_quotes = false, any = false;
    for (const char c : text) {
        if (c == '"') {
            in_quotes = !in_quotes;
            any = true;
        } else if (!in_quotes && std::isspace(static_cast<unsigned char>(c))) {
            if (any) out.push_back(cur);
            cur.clear();
            any = false;
        } else {
            cur.push_back(c);
            any = true;
        }
    }
    if (any) out.push_back(cur);
    return out;
}

bool to_number(std::string_view v, std::uint64_t& out) {
    if (v.empty()) return false;
    for (const char c : v)
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    out = std::strtoull(std::string(v).c_str(), nullptr, 10);
    return true;
}

bool to_hash(std::string_view name, memcached_hash_t& out) {
    static const std::pair<const char*, memcached_hash_t> names[] = {
        {"MD5", MEMCACHED_HASH_MD5},         {"CRC", MEMCACHED_HASH_CRC},
        {"FNV1_64", MEMCACHED_HASH_FNV1_64}, {"FNV1A_64", MEMCACHED_HASH_FNV1A_64},
        {"FNV1_32", MEMCACHED_HASH_FNV1_32}, {"FNV1A_32", MEMCACHED_HASH_FNV1A_32},
        {"HSIEH", MEMCACHED_HASH_HSIEH},     {"MURMUR", MEMCACHED_HASH_MURMUR},
        {"MURMUR3", MEMCACHED_HASH_MURMUR3}, {"JENKINS", MEMCACHED_HASH_JENKINS},
    };
    const std::string u = upper(name);
    for (const auto& [n, h] : names)
        if (u == n) {
            out = h;
            return true;
        }
    return false;
}

/// "host[:port][/?weight]" or "[v6]:port..." (a socket: "path[/?weight]").
bool split_server(std::string_view v, bool socket, std::string& host, std::uint16_t& port,
                  std::uint32_t& weight) {
    port = socket ? 0 : MEMCACHED_DEFAULT_PORT;
    weight = 0;
    const std::size_t w = v.find("/?");
    if (w != std::string_view::npos) {
        std::uint64_t n;
        if (!to_number(v.substr(w + 2), n)) return false;
        weight = static_cast<std::uint32_t>(n);
        v = v.substr(0, w);
    }
    if (socket) {
        host.assign(v);
        return !host.empty();
    }
    std::string_view port_text;
    if (!v.empty() && v.front() == '[') {
        const std::size_t close = v.find(']');
        if (close == std::string_view::npos) return false;
        host.assign(v.substr(1, close - 1));
        v.remove_prefix(close + 1);
        if (!v.empty()) {
            if (v.front() != ':') return false;
            port_text = v.substr(1);
        }
    } else {
        const std::size_t colon = v.rfind(':');
        if (colon != std::string_view::npos && v.find(':') == colon) {
            host.assign(v.substr(0, colon));
            port_text = v.substr(colon + 1);
        } else {
            host.assign(v);
        }
    }
    if (!port_text.empty()) {
        std::uint64_t n;
        if (!to_number(port_text, n) || n == 0 || n > 65535) return false;
        port = static_cast<std::uint16_t>(n);
    }
    return !host.empty();
}

// libmemcached's words for a parse error: "(<memcached_st>) Error occured during parsing
// (<what>", the rest (the closing parenthesis included) being in `what`.
std::string parser_error(const memcached_st* memc, const std::string& what) {
    char prefix[48];
    std::snprintf(prefix, sizeof prefix, "(%p) ", static_cast<const void*>(memc));
    std::string text = prefix;
    text += "Error occured during parsing (";
    text += what;
    if (what.find("): last_token=") == std::string::npos) text += ")";
    return text;
}

bool readable(std::string_view path, const char* what, std::string& why) {
    if (path.empty()) {
        why = std::string(what) + " needs a file name";
        return false;
    }
    std::ifstream in{std::string(path)};
    if (!in) {
        why = std::string("cannot read ") + what + " " + std::string(path);
        return false;
    }
    return true;
}

/// folsom's own options (docs/libmemcached-dropin.md); false with `why` for bad input.
bool apply_folsom_option(Handle& h, const std::string& name, std::string_view value,
                         std::string& why) {
    FolsomSettings& f = h.folsom;
    const auto no_value = [&] {
        if (!value.empty()) why = name + " takes no value";
        return value.empty();
    };
    const auto tls = [&]() -> folsom::TlsOptions& {
        if (!f.tls) f.tls.emplace();
        return *f.tls;
    };
    if (name == "--TLS") {
        if (!no_value()) return false;
        tls();
    } else if (name == "--TLS-CA" || name == "--TLS-CERT" || name == "--TLS-KEY") {
        const char* what = name == "--TLS-CA"     ? "the CA file"
                           : name == "--TLS-CERT" ? "the client certificate"
                                                  : "the client key";
        if (!readable(value, what, why)) return false;
        (name == "--TLS-CA"     ? tls().ca_file
         : name == "--TLS-CERT" ? tls().cert_file
                                : tls().key_file) = value;
    } else if (name == "--TLS-SNI") {
        if (value.empty() || value.size() > 253) {
            why = "--TLS-SNI needs a host name (1..253 bytes)";
            return false;
        }
        tls().server_name = value;
    } else if (name == "--TLS-NO-VERIFY") {
        if (!no_value()) return false;
        tls().verify = false;
    } else if (name == "--META") {
        if (!no_value()) return false;
        f.meta = true;
    } else if (name == "--QUIET-WRITES") {
        if (!no_value()) return false;
        f.quiet_writes = true;
    } else if (name == "--ROUTE-FILE") {
        if (!readable(value, "the route file", why)) return false;
        try {
            f.routes = folsom::RouteConfig::load(std::string(value));
        } catch (const std::exception& e) {
            why = std::string("route file ") + std::string(value) + ": " + e.what();
            return false;
        }
        f.route_file = value;
    } else if (name == "--SRV") {
        if (value.empty()) {
            why = "--SRV needs a name (e.g. _memcache._tcp.example.org)";
            return false;
        }
        f.discovery_name = value;
        f.discovery.reset();
    } else if (name == "--SRV-NAMESERVERS" || name == "--ELASTICACHE") {
        if (value.empty()) {
            why = name + " needs a value";
            return false;
        }
        if (name == "--ELASTICACHE") {
            try {
                f.discovery = folsom::cluster::make_elasticache_discovery(std::string(value));
            } catch (const std::exception& e) {
                why = std::string("--ELASTICACHE ") + std::string(value) + ": " + e.what();
                return false;
            }
            f.discovery_name = value;
            return true;
        }
        f.srv_nameservers = value;
        f.discovery.reset();
    } else if (name == "--DISCOVERY-INTERVAL") {
        std::uint64_t ms;
        if (!to_number(value, ms) || ms == 0 || ms > 86400000) {
            why = "--DISCOVERY-INTERVAL needs milliseconds (1..86400000)";
            return false;
        }
        f.discovery_interval = std::chrono::milliseconds(ms);
    }
    // An SRV name (with its name servers, in either order) makes its discovery.
    if (!f.discovery && !f.discovery_name.empty() && f.discovery_name.rfind('_', 0) == 0) {
        folsom::cluster::DnsSrvOptions o;
        o.nameservers = f.srv_nameservers;
        try {
            f.discovery = folsom::cluster::make_dns_srv_discovery(f.discovery_name, o);
        } catch (const std::exception& e) {
            why = "--SRV " + f.discovery_name + ": " + e.what();
            return false;
        }
    }
    if (f.routes && f.discovery) {
        why = "a route file and discovery cannot both name the servers";
        return false;
    }
    return true;
}

}  // namespace

namespace folsom::compat {

bool apply_environment(memcached_st* memc) {
    const char* path = std::getenv("FOLSOM_LIBMEMCACHED_CONFIG");
    if (!path || !*path) return true;
    std::ifstream in{path};
    std::string message;
    if (!in) {
        message = "cannot read the file";
    } else {
        std::stringstream ss;
        ss << in.rdbuf();
        // '#' starts a comment to the end of its line.
        std::string text;
        std::istringstream lines(ss.str());
        for (std::string line; std::getline(lines, line);) {
            const std::size_t hash = line.find('#');
            text += line.substr(0, hash);
            text += '\n';
        }
        if (apply_configuration(memc, text, message, true) == MEMCACHED_SUCCESS) return true;
    }
    // No program checks memcached_create's handle for a reason: the message goes to stderr,
    // and the handle is refused (nothing is ever sent with a configuration that is wrong).
    std::fprintf(stderr, "libmemcached (folsom): FOLSOM_LIBMEMCACHED_CONFIG=%s: %s\n", path,
                 message.c_str());
    return false;
}

memcached_return_t apply_configuration(memcached_st* memc, std::string_view text,
                                       std::string& message, bool from_environment) {
    Handle& h = *handle_of(memc);
    const std::vector<std::string> all = words(text);
    for (const std::string& word : all) {
        const std::size_t eq = word.find('=');
        const std::string name = upper(std::string_view(word).substr(0, eq));
        const std::string_view value =
            eq == std::string::npos ? std::string_view{} : std::string_view(word).substr(eq + 1);
        const auto fail = [&](const std::string& why) {
            message = parser_error(memc, why + ", " + word);
            return MEMCACHED_PARSE_ERROR;
        };
        // libmemcached's parser (bison) reports a syntax error as the token it did not expect,
        // in these words; libmemcached-tools print them.
        const auto syntax_error = [&](const char* unexpected, const char* expecting,
                                      const char* token, int number) {
            std::string bison = std::string("syntax error, unexpected ") + unexpected;
            if (expecting) bison += std::string(", expecting ") + expecting;
            message = parser_error(
                memc, bison + "): last_token=" + token + "(" + std::to_string(number) + ")");
            return MEMCACHED_PARSE_ERROR;
        };
        const auto behavior = [&](memcached_behavior_t b, std::uint64_t data) {
            const memcached_return_t rc = memcached_behavior_set(memc, b, data);
            if (rc != MEMCACHED_SUCCESS) message = memcached_last_error_message(memc);
            return rc;
        };
        const auto numeric = [&](memcached_behavior_t b) {
            std::uint64_t n;
            if (!to_number(value, n)) return fail("a number is expected");
            return behavior(b, n);
        };
        memcached_return_t rc = MEMCACHED_SUCCESS;
        if (name == "--SERVER" || name == "--SOCKET") {
            std::string host;
            std::uint16_t port;
            std::uint32_t weight;
            const bool socket = name == "--SOCKET";
            // The file configures how every handle talks; which servers is the program's.
            if (from_environment)
                return fail("servers are the program's to name, not FOLSOM_LIBMEMCACHED_CONFIG's");
            if (value.empty() && &word == &all.back())
                return syntax_error("end of file", "IPADDRESS or HOSTNAME", "\"end of file\"", 0);
            if (!split_server(value, socket, host, port, weight)) return fail("malformed server");
            rc = add_server(h, host, port, weight,
                            socket ? MEMCACHED_CONNECTION_UNIX_SOCKET : MEMCACHED_CONNECTION_TCP,
                            WeightRule::when_consistent);
            if (rc != MEMCACHED_SUCCESS) message = h.last_message;
        } else if (name == "--VERIFY-KEY") {
            rc = behavior(MEMCACHED_BEHAVIOR_VERIFY_KEY, 1);
        } else if (name == "--REMOVE_FAILED_SERVERS" || name == "--REMOVE-FAILED-SERVERS") {
            rc = value.empty() ? behavior(MEMCACHED_BEHAVIOR_REMOVE_FAILED_SERVERS, 1)
                               : numeric(MEMCACHED_BEHAVIOR_REMOVE_FAILED_SERVERS);
        } else if (name == "--BINARY-PROTOCOL") {
            rc = behavior(MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);
        } else if (name == "--BUFFER-REQUESTS") {
            rc = behavior(MEMCACHED_BEHAVIOR_BUFFER_REQUESTS, 1);
        } else if (name == "--HASH-WITH-NAMESPACE" || name == "--HASH-WITH-PREFIX-KEY") {
            rc = behavior(MEMCACHED_BEHAVIOR_HASH_WITH_PREFIX_KEY, 1);
        } else if (name == "--NOREPLY") {
            rc = behavior(MEMCACHED_BEHAVIOR_NOREPLY, 1);
        } else if (name == "--RANDOMIZE-REPLICA-READ") {
            rc = behavior(MEMCACHED_BEHAVIOR_RANDOMIZE_REPLICA_READ, 1);
        } else if (name == "--SORT-HOSTS") {
            rc = behavior(MEMCACHED_BEHAVIOR_SORT_HOSTS, 1);
        } else if (name == "--SUPPORT-CAS") {
            rc = behavior(MEMCACHED_BEHAVIOR_SUPPORT_CAS, 1);
        } else if (name == "--USE-UDP") {
            rc = behavior(MEMCACHED_BEHAVIOR_USE_UDP, 1);
        } else if (name == "--TCP-NODELAY") {
            rc = behavior(MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
        } else if (name == "--TCP-KEEPALIVE") {
            rc = behavior(MEMCACHED_BEHAVIOR_TCP_KEEPALIVE, 1);
        } else if (name == "--TCP-KEEPIDLE") {
            rc = value.empty() ? behavior(MEMCACHED_BEHAVIOR_TCP_KEEPIDLE, 1)
                               : numeric(MEMCACHED_BEHAVIOR_TCP_KEEPIDLE);
        } else if (name == "--CONNECT-TIMEOUT") {
            rc = numeric(MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT);
        } else if (name == "--RETRY-TIMEOUT") {
            rc = numeric(MEMCACHED_BEHAVIOR_RETRY_TIMEOUT);
        } else if (name == "--SERVER-FAILURE-LIMIT") {
            rc = numeric(MEMCACHED_BEHAVIOR_SERVER_FAILURE_LIMIT);
        } else if (name == "--SND-TIMEOUT") {
            rc = numeric(MEMCACHED_BEHAVIOR_SND_TIMEOUT);
        } else if (name == "--RCV-TIMEOUT") {
            rc = numeric(MEMCACHED_BEHAVIOR_RCV_TIMEOUT);
        } else if (name == "--POLL-TIMEOUT") {
            rc = numeric(MEMCACHED_BEHAVIOR_POLL_TIMEOUT);
        } else if (name == "--SOCKET-RECV-SIZE") {
            rc = numeric(MEMCACHED_BEHAVIOR_SOCKET_RECV_SIZE);
        } else if (name == "--SOCKET-SEND-SIZE") {
            rc = numeric(MEMCACHED_BEHAVIOR_SOCKET_SEND_SIZE);
        } else if (name == "--IO-BYTES-WATERMARK") {
            rc = numeric(MEMCACHED_BEHAVIOR_IO_BYTES_WATERMARK);
        } else if (name == "--IO-KEY-PREFETCH") {
            rc = numeric(MEMCACHED_BEHAVIOR_IO_KEY_PREFETCH);
        } else if (name == "--IO-MSG-WATERMARK") {
            rc = numeric(MEMCACHED_BEHAVIOR_IO_MSG_WATERMARK);
        } else if (name == "--NUMBER-OF-REPLICAS") {
            rc = numeric(MEMCACHED_BEHAVIOR_NUMBER_OF_REPLICAS);
        } else if (name == "--POOL-MIN" || name == "--POOL-MAX") {
            std::uint64_t n;
            if (!to_number(value, n)) return fail("a number is expected");
            (name == "--POOL-MIN" ? memc->configure.initial_pool_size
                                  : memc->configure.max_pool_size) = static_cast<std::uint32_t>(n);
        } else if (name == "--NAMESPACE" || name == "--PREFIX-KEY") {
            const std::string prefix(value);
            rc = memcached_callback_set(memc, MEMCACHED_CALLBACK_PREFIX_KEY, prefix.c_str());
            if (rc != MEMCACHED_SUCCESS) message = h.last_message;
        } else if (name == "--HASH") {
            memcached_hash_t hash;
            if (!to_hash(value, hash)) return syntax_error("STRING", nullptr, "STRING", 325);
            rc = behavior(MEMCACHED_BEHAVIOR_HASH, hash);
        } else if (name == "--DISTRIBUTION") {
            const std::size_t comma = value.find(',');
            const std::string kind = upper(value.substr(0, comma));
            memcached_server_distribution_t d;
            if (kind == "CONSISTENT")
                d = MEMCACHED_DISTRIBUTION_CONSISTENT;
            else if (kind == "MODULA")
                d = MEMCACHED_DISTRIBUTION_MODULA;
            else if (kind == "RANDOM")
                d = MEMCACHED_DISTRIBUTION_RANDOM;
            else if (kind == "VBUCKET")
                d = MEMCACHED_DISTRIBUTION_VIRTUAL_BUCKET;
            else
                return syntax_error("STRING", "CONSISTENT or MODULA or RANDOM", "STRING", 325);
            rc = behavior(MEMCACHED_BEHAVIOR_DISTRIBUTION, d);
            if (rc == MEMCACHED_SUCCESS && comma != std::string_view::npos) {
                memcached_hash_t hash;
                if (!to_hash(value.substr(comma + 1), hash)) return fail("unknown hash");
                rc = memcached_behavior_set_distribution_hash(memc, hash);
                if (rc != MEMCACHED_SUCCESS) message = h.last_message;
            }
        } else if (name == "--CONFIGURE-FILE") {
            std::ifstream in{std::string(value)};
            if (!in) return fail("cannot read the configuration file");
            std::stringstream ss;
            ss << in.rdbuf();
            rc = apply_configuration(memc, ss.str(), message, from_environment);
        } else if (name.rfind("--TLS", 0) == 0 || name == "--META" || name == "--QUIET-WRITES" ||
                   name == "--ROUTE-FILE" || name == "--SRV" || name == "--SRV-NAMESERVERS" ||
                   name == "--ELASTICACHE" || name == "--DISCOVERY-INTERVAL") {
            std::string why;
            if (!apply_folsom_option(h, name, value, why)) return fail(why);
            h.disconnect();  // the next request connects as configured
        } else if (name == "INCLUDE" || name == "RESET" || name == "END" || name == "ERROR") {
            return fail("statement not supported by folsom's libmemcached drop-in");
        } else if (name.rfind("--", 0) == 0) {
            return syntax_error("UNKNOWN_OPTION", nullptr, "UNKNOWN_OPTION", 270);
        } else {
            return syntax_error("STRING", nullptr, "STRING", 325);
        }
        if (rc != MEMCACHED_SUCCESS)
            return rc == MEMCACHED_NOT_SUPPORTED ? rc : MEMCACHED_PARSE_ERROR;
    }
    return MEMCACHED_SUCCESS;
}

}  // namespace folsom::compat

memcached_st* memcached(const char* string, size_t string_length) {
    memcached_st* memc = memcached_create(nullptr);
    if (!memc || !string || string_length == 0) return memc;
    std::string message;
    if (apply_configuration(memc, std::string_view(string, string_length), message) !=
        MEMCACHED_SUCCESS) {
        memcached_free(memc);
        return nullptr;
    }
    return memc;
}

memcached_return_t libmemcached_check_configuration(const char* option_string, size_t length,
                                                    char* error_buffer, size_t error_buffer_size) {
    memcached_st memc;
    if (!memcached_create(&memc)) return MEMCACHED_MEMORY_ALLOCATION_FAILURE;
    std::string message;
    // Nothing to read is refused, as libmemcached does.
    const memcached_return_t rc =
        option_string && length
            ? apply_configuration(&memc, std::string_view(option_string, length), message)
            : MEMCACHED_INVALID_ARGUMENTS;
    if (rc != MEMCACHED_SUCCESS && error_buffer && error_buffer_size)
        std::snprintf(error_buffer, error_buffer_size, "%s", message.c_str());
    memcached_free(&memc);
    return rc;
}
