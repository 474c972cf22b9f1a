/// @file
/// ServerAddress: one memcached server as the user configures it (host, port, weight).
///
/// The host is kept exactly as written (a name or an IP literal, IPv6 without its brackets):
/// ketama placement hashes that text, so "10.0.0.1" and "host-a" are different servers on the
/// ring even when they resolve to the same machine. Resolution happens later, in net/.
///
/// Errors: parsing reports errc::invalid_argument and never throws. Thread-safety: plain values
/// and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace folsom {

/// memcached's well-known port; libmemcached also leaves it out of its ketama point names.
inline constexpr std::uint16_t default_memcached_port = 11211;

/// One memcached server: where it is, and its ketama weight.
struct ServerAddress {
    std::string host;                             ///< name or IP literal, IPv6 without brackets
    std::uint16_t port = default_memcached_port;  ///< 1..65535
    std::uint32_t weight = 1;                     ///< relative share of keys (ketama), >= 1

    /// "host:port", or "[v6addr]:port" when the host holds a colon. The weight is not shown.
    std::string to_string() const;

    /// Same host text, port and weight.
    friend bool operator==(const ServerAddress&, const ServerAddress&) = default;
};

/// Parses one server: `host`, `host:port`, `host:port:weight`, `[v6addr]`, `[v6addr]:port`
/// or `[v6addr]:port:weight`. An IPv6 literal needs its brackets (a bare "::1" is ambiguous).
/// The port must be 1..65535 and the weight >= 1, both plain decimal.
/// Returns errc::invalid_argument on anything else; `out` is only written on success.
std::error_code parse_server_address(std::string_view text, ServerAddress& out);

/// Parses a comma-separated list such as "a:11211,b:11212:2,[::1]:11213". Blanks around an
/// entry are ignored; an empty entry or an empty list is an error (errc::invalid_argument).
/// `out` is only replaced on success.
std::error_code parse_server_list(std::string_view text, std::vector<ServerAddress>& out);

}  // namespace folsom
