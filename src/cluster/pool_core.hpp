// make_pool_core: the core of one ring of servers — ServerCore, then the key prefix and the
// retrying decorators as the Options ask — without the client-wide setup (observers, inline
// completions) make_client_core adds on the outermost core. A client without routes is one
// such core; with routes (routing/route_core.hpp), every pool is one.
#pragma once

#include "folsom/detail/client_core.hpp"
#include "folsom/server_address.hpp"

#include <memory>
#include <vector>

namespace folsom::detail {

/// Why Client::connect refuses Options::binary_keys over ascii or binary (errc::unsupported);
/// route pools report it at their "protocol" (RouteConfigError).
inline constexpr const char* binary_keys_refusal =
    "Options::binary_keys needs the meta protocol (ascii cannot carry keys of any bytes; over "
    "binary, Options::raw_binary_protocol_keys sends them as they are)";

/// `servers` may be empty when Options::discovery is set (it feeds the ring).
std::shared_ptr<ClientCore> make_pool_core(asio::any_io_executor ex, const Options& options,
                                           std::vector<ServerAddress> servers);

}  // namespace folsom::detail
