/// @file
/// Routes: how requests travel once a deployment outgrows one ring of servers (replicated
/// pools, failover, warm-up, shadow traffic, selection by key prefix or operation), described
/// in mcrouter's JSON shape (a subset; docs/routing.md says which, and where folsom differs)
/// and resolved once, when the client connects.
///
/// A RouteConfig is a set of named pools (each a ketama ring over its servers, placed exactly
/// as libmemcached places keys, or placed by mcrouter's Ch3 when its pool routes say
/// "hash": "Ch3") and one route tree over them. It comes from JSON
/// (RouteConfig::parse, RouteConfig::load) or from the builder functions in folsom::routes,
/// and goes into Options::routes. Bad configuration is refused with a RouteConfigError whose
/// message is one line naming the JSON path of the fault, e.g.
/// `route.children[1]: unknown pool 'C'`.
///
/// Thread-safety: these are plain values; a client copies the one it is given.
#pragma once

#include "folsom/error.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace folsom {

enum class Protocol : std::uint8_t;  // options.hpp: ascii, binary, meta

/// The kinds of route (mcrouter's route handle names in the comments).
enum class RouteType : std::uint8_t {
    pool,                ///< PoolRoute: one pool's servers (ketama ring, or mcrouter's Ch3)
    all_sync,            ///< AllSyncRoute: to every child; the worst reply
    all_async,           ///< AllAsyncRoute: to every child; NullRoute's reply at once
    all_majority,        ///< AllMajorityRoute: to every child; once half + 1 agree
    all_fastest,         ///< AllFastestRoute: to every child; the first non-error reply
    all_initial,         ///< AllInitialRoute: to every child; the first child's reply
    failover,            ///< FailoverRoute: child after child while the reply is an error
    miss_failover,       ///< MissFailoverRoute: as failover, and on a miss for gets
    warm_up,             ///< WarmUpRoute: cold first; a miss is read from warm and filled
    prefix_selector,     ///< PrefixSelectorRoute: the longest matching key prefix
    operation_selector,  ///< OperationSelectorRoute: by operation (get, set, delete, ...)
    hash,                ///< HashRoute: one child chosen by a hash of the key
    null,                ///< NullRoute: the default reply at once (miss, not_stored, ...)
    error,               ///< ErrorRoute: an error at once
};

/// mcrouter's name of a route type ("PoolRoute", "AllSyncRoute", ...).
std::string_view route_type_name(RouteType t) noexcept;

struct RouteSpec;

/// A pool's shadow: requests whose key falls in [key_fraction_begin, key_fraction_end) of the
/// key hash space are also sent to `target` (one route); its replies never reach the caller.
struct ShadowSpec {
    std::vector<RouteSpec> target;    ///< exactly one route
    double key_fraction_begin = 0.0;  ///< the first key fraction shadowed, in [0, 1]
    double key_fraction_end = 1.0;    ///< the end of the key fractions shadowed (excluded)
};

/// One node of a route tree. Which fields mean something depends on `type`; the others stay
/// at their defaults (RouteConfig::validate refuses a tree where they do not).
struct RouteSpec {
    /// What kind of route this node is.
    RouteType type = RouteType::null;
    /// The label of this route in metrics. The JSON loader sets the node's JSON path (e.g.
    /// "route.operation_policies.get") unless the node has a "name".
    std::string name{};
    /// pool: the name of the pool (a key of RouteConfig::pools).
    std::string pool{};
    /// pool: shadows of this pool route.
    std::vector<ShadowSpec> shadows{};
    /// all_*, failover, miss_failover, hash: the children in order.
    /// warm_up: {cold, warm}.
    /// prefix_selector / operation_selector: one child per entry of `selectors`, in the same
    /// order, then the wildcard / default_policy when has_default.
    std::vector<RouteSpec> children{};
    /// prefix_selector: the key prefixes; operation_selector: operation names (mcrouter's:
    /// "get", "gets", "gat", "gats", "set", "add", "replace", "append", "prepend", "cas",
    /// "delete", "incr", "decr", "touch").
    std::vector<std::string> selectors{};
    /// prefix_selector / operation_selector: children.back() serves everything no selector
    /// matches ("wildcard" / "default_policy"). Without it, such requests get ErrorRoute's
    /// reply.
    bool has_default = false;
    /// failover / miss_failover: writes that land on a child after the first have their
    /// exptime capped to this many seconds (mcrouter's failover_exptime).
    std::optional<std::uint32_t> failover_exptime{};
    /// warm_up: the exptime (seconds) of the value written into the cold route after a hit in
    /// the warm one. 0: no expiry.
    std::uint32_t exptime = 0;
    /// pool: how the pool places keys on its servers (mcrouter's PoolRoute "hash"): empty for
    /// Options::distribution (libmemcached's ketama unless changed), or "Ch3" for mcrouter's
    /// placement (furc_hash over the pool's server list, in order). Placement belongs to the
    /// pool: every pool route of one pool must give the same.
    /// hash: the hash function choosing the child, mcrouter's "Ch3" (the default, as in
    /// mcrouter), "WeightedCh3" (with `weights`) or "Crc32", or folsom's "Md5".
    std::string hash_func{};
    /// hash: a salt appended to the key before hashing (at most 256 bytes).
    std::string salt{};
    /// hash with "WeightedCh3": one weight in [0, 1] per child (mcrouter's "weights"). A
    /// child's share of keys shrinks with its weight; weight 1 everywhere is Ch3.
    std::vector<double> weights{};
    /// error: the message the error carries (mcrouter's "response"); may be empty.
    std::string error_message{};
};

/// A named group of servers: one ketama ring (or Ch3 placement, as its pool routes say, or
/// WeightedCh3 with `weights`). The optional fields are mcrouter's pool options; unset, the
/// pool takes the client's Options, so pools differ only where their configuration says.
struct PoolSpec {
    /// The pool's name, as routes refer to it ("PoolRoute|<name>").
    std::string name{};
    /// As Options::servers: "host:port", "host:port:weight", or a Unix socket path.
    std::vector<std::string> servers{};
    /// mcrouter's "server_timeout" (milliseconds, at least 1): this pool's
    /// Options::request_timeout. Unset: the client's.
    std::optional<std::chrono::milliseconds> server_timeout{};
    /// mcrouter's "protocol": this pool's wire protocol (JSON: "ascii", or folsom's "binary"
    /// and "meta"; mcrouter's own caret, umbrella and thrift are refused). Unset: the client's
    /// Options::protocol.
    std::optional<Protocol> protocol{};
    /// mcrouter's "security_mech": true ("tls") connects this pool with TLS, using
    /// Options::tls's settings when the client has them and TlsOptions' defaults otherwise;
    /// false ("plain") connects it without TLS even when Options::tls is set. Unset: as
    /// Options::tls says.
    std::optional<bool> tls{};
    /// mcrouter's "weights": one weight in [0, 1] per server, not all 0. The pool then places
    /// keys as mcrouter's WeightedCh3 does (a server's share of keys shrinks with its weight;
    /// 0 gives it none), and its pool routes take no "hash" and no shadows. Empty: no weights.
    std::vector<double> weights{};
    /// mcrouter's "keep_routing_prefix". folsom has no mcrouter routing prefixes
    /// ("/region/cluster/"): every key is sent to the pool as given, which is what true asks.
    /// false (mcrouter's default) is accepted and changes nothing (docs/routing.md).
    bool keep_routing_prefix = false;
};

/// Thrown for a configuration that cannot be used. what() is one line: "<json path>: <why>".
class RouteConfigError : public std::system_error {
  public:
    /// A fault at JSON path `path` (may be empty), explained by `why`.
    RouteConfigError(std::string path, const std::string& why)
        : std::system_error(make_error_code(errc::invalid_argument),
                            path.empty() ? why : path + ": " + why),
          path_(std::move(path)) {}
    /// The JSON path of the fault ("route.children[1]", "pools.A.servers[0]"); empty for a
    /// fault of the whole text (not JSON, say).
    const std::string& path() const noexcept { return path_; }
    /// The message without the std::system_error suffix.
    std::string message() const {
        std::string w = what();
        auto at = w.rfind(": ");  // system_error appends ": <category message>"
        return at == std::string::npos ? w : w.substr(0, at);
    }

  private:
    std::string path_;
};

/// Pools and the route over them.
struct RouteConfig {
    std::vector<PoolSpec> pools{};  ///< the pools, in the order of the configuration
    RouteSpec route{};              ///< the route tree every request goes through

    /// Reads mcrouter-shaped JSON: {"pools": {...}, "route": ..., "named_handles": [...]}.
    /// Throws RouteConfigError naming the JSON path of the first fault: text that is not
    /// JSON, an unknown key anywhere, an unknown route type, a child that names no pool, a
    /// cycle through named handles, a bad server address, a value of the wrong type.
    static RouteConfig parse(std::string_view json);
    /// parse() of a file's contents; a file that cannot be read is a RouteConfigError too.
    static RouteConfig load(const std::string& path);

    /// Checks a tree (however it was made) against its pools; throws RouteConfigError as
    /// parse() does. Client::connect calls it.
    void validate() const;
};

/// What one route did since the client connected (Client::route_stats()).
struct RouteStats {
    std::string name{};  ///< RouteSpec::name (the JSON path unless the config named it)
    RouteType type = RouteType::null;   ///< the route's kind
    std::uint64_t requests = 0;         ///< requests the route was asked to send
    std::uint64_t failovers = 0;        ///< sends to a child after the first (failover, warm-up)
    std::uint64_t shadow_requests = 0;  ///< copies sent to this pool route's shadows
    std::uint64_t shadow_errors = 0;    ///< of those, the ones that failed
};

/// Builders for RouteConfig trees in code, e.g.
///   RouteConfig c{{{"A", {"127.0.0.1:11211"}}, {"B", {"127.0.0.1:11212"}}},
///                 routes::all_sync({routes::pool("A"), routes::pool("B")})};
namespace routes {
/// A PoolRoute to pool `name`. `hash`: "" (Options::distribution) or "Ch3" (mcrouter's
/// placement); see RouteSpec::hash_func.
RouteSpec pool(std::string name, std::vector<ShadowSpec> shadows = {}, std::string hash = {});
/// A shadow of a pool route: `target` also gets the requests whose key hash falls in
/// [key_fraction_begin, key_fraction_end).
ShadowSpec shadow(RouteSpec target, double key_fraction_begin, double key_fraction_end);
/// AllSyncRoute: every child; the worst reply.
RouteSpec all_sync(std::vector<RouteSpec> children);
/// AllAsyncRoute: every child; NullRoute's reply at once.
RouteSpec all_async(std::vector<RouteSpec> children);
/// AllMajorityRoute: every child; the reply half + 1 agree on.
RouteSpec all_majority(std::vector<RouteSpec> children);
/// AllFastestRoute: every child; the first non-error reply.
RouteSpec all_fastest(std::vector<RouteSpec> children);
/// AllInitialRoute: every child; the first child's reply.
RouteSpec all_initial(std::vector<RouteSpec> children);
/// FailoverRoute: child after child while the reply is an error.
RouteSpec failover(std::vector<RouteSpec> children,
                   std::optional<std::uint32_t> failover_exptime = std::nullopt);
/// MissFailoverRoute: as failover, and on a miss for gets.
RouteSpec miss_failover(std::vector<RouteSpec> children,
                        std::optional<std::uint32_t> failover_exptime = std::nullopt);
/// WarmUpRoute: gets read `cold`, and on a miss `warm`, filling `cold` with `exptime`.
RouteSpec warm_up(RouteSpec cold, RouteSpec warm, std::uint32_t exptime = 0);
/// PrefixSelectorRoute. `policies`: {prefix, route}; `wildcard`: for keys no prefix matches.
RouteSpec prefix_selector(std::vector<std::pair<std::string, RouteSpec>> policies,
                          std::optional<RouteSpec> wildcard = std::nullopt);
/// OperationSelectorRoute. `policies`: {operation name, route}; `default_policy`: for the
/// other operations.
RouteSpec operation_selector(std::vector<std::pair<std::string, RouteSpec>> policies,
                             std::optional<RouteSpec> default_policy = std::nullopt);
/// HashRoute. `hash_func`: "Ch3" (mcrouter's default), "WeightedCh3" (give `weights`),
/// "Crc32" or "Md5".
RouteSpec hash(std::vector<RouteSpec> children, std::string hash_func = "Ch3",
               std::string salt = {}, std::vector<double> weights = {});
/// NullRoute: the default reply at once.
RouteSpec null();
/// ErrorRoute: an error carrying `message`, at once.
RouteSpec error(std::string message = {});
/// The same route with a metrics label.
RouteSpec named(std::string name, RouteSpec route);
}  // namespace routes

}  // namespace folsom
