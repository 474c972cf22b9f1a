// How the Options compose the core: a ServerCore talks to the servers; decorators add
// discovery (which feeds it server sets), the key prefix (only when one is configured) and
// retries (which wrap each idempotent request, outermost, so that a retry is prefixed anew).
// With Options::routes, every pool is such a stack, under the route tree's RouteCore.
#include "folsom/cluster/distribution.hpp"
#include "folsom/error.hpp"

#include "cluster/discovering_core.hpp"
#include "cluster/key_prefix_core.hpp"
#include "cluster/pool_core.hpp"
#include "cluster/retrying_core.hpp"
#include "cluster/server_core.hpp"
#include "net/connection.hpp"
#include "net/socket_options.hpp"
#include "routing/route_core.hpp"
#include "wire/protocol_driver.hpp"

#include <system_error>

namespace folsom::detail {

std::shared_ptr<ClientCore> make_pool_core(asio::any_io_executor ex, const Options& options,
                                           std::vector<ServerAddress> servers) {
    auto server_core = std::make_shared<ServerCore>(ex, options, std::move(servers));
    std::shared_ptr<ClientCore> core = server_core;
    if (options.discovery) {
        auto d = std::make_shared<DiscoveringCore>(std::move(server_core), options);
        d->start();
        core = std::move(d);
    }
    if (!options.key_prefix.empty())
        core = std::make_shared<KeyPrefixCore>(
            std::move(core), options.key_prefix, options.hash_with_key_prefix,
            options.max_outstanding_requests, options.binary_keys);
    if (options.retry_idempotent)
        core = std::make_shared<cluster::RetryingCore>(std::move(core),
                                                       options.max_outstanding_requests);
    return core;
}

std::shared_ptr<ClientCore> make_client_core(asio::any_io_executor ex, const Options& options) {
    if (const std::string why = cluster::distribution_error(options.distribution); !why.empty())
        throw std::system_error(make_error_code(errc::invalid_argument),
                                "Options::distribution: " + why);
    if (auto ec = validate_key_prefix(options.key_prefix, options.binary_keys))
        throw std::system_error(ec, options.binary_keys
                                        ? "Options::key_prefix must be at most 185 bytes with "
                                          "binary_keys"
                                        : "Options::key_prefix must be at most 249 bytes without "
                                          "spaces or control characters");
    // Only meta can carry a binary key; a route pool's own protocol is checked with its pool.
    if (options.binary_keys && !options.routes && options.protocol != Protocol::meta)
        throw std::system_error(make_error_code(errc::unsupported), binary_keys_refusal);
    if (options.raw_binary_protocol_keys && !options.routes && options.protocol != Protocol::binary)
        throw std::system_error(make_error_code(errc::invalid_argument),
                                "Options::raw_binary_protocol_keys needs Protocol::binary (only "
                                "the binary protocol carries keys of any bytes)");
    // Refused here, before anything connects (a discovered server's connections are made later).
    check_credentials(options);
    if (auto why = net::tcp_options_refusal(options); !why.empty())
        throw std::system_error(make_error_code(errc::invalid_argument), why);
    std::shared_ptr<ClientCore> core;
    if (options.routes) {
        core = routing::make_route_core(ex, options);
    } else {
        std::vector<ServerAddress> servers;
        if (!options.discovery) {
            // No server named: memcached's default address (Options::servers says why the
            // list starts empty rather than holding it).
            const std::vector<std::string> fallback{default_server};
            for (const auto& s : options.servers.empty() ? fallback : options.servers) {
                ServerAddress addr;
                std::string why;
                if (auto ec = parse_server_address(s, addr, &why)) throw std::system_error(ec, why);
                if (addr.is_unix_socket() && options.tls)
                    throw std::system_error(make_error_code(errc::invalid_argument),
                                            net::unix_socket_tls_refusal(addr.host));
                servers.push_back(std::move(addr));
            }
        }
        core = make_pool_core(ex, options, std::move(servers));
    }
    core->set_key_prefix_size(options.key_prefix.size());
    core->set_binary_keys(options.binary_keys);
    core->set_observers(options.metrics, options.tracer);
    core->set_inline_context_from(core->executor());
    return core;
}

}  // namespace folsom::detail
