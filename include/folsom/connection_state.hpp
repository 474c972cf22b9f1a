/// @file
/// ConnectionState: what a user's connection-state listener is told about one server.
///
/// Plain values: thread-safe to copy and compare anywhere. to_string() returns a view of a
/// string literal, valid for the whole program. Nothing here reports errors; a failed
/// connection shows as `disconnected` (see Options::on_connection_state).
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

/// The state's name ("connecting", "connected", "disconnected", "closed"); "unknown" for a
/// value outside the enum.
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
