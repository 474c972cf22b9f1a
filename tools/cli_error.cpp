#include "cli_error.hpp"

#include "folsom/error.hpp"
#include "folsom/routes.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace folsom::cli {

std::string printable(std::string_view text, std::size_t max) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (out.size() >= max) {
            out += "...";
            break;
        }
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c >= 0x7f || c == '\\' || c == '"')
            out += fmt::format("\\x{:02x}", c);
        else
            out += static_cast<char>(c);
    }
    return out;
}

namespace {

/// Why a Unix socket server is unreachable, found by trying it once more (a local connect
/// answers at once): ": <reason>", or "" when it now accepts.
std::string unix_socket_problem(const std::string& path) {
    sockaddr_un addr{};
    if (path.size() >= sizeof addr.sun_path) return ": the path is too long";
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.data(), path.size());
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return "";
    const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    const int e = errno;
    ::close(fd);
    if (rc == 0) return "";
    switch (e) {
        case ENOENT:
            return ": no such socket file (is memcached running with -s " + printable(path, 200) +
                   "?)";
        case ECONNREFUSED: {
            struct stat st {};
            if (::stat(path.c_str(), &st) == 0 && !S_ISSOCK(st.st_mode))
                return ": it is not a socket";
            return ": nothing listens on the socket (connection refused)";
        }
        case EACCES:
            return ": permission denied (check the socket's mode, memcached -a)";
        default:
            return std::string(": ") + std::strerror(e);
    }
}

}  // namespace

std::string describe(std::error_code ec, const ErrorContext& ctx) {
    const std::string server(ctx.server);
    auto at = [&](std::string_view what) {
        return server.empty() ? std::string(what) : fmt::format("{}: {}", server, what);
    };
    if (ec.category() != folsom::category()) return at(ec.message());
    switch (static_cast<errc>(ec.value())) {
        case errc::invalid_key:
            if (ctx.binary_keys)
                return fmt::format(
                    "invalid key \"{}\": with --binary-keys a key is 1 to 186 bytes ({} given)",
                    printable(ctx.key), ctx.key.size());
            return fmt::format(
                "invalid key \"{}\": a key is 1 to 250 bytes, without spaces or control "
                "characters",
                printable(ctx.key));
        case errc::value_too_large:
            return fmt::format("value too large: {} bytes (the limit is {})", ctx.value_size,
                               ctx.max_value_size);
        case errc::connect_failed:
        case errc::not_connected:
            if (server.empty()) return "cannot connect to the server";  // (routes: unknown)
            if (server.front() == '/')
                return fmt::format("cannot connect to {}{}", printable(server, 200),
                                   unix_socket_problem(server));
            return fmt::format("cannot connect to {}", server);
        case errc::resolve_failed:
            if (server.empty()) return "cannot resolve the server's name";
            return fmt::format("cannot resolve {}", server);
        case errc::timeout:
            return at(fmt::format("timed out (nothing within {} ms)", ctx.timeout_ms));
        case errc::protocol_error:
            return at("protocol error: the server sent a malformed reply");
        case errc::server_error:
            return at("the server reported an error (SERVER_ERROR or ERROR)");
        case errc::client_error:
            return at("the server rejected the request (CLIENT_ERROR)");
        case errc::closed:
            return at("connection closed");
        case errc::auth_failed:
            return at(
                "authentication failed (the server refused the login: SASL over binary, the "
                "-Y auth file over ascii and meta; check --username and $MEMCACHED_PASSWORD)");
        case errc::no_sasl_mechanism:
            return at(
                "the server offers no SASL PLAIN mechanism: its Cyrus SASL plugins are missing "
                "(on the server's host, install libsasl2-modules and restart memcached)");
        case errc::unsupported:
            // The command line asks nothing protocol-specific of the server but the login.
            if (ctx.sasl)
                return at(
                    "the server does not ask for a login (over binary, was it started with -S? "
                    "over ascii or meta, with -Y <auth file>?)");
            return at(ec.message());
        case errc::tls_error:
            // The library reports a refused certificate and any other handshake failure with
            // the same code; the certificate is by far the common cause.
            return at(
                "TLS handshake failed: certificate verification failed or the server does not "
                "speak TLS (check --tls-ca and --tls-server-name)");
        default:
            return at(ec.message());
    }
}

std::string describe_setup_failure(const std::system_error& e, std::string_view protocol_name) {
    // --config names what the client refused itself ("<json path>: <why>"), as when read.
    if (const auto* route = dynamic_cast<const RouteConfigError*>(&e)) return route->message();
    if (e.code() == errc::unsupported)
        return fmt::format(
            "--protocol {} is not supported by this build of the folsom library ({})",
            protocol_name, e.what());
    if (e.code() == errc::tls_error) return fmt::format("cannot set up TLS: {}", e.what());
    return fmt::format("cannot create the client: {}", e.what());
}

}  // namespace folsom::cli
