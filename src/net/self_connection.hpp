// Self-connection: a TCP connect to a local port that nobody listens on can be given that very
// port as its own ephemeral port, and TCP then connects the socket to itself (a simultaneous
// open). The connect "succeeds", and the peer answers every request with the request itself.
// It happens to clients that reconnect in a loop to a local server that is down (the port is
// in the ephemeral range when the server had taken one from bind(0)); each connect checks for
// it and treats it as a refused connect.
#pragma once

#include <system_error>

namespace folsom::net {

/// True when `socket`, just connected, is connected to itself.
template <class Socket>
bool connected_to_itself(const Socket& socket) noexcept {
    std::error_code local_ec, remote_ec;
    const auto local = socket.local_endpoint(local_ec);
    const auto remote = socket.remote_endpoint(remote_ec);
    return !local_ec && !remote_ec && local == remote;
}

}  // namespace folsom::net
