// ConnectionState: what a user's connection-state listener is told about one server.
#pragma once

#include <cstdint>
#include <string_view>

namespace folsom {

/// The state of one server as the client sees it. With several connections per server
/// (Options::connections_per_server), it is the best state of any of them: the server is
/// `connected` while at least one connection is.
enum class ConnectionState : std::uint8_t {
    connecting,    ///< a connect (or reconnect) attempt is in progress
    connected,     ///< requests go out
    disconnected,  ///< lost or refused; requests fail fast until the backoff timer reconnects
    closed,        ///< shut down (client shutdown, or the server left the discovered set)
};

constexpr std::string_view to_string(ConnectionState s) noexcept {
    switch (s) {
        case ConnectionState::connecting:
            return "connecting";
        case ConnectionState::connected:
            return "connected";
        case ConnectionState::disconnected:
            return "disconnected";
        case ConnectionState::closed:
            return "closed";
    }
    return "unknown";
}

}  // namespace folsom
