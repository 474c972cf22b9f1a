#include "folsom/server_address.hpp"

#include "folsom/error.hpp"

#include "base/decimal.hpp"

#include <sys/un.h>

static_assert(folsom::max_unix_socket_path == sizeof(sockaddr_un{}.sun_path) - 1);

namespace folsom {
namespace {

// A host may not hold anything that would split a list entry or confuse the port syntax.
// We do not validate names further: resolution will tell.
bool valid_host(std::string_view host, bool bracketed) {
    if (host.empty()) return false;
    for (char c : host) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7f || c == ',' || c == '[' || c == ']' || c == '/') return false;
        if (c == ':' && !bracketed) return false;
    }
    return true;
}

std::string_view trim_blanks(std::string_view s) {
    const auto blank = [](char c) { return c == ' ' || c == '\t'; };
    while (!s.empty() && blank(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && blank(s.back()))
        s.remove_suffix(1);
    return s;
}

std::string quoted(std::string_view text) {
    std::string s = "'";
    for (char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
            static constexpr char hex[] = "0123456789abcdef";
            s += "\\x";
            s += hex[u >> 4];
            s += hex[u & 15];
        } else {
            s += c;
        }
    }
    s += '\'';
    return s;
}

std::error_code refuse(std::string* why, std::string message) {
    if (why) *why = std::move(message);
    return errc::invalid_argument;
}

// "/path" or "/path/?weight" (libmemcached's socket weight suffix). The path is kept as
// written: it is the server's name on the ketama ring.
std::error_code parse_unix_socket(std::string_view text, ServerAddress& out, std::string* why) {
    std::string_view path = text;
    std::uint32_t weight = 1;
    if (const auto mark = text.rfind("/?"); mark != std::string_view::npos) {
        const auto digits = text.substr(mark + 2);
        if (!detail::parse_decimal(digits, weight) || weight == 0)
            return refuse(why, "bad weight in Unix socket server " + quoted(text) +
                                   ": expected /PATH/?WEIGHT with a WEIGHT of 1 or more");
        path = text.substr(0, mark);
    }
    if (path.size() < 2)
        return refuse(why, "bad Unix socket server " + quoted(text) + ": the path is empty");
    for (char c : path) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f || c == ',')
            return refuse(why, "bad Unix socket path " + quoted(path) +
                                   ": it holds a control character or a ','");
    }
    if (path.size() > max_unix_socket_path)
        return refuse(why, "Unix socket path " + quoted(path) +
                               " is too long: " + std::to_string(path.size()) +
                               " bytes, the limit is " + std::to_string(max_unix_socket_path));
    out = ServerAddress::unix_socket(std::string(path), weight);
    return {};
}

}  // namespace

std::string ServerAddress::to_string() const {
    if (is_unix_socket()) return host;
    std::string s;
    const bool v6 = host.find(':') != std::string::npos;
    s.reserve(host.size() + 8);
    if (v6) s += '[';
    s += host;
    if (v6) s += ']';
    s += ':';
    s += std::to_string(port);
    return s;
}

std::error_code parse_server_address(std::string_view text, ServerAddress& out, std::string* why) {
    if (!text.empty() && text.front() == '/') return parse_unix_socket(text, out, why);
    const auto bad = [&] {
        return refuse(why, "bad server address " + quoted(text) +
                               ": expected HOST[:PORT[:WEIGHT]], [IPV6][:PORT[:WEIGHT]] or "
                               "/SOCKET/PATH[/?WEIGHT]");
    };
    std::string_view host;
    std::string_view rest;  // what follows the host: empty, or ":port[:weight]"
    bool bracketed = false;
    if (!text.empty() && text.front() == '[') {
        const auto close = text.find(']');
        if (close == std::string_view::npos) return bad();
        host = text.substr(1, close - 1);
        rest = text.substr(close + 1);
        bracketed = true;
        // Brackets are for IPv6 literals; "[name]" would round-trip differently.
        if (host.find(':') == std::string_view::npos) return bad();
    } else {
        const auto colon = text.find(':');
        host = text.substr(0, colon);
        rest = colon == std::string_view::npos ? std::string_view{} : text.substr(colon);
    }
    if (!valid_host(host, bracketed)) return bad();

    ServerAddress parsed;
    parsed.host = std::string(host);
    if (!rest.empty()) {
        if (rest.front() != ':') return bad();
        rest.remove_prefix(1);
        const auto colon = rest.find(':');
        const auto port = rest.substr(0, colon);
        if (!detail::parse_decimal(port, parsed.port) || parsed.port == 0) {
            return bad();
        }
        if (colon != std::string_view::npos) {
            const auto weight = rest.substr(colon + 1);
            if (!detail::parse_decimal(weight, parsed.weight) || parsed.weight == 0) {
                return bad();
            }
        }
    }
    out = std::move(parsed);
    return {};
}

std::error_code parse_server_list(std::string_view text, std::vector<ServerAddress>& out,
                                  std::string* why) {
    std::vector<ServerAddress> parsed;
    while (true) {
        const auto comma = text.find(',');
        ServerAddress address;
        if (auto ec = parse_server_address(trim_blanks(text.substr(0, comma)), address, why))
            return ec;
        parsed.push_back(std::move(address));
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
    }
    out = std::move(parsed);
    return {};
}

}  // namespace folsom
