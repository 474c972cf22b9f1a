/// @file
/// ServerAddress: one memcached server as the user configures it (host, port, weight), reached
/// over TCP or, when the host is an absolute path, over a Unix domain socket
/// (`memcached -s /run/memcached/memcached.sock`).
///
/// The host is kept exactly as written (a name or an IP literal, IPv6 without its brackets):
/// ketama placement hashes that text, so "10.0.0.1" and "host-a" are different servers on the
/// ring even when they resolve to the same machine. Resolution happens later, in net/. A socket
/// path is never resolved: it is the server's name on the ring, as in libmemcached (which names
/// a socket server's points "<path>:0-<i>": a socket's port is 0 there).
///
/// Errors: parsing reports errc::invalid_argument and never throws. Thread-safety: plain values
/// and pure functions.
#pragma once

#include "folsom/export.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace folsom {

/// memcached's well-known port; libmemcached also leaves it out of its ketama point names.
inline constexpr std::uint16_t default_memcached_port = 11211;

/// The longest Unix socket path a server may have: sizeof(sockaddr_un::sun_path) - 1 on Linux
/// (the kernel needs room for the terminating NUL).
inline constexpr std::size_t max_unix_socket_path = 107;

/// One memcached server: where it is, and its ketama weight.
struct FOLSOM_EXPORT ServerAddress {
    /// Name or IP literal (IPv6 without brackets), or the absolute path of a Unix socket.
    std::string host;
    std::uint16_t port = default_memcached_port;  ///< 1..65535; unused (0) for a Unix socket
    std::uint32_t weight = 1;                     ///< relative share of keys (ketama), >= 1

    /// A Unix domain socket server at `path` (absolute). Its port is 0, as in libmemcached.
    static ServerAddress unix_socket(std::string path, std::uint32_t weight = 1) {
        return ServerAddress{std::move(path), 0, weight};
    }

    /// True when the server is a Unix domain socket: its host is an absolute path.
    bool is_unix_socket() const noexcept { return !host.empty() && host.front() == '/'; }

    /// "host:port", "[v6addr]:port" when the host holds a colon, or a socket's path. The weight
    /// is not shown. This is the server's name in metrics labels and messages.
    std::string to_string() const;

    /// Same host text, port and weight (a socket's port is not compared: it is unused).
    friend bool operator==(const ServerAddress& a, const ServerAddress& b) noexcept {
        return a.host == b.host && a.weight == b.weight && (a.port == b.port || a.is_unix_socket());
    }
};

/// Parses one server: `host`, `host:port`, `host:port:weight`, `[v6addr]`, `[v6addr]:port`,
/// `[v6addr]:port:weight`, or a Unix socket's absolute path, `/path` or `/path/?weight` (the
/// weight suffix of libmemcached's `--SOCKET="/path"/?weight`). An IPv6 literal needs its
/// brackets (a bare "::1" is ambiguous). The port must be 1..65535 and the weight >= 1, both
/// plain decimal. A socket path holds no ',' and no control character, and is at most
/// max_unix_socket_path bytes; whether it exists is only known at connect time (a server that
/// is not there yet is not_connected, with backoff, like a TCP server that refuses).
/// Returns errc::invalid_argument on anything else; `out` is only written on success. With
/// `why`, an error also sets *why to one line saying what is wrong (naming the entry).
FOLSOM_EXPORT std::error_code parse_server_address(std::string_view text, ServerAddress& out,
                                                   std::string* why = nullptr);

/// Parses a comma-separated list such as "a:11211,b:11212:2,[::1]:11213,/run/mc.sock". Blanks
/// around an entry are ignored; an empty entry or an empty list is an error
/// (errc::invalid_argument, with `why` as parse_server_address's). `out` is only replaced on
/// success.
FOLSOM_EXPORT std::error_code parse_server_list(std::string_view text,
                                                std::vector<ServerAddress>& out,
                                                std::string* why = nullptr);

}  // namespace folsom
