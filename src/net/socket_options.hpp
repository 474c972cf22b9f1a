// The TCP options a connection sets on its socket once connected: keepalive (SO_KEEPALIVE with
// TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT) and TCP_USER_TIMEOUT, from Options.
#pragma once

#include "folsom/options.hpp"

#include <string>
#include <system_error>

namespace folsom::net {

/// Why Options::tcp_keepalive or Options::tcp_user_timeout cannot be set (a value outside
/// what Linux accepts), or "" when they can. Checked when the client is made, so that a bad
/// value is refused before anything connects.
std::string tcp_options_refusal(const Options& options);

/// Sets the keepalive and user timeout that `options` ask for on the connected TCP socket
/// `fd` (nothing when they ask for none). The first failure is returned; the socket is still
/// usable without the option.
std::error_code apply_tcp_options(int fd, const Options& options) noexcept;

}  // namespace folsom::net
