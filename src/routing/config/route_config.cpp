// RouteConfig: mcrouter-shaped JSON read into a route tree, and the rules every tree must
// follow (however it was made) checked before a client runs it.
//
// Both halves name a fault by its JSON path ("route.children[1]", "pools.A.servers[0]",
// "route.policies.a:"). validate() walks a RouteSpec tree and builds the same paths from it,
// so a tree read from JSON and one built with folsom::routes report a fault at the same place.
// The rules of a single node live in check_route_node(), used by both: the JSON reader calls
// it as each node is made, where the node's JSON path is known (a named handle is reported
// where it is defined, not at each place it is copied to).
#include "folsom/cluster/distribution.hpp"
#include "folsom/config.hpp"
#include "folsom/options.hpp"
#include "folsom/routes.hpp"
#include "folsom/server_address.hpp"

#include "routing/operation_names.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#if FOLSOM_HAVE_NLOHMANN_JSON
#include <nlohmann/json.hpp>
#endif
#include <set>
#include <string>
#include <utility>

namespace folsom {
namespace {

#if FOLSOM_HAVE_NLOHMANN_JSON
// ordered_json keeps an object's keys in the order they are written: the policies of a
// selector become its children in that order, and pools keep the order of the file.
using Json = nlohmann::ordered_json;
#endif

// Trees deeper than this are refused: the reader, validate() and the runtime recurse over
// the tree, and no sensible configuration comes near it.
constexpr int max_route_depth = 100;
// Named handles are copied wherever they are used, so handles that each use the previous one
// twice grow exponentially; this bounds the copies.
constexpr std::size_t max_routes = 100000;

struct TypeInfo {
    RouteType type;
    std::string_view name;
    std::string_view keys;  // the keys its JSON object takes besides "type", as in messages
};

constexpr std::array<TypeInfo, 14> route_types = {{
    {RouteType::pool, "PoolRoute", "pool, shadows, hash, name"},
    {RouteType::all_sync, "AllSyncRoute", "children, name"},
    {RouteType::all_async, "AllAsyncRoute", "children, name"},
    {RouteType::all_majority, "AllMajorityRoute", "children, name"},
    {RouteType::all_fastest, "AllFastestRoute", "children, name"},
    {RouteType::all_initial, "AllInitialRoute", "children, name"},
    {RouteType::failover, "FailoverRoute", "children, failover_exptime, name"},
    {RouteType::miss_failover, "MissFailoverRoute", "children, failover_exptime, name"},
    {RouteType::warm_up, "WarmUpRoute", "cold, warm, exptime, name"},
    {RouteType::prefix_selector, "PrefixSelectorRoute", "policies, wildcard, name"},
    {RouteType::operation_selector, "OperationSelectorRoute",
     "operation_policies, default_policy, name"},
    {RouteType::hash, "HashRoute", "children, hash_func, salt, weights, name"},
    {RouteType::null, "NullRoute", "name"},
    {RouteType::error, "ErrorRoute", "response, name"},
}};

// HashRoute's: mcrouter's (Ch3 first, its default) and folsom's Md5.
constexpr std::array<std::string_view, 4> hash_funcs = {"Ch3", "WeightedCh3", "Crc32", "Md5"};
// A PoolRoute's "hash" (its pool's placement): mcrouter's Ch3, any other distribution name
// (cluster::parse_distribution), or none for Options::distribution (libmemcached's ketama by
// default).
constexpr std::string_view pool_hash = "Ch3";
constexpr std::string_view pool_hash_message =
    "(a PoolRoute places keys by Options::distribution, libmemcached's ketama unless changed, "
    "by mcrouter's \"hash\": \"Ch3\", or by a distribution name such as \"gomemcache\" or "
    "\"libmemcached_modula:crc\": see docs/placement.md)";

constexpr std::string_view range_message = "expected [begin, end] with 0 <= begin <= end <= 1";

// The RouteSpec fields, as bits: which ones a route type uses. The others must stay at their
// defaults, so that a field set on the wrong type is refused rather than silently ignored.
enum Field : unsigned {
    f_pool = 1u << 0,
    f_shadows = 1u << 1,
    f_children = 1u << 2,
    f_selectors = 1u << 3,
    f_has_default = 1u << 4,
    f_failover_exptime = 1u << 5,
    f_exptime = 1u << 6,
    f_hash_func = 1u << 7,
    f_salt = 1u << 8,
    f_error_message = 1u << 9,
    f_weights = 1u << 10,
};

unsigned fields_of(RouteType t) {
    switch (t) {
        case RouteType::pool:
            return f_pool | f_shadows | f_hash_func;
        case RouteType::all_sync:
        case RouteType::all_async:
        case RouteType::all_majority:
        case RouteType::all_fastest:
        case RouteType::all_initial:
            return f_children;
        case RouteType::failover:
        case RouteType::miss_failover:
            return f_children | f_failover_exptime;
        case RouteType::warm_up:
            return f_children | f_exptime;
        case RouteType::prefix_selector:
        case RouteType::operation_selector:
            return f_children | f_selectors | f_has_default;
        case RouteType::hash:
            return f_children | f_hash_func | f_salt | f_weights;
        case RouteType::null:
            return 0;
        case RouteType::error:
            return f_error_message;
    }
    return 0;
}

const TypeInfo* find_type(RouteType t) {
    for (const auto& info : route_types)
        if (info.type == t) return &info;
    return nullptr;
}

#if FOLSOM_HAVE_NLOHMANN_JSON  // the JSON reader's lookups
const TypeInfo* find_type(std::string_view name) {
    for (const auto& info : route_types)
        if (info.name == name) return &info;
    return nullptr;
}
#endif

template <typename Range>
std::string join(const Range& items) {
    std::string out;
    for (std::string_view item : items) {
        if (!out.empty()) out += ", ";
        out += item;
    }
    return out;
}

#if FOLSOM_HAVE_NLOHMANN_JSON
std::string type_names() {
    std::vector<std::string_view> names;
    for (const auto& info : route_types)
        names.push_back(info.name);
    return join(names);
}
#endif

bool is_operation(std::string_view op) {
    return routing::find_operation(op) != nullptr;
}

std::string operation_list() {
    std::string out;
    for (const routing::OperationName& op : routing::operation_names) {
        if (!out.empty()) out += ", ";
        out += op.name;
    }
    return out;
}

// Messages are one line whatever the configuration holds (a key may contain a newline):
// control characters are written escaped.
std::string one_line(std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (u < 0x20 || u == 0x7f) {
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
        } else {
            out += c;
        }
    }
    return out;
}

[[noreturn]] void fail(std::string_view path, std::string_view why) {
    throw RouteConfigError(one_line(path), one_line(why));
}

std::string in_quotes(std::string_view s) {
    std::string out = "'";
    out += s;
    out += '\'';
    return out;
}

std::string member(std::string_view base, std::string_view key) {
    std::string out(base);
    if (!out.empty()) out += '.';
    out += key;
    return out;
}

std::string element(std::string_view base, std::size_t i) {
    std::string out(base);
    out += '[';
    out += std::to_string(i);
    out += ']';
    return out;
}

// The path of a route's i-th child, named as the JSON names it.
std::string child_path(const RouteSpec& r, const std::string& path, std::size_t i) {
    switch (r.type) {
        case RouteType::warm_up:
            return member(path, i == 0 ? "cold" : "warm");
        case RouteType::prefix_selector:
            return i < r.selectors.size() ? member(path, "policies." + r.selectors[i])
                                          : member(path, "wildcard");
        case RouteType::operation_selector:
            return i < r.selectors.size() ? member(path, "operation_policies." + r.selectors[i])
                                          : member(path, "default_policy");
        default:
            return element(member(path, "children"), i);
    }
}

void check_pool(const PoolSpec& p, const std::string& path) {
    const auto servers = member(path, "servers");
    if (p.servers.empty()) fail(servers, "a pool needs at least one server");
    for (std::size_t i = 0; i < p.servers.size(); ++i) {
        ServerAddress address;
        std::string why;
        if (parse_server_address(p.servers[i], address, &why)) fail(element(servers, i), why);
    }
    if (p.server_timeout && p.server_timeout->count() < 1)
        fail(member(path, "server_timeout"), "a timeout is at least 1 ms");
    if (p.protocol && *p.protocol != Protocol::ascii && *p.protocol != Protocol::binary &&
        *p.protocol != Protocol::meta)
        fail(member(path, "protocol"), "unknown protocol");
    if (p.username.has_value() != p.password.has_value())
        fail(member(path, p.username ? "password" : "username"),
             "a pool's username and password are given together");
    if (p.weights.empty()) return;
    const auto weights = member(path, "weights");
    if (p.weights.size() != p.servers.size())
        fail(weights, "one weight per server (" + std::to_string(p.weights.size()) + " weights, " +
                          std::to_string(p.servers.size()) + " servers)");
    bool any = false;
    for (std::size_t i = 0; i < p.weights.size(); ++i) {
        if (!(p.weights[i] >= 0.0 && p.weights[i] <= 1.0))  // written so that NaN fails too
            fail(element(weights, i), "a weight is a number in [0, 1]");
        any = any || p.weights[i] > 0.0;
    }
    if (!any) fail(weights, "every weight is 0: no server would be given a key");
}

void check_hash_route(const RouteSpec& r, const std::string& path) {
    if (std::find(hash_funcs.begin(), hash_funcs.end(), r.hash_func) == hash_funcs.end())
        fail(member(path, "hash_func"), "unsupported hash_func " + in_quotes(r.hash_func) +
                                            " (supported: " + join(hash_funcs) + ")");
    if (!FOLSOM_HAVE_ZLIB && r.hash_func == "Crc32")
        throw RouteConfigError(member(path, "hash_func"), errc::built_without_zlib);
    const auto weights = member(path, "weights");
    if (r.hash_func != "WeightedCh3") {
        if (!r.weights.empty()) fail(weights, "only hash_func WeightedCh3 takes weights");
        return;
    }
    // mcrouter gives missing weights 0.5 and ignores extra ones, with a "CONFIG IS BROKEN"
    // in its log; refused here, where the fault can be named.
    if (r.weights.size() != r.children.size())
        fail(weights, "WeightedCh3 needs one weight per child (" +
                          std::to_string(r.weights.size()) + " weights, " +
                          std::to_string(r.children.size()) + " children)");
    for (std::size_t i = 0; i < r.weights.size(); ++i)
        if (!(r.weights[i] >= 0.0 && r.weights[i] <= 1.0))  // written so that NaN fails too
            fail(element(weights, i), "a weight is a number in [0, 1]");
}

// The rules of one node, its children aside (they are checked as nodes of their own).
void check_route_node(const RouteSpec& r, const std::string& path) {
    const TypeInfo* info = find_type(r.type);
    if (!info) fail(path, "unknown route type " + std::to_string(static_cast<unsigned>(r.type)));
    const std::string type(info->name);

    const unsigned used = fields_of(r.type);
    const auto unused = [&](Field f, std::string_view field, bool at_default) {
        if (!(used & f) && !at_default)
            fail(member(path, field), type + " takes no " + std::string(field));
    };
    unused(f_pool, "pool", r.pool.empty());
    unused(f_shadows, "shadows", r.shadows.empty());
    unused(f_children, "children", r.children.empty());
    unused(f_selectors, "selectors", r.selectors.empty());
    unused(f_has_default, "has_default", !r.has_default);
    unused(f_failover_exptime, "failover_exptime", !r.failover_exptime);
    unused(f_exptime, "exptime", r.exptime == 0);
    unused(f_hash_func, "hash_func", r.hash_func.empty());
    unused(f_salt, "salt", r.salt.empty());
    unused(f_error_message, "error_message", r.error_message.empty());
    unused(f_weights, "weights", r.weights.empty());

    switch (r.type) {
        case RouteType::pool:
            if (r.pool.empty()) fail(member(path, "pool"), "PoolRoute needs a pool");
            if (!r.hash_func.empty() && r.hash_func != pool_hash) {
                std::string why;
                // A known scheme with a hash it does not take says which; any other name gets
                // the list of what a pool's "hash" may be.
                if (!cluster::parse_distribution(r.hash_func, &why))
                    fail(member(path, "hash"), "unsupported hash " + in_quotes(r.hash_func) + " " +
                                                   (why.rfind("unknown distribution", 0) == 0
                                                        ? std::string(pool_hash_message)
                                                        : "(" + why + ")"));
            }
            for (std::size_t i = 0; i < r.shadows.size(); ++i) {
                const auto& s = r.shadows[i];
                const auto at = element(member(path, "shadows"), i);
                if (s.target.size() != 1)
                    fail(member(at, "target"), "a shadow needs exactly one target route");
                // Written so that NaN fails too.
                if (!(s.key_fraction_begin >= 0.0 && s.key_fraction_begin <= s.key_fraction_end &&
                      s.key_fraction_end <= 1.0))
                    fail(member(at, "key_fraction_range"), range_message);
            }
            break;
        case RouteType::all_sync:
        case RouteType::all_async:
        case RouteType::all_majority:
        case RouteType::all_fastest:
        case RouteType::all_initial:
        case RouteType::failover:
        case RouteType::miss_failover:
        case RouteType::hash:
            if (r.children.empty())
                fail(member(path, "children"), type + " needs at least one child");
            if (r.type == RouteType::hash) check_hash_route(r, path);
            break;
        case RouteType::warm_up:
            if (r.children.size() != 2)
                fail(path, "WarmUpRoute needs exactly two children (cold, warm), not " +
                               std::to_string(r.children.size()));
            break;
        case RouteType::prefix_selector:
        case RouteType::operation_selector: {
            const bool by_prefix = r.type == RouteType::prefix_selector;
            if (r.children.size() != r.selectors.size() + (r.has_default ? 1 : 0))
                fail(path, type + " needs one child per selector, and one more with has_default (" +
                               std::to_string(r.selectors.size()) + " selectors, has_default " +
                               (r.has_default ? "true" : "false") + ", " +
                               std::to_string(r.children.size()) + " children)");
            if (r.children.empty())
                fail(path, by_prefix ? "PrefixSelectorRoute needs policies or a wildcard"
                                     : "OperationSelectorRoute needs operation_policies or a "
                                       "default_policy");
            std::set<std::string_view> seen;
            for (std::size_t i = 0; i < r.selectors.size(); ++i) {
                const auto& selector = r.selectors[i];
                const auto at = child_path(r, path, i);
                if (!by_prefix && !is_operation(selector))
                    fail(at, "unknown operation " + in_quotes(selector) +
                                 " (operations: " + operation_list() + ")");
                if (!seen.insert(selector).second)
                    fail(at, (by_prefix ? "prefix " : "operation ") + in_quotes(selector) +
                                 " appears twice");
            }
            break;
        }
        case RouteType::null:
        case RouteType::error:
            break;
    }
}

// Where each pool's placement was first given. A pool is one set of connections that places
// keys one way, so every PoolRoute of it must agree on its "hash".
struct FirstPlacement {
    std::string_view hash;
    std::string path;
};
using Placements = std::map<std::string_view, FirstPlacement>;

std::string placement_name(std::string_view hash) {
    return hash.empty() ? "Options::distribution (no \"hash\")" : in_quotes(hash);
}

void check_placement(const RouteSpec& r, const std::string& path, Placements& placements) {
    const auto [first, fresh] = placements.try_emplace(r.pool, FirstPlacement{r.hash_func, path});
    if (fresh || first->second.hash == r.hash_func) return;
    fail(r.hash_func.empty() ? path : member(path, "hash"),
         "pool " + in_quotes(r.pool) + " is placed by " + placement_name(first->second.hash) +
             " at " + first->second.path + " and by " + placement_name(r.hash_func) +
             " here: every PoolRoute of a pool must give the same \"hash\"");
}

using PoolsByName = std::map<std::string_view, const PoolSpec*>;

void validate_route(const RouteSpec& r, const std::string& path, const PoolsByName& pools,
                    Placements& placements, int depth) {
    if (depth > max_route_depth)
        fail(path, "routes nested more than " + std::to_string(max_route_depth) + " deep");
    check_route_node(r, path);
    if (r.type == RouteType::pool) {
        const auto pool = pools.find(r.pool);
        if (pool == pools.end()) fail(member(path, "pool"), "unknown pool " + in_quotes(r.pool));
        // A weighted pool is WeightedCh3 placement over its servers (make_route_core builds
        // it as a HashRoute): it has its own hash, and a HashRoute has no shadows.
        if (!pool->second->weights.empty()) {
            if (!r.hash_func.empty())
                fail(member(path, "hash"), "pool " + in_quotes(r.pool) +
                                               " has weights: it places keys by WeightedCh3 "
                                               "and its routes take no hash");
            if (!r.shadows.empty())
                fail(member(path, "shadows"),
                     "pool " + in_quotes(r.pool) + " has weights: its routes take no shadows");
        }
        check_placement(r, path, placements);
    }
    for (std::size_t i = 0; i < r.shadows.size(); ++i)
        validate_route(r.shadows[i].target.front(),
                       member(element(member(path, "shadows"), i), "target"), pools, placements,
                       depth + 1);
    for (std::size_t i = 0; i < r.children.size(); ++i)
        validate_route(r.children[i], child_path(r, path, i), pools, placements, depth + 1);
}

// ---- JSON ----------------------------------------------------------------------------------
#if FOLSOM_HAVE_NLOHMANN_JSON

std::string got(const Json& j) {
    return "got " + (j.is_number() ? j.dump() : std::string(j.type_name()));
}

// `keys`: the allowed keys as a message lists them ("pool, shadows, name").
bool listed(std::string_view keys, std::string_view key) {
    while (true) {
        const auto comma = keys.find(", ");
        if (keys.substr(0, comma) == key) return true;
        if (comma == std::string_view::npos) return false;
        keys.remove_prefix(comma + 2);
    }
}

void check_keys(const Json& object, const std::string& path, std::string_view keys,
                std::string_view who, bool is_route) {
    for (auto it = object.begin(); it != object.end(); ++it) {
        const auto& key = it.key();
        if ((is_route && key == "type") || listed(keys, key)) continue;
        fail(path, "unknown key " + in_quotes(key) + " (" + std::string(who) + " takes " +
                       std::string(keys) + ")");
    }
}

const Json& require(const Json& object, std::string_view key, const std::string& path,
                    std::string_view who) {
    const auto it = object.find(key);
    if (it == object.end()) fail(path, std::string(who) + " needs " + in_quotes(key));
    return *it;
}

const Json* optional(const Json& object, std::string_view key) {
    const auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
}

const std::string& string_value(const Json& j, const std::string& path) {
    if (!j.is_string()) fail(path, "expected a string, " + got(j));
    return j.get_ref<const std::string&>();
}

std::string name_value(const Json& j, const std::string& path) {
    const auto& name = string_value(j, path);
    if (name.empty()) fail(path, "a name cannot be empty");
    return name;
}

std::uint32_t u32_value(const Json& j, const std::string& path) {
    constexpr auto max = std::numeric_limits<std::uint32_t>::max();
    if (j.is_number_unsigned() && j.get<std::uint64_t>() <= max)
        return static_cast<std::uint32_t>(j.get<std::uint64_t>());
    fail(path, "expected a non-negative integer of at most " + std::to_string(max) + ", " + got(j));
}

std::vector<std::string> servers_value(const Json& j, const std::string& path) {
    if (!j.is_array()) fail(path, "expected an array of server addresses, " + got(j));
    std::vector<std::string> servers;
    for (std::size_t i = 0; i < j.size(); ++i) {
        if (!j[i].is_string())
            fail(element(path, i), "expected a server address string, " + got(j[i]));
        servers.push_back(j[i].get<std::string>());
    }
    return servers;
}

// A PoolRoute's "hash", as mcrouter reads it: a hash function's name, or an object of
// HashRoute properties. Only Ch3 placement is supported: "Ch3", {"hash_func": "Ch3"}, or {}
// (mcrouter's default hash_func); a salt or any other key is refused by name, another
// function by check_route_node.
std::string pool_hash_value(const Json& j, const std::string& path) {
    std::string hash(pool_hash);
    if (j.is_string()) {
        hash = j.get<std::string>();
    } else if (j.is_object()) {
        check_keys(j, path, "hash_func", "a PoolRoute's hash", false);
        if (const Json* f = optional(j, "hash_func"))
            hash = string_value(*f, member(path, "hash_func"));
    } else {
        fail(path, "expected \"Ch3\" or {\"hash_func\": \"Ch3\"}, " + got(j));
    }
    // Empty would mean "no hash" to RouteSpec; mcrouter refuses it as an unknown function.
    if (hash.empty()) fail(path, "unsupported hash '' " + std::string(pool_hash_message));
    return hash;
}

std::vector<double> weights_value(const Json& j, const std::string& path) {
    if (!j.is_array()) fail(path, "expected an array of weights in [0, 1], " + got(j));
    std::vector<double> weights;
    for (std::size_t i = 0; i < j.size(); ++i) {
        if (!j[i].is_number()) fail(element(path, i), "expected a number in [0, 1], " + got(j[i]));
        weights.push_back(j[i].get<double>());
    }
    return weights;
}

// mcrouter's pool options (PoolSpec says what each means in folsom).
void read_pool_options(const Json& p, const std::string& path, PoolSpec& pool) {
    if (const Json* t = optional(p, "server_timeout")) {
        const auto at = member(path, "server_timeout");
        if (!t->is_number_unsigned() || t->get<std::uint64_t>() < 1 ||
            t->get<std::uint64_t>() > 86400000)
            fail(at, "expected a timeout in milliseconds, 1 to 86400000, " + got(*t));
        pool.server_timeout = std::chrono::milliseconds(t->get<std::uint64_t>());
    }
    if (const Json* v = optional(p, "protocol")) {
        const auto at = member(path, "protocol");
        const std::string& name = string_value(*v, at);
        if (name == "ascii")
            pool.protocol = Protocol::ascii;
        else if (name == "binary")
            pool.protocol = Protocol::binary;
        else if (name == "meta")
            pool.protocol = Protocol::meta;
        else
            fail(at, "unsupported protocol " + in_quotes(name) +
                         " (supported: ascii, binary, meta; mcrouter's caret, umbrella and "
                         "thrift are not memcached's)");
    }
    if (const Json* v = optional(p, "security_mech")) {
        const auto at = member(path, "security_mech");
        const std::string& mech = string_value(*v, at);
        if (mech == "tls")
            pool.tls = true;
        else if (mech == "plain")
            pool.tls = false;
        else
            fail(at, "unsupported security_mech " + in_quotes(mech) + " (supported: tls, plain)");
    }
    if (const Json* w = optional(p, "weights"))
        pool.weights = weights_value(*w, member(path, "weights"));
    if (const Json* u = optional(p, "username"))
        pool.username = string_value(*u, member(path, "username"));
    if (const Json* w = optional(p, "password")) {
        // Never echoed: not even its type's value (got() prints numbers).
        if (!w->is_string()) fail(member(path, "password"), "expected a string");
        pool.password = w->get<std::string>();
    }
    if (const Json* k = optional(p, "keep_routing_prefix")) {
        if (!k->is_boolean())
            fail(member(path, "keep_routing_prefix"), "expected true or false, " + got(*k));
        pool.keep_routing_prefix = k->get<bool>();
    }
}

// A string that reads as a route by itself, never as the name of a named handle.
bool is_route_string(std::string_view s) {
    return s == "NullRoute" || s == "ErrorRoute" || s.starts_with("ErrorRoute|") ||
           s.starts_with("PoolRoute|") || s.starts_with("Pool|");
}

class JsonReader {
  public:
    RouteConfig read(const Json& doc);

  private:
    struct Handle {
        const Json* json = nullptr;
        std::string path;  // where it is defined: "named_handles[2]"
        enum class State { unread, reading, read } state = State::unread;
        RouteSpec spec{};
        std::size_t routes = 0;  // the nodes of `spec`, for max_routes
    };

    RouteSpec route(const Json& j, const std::string& path, int depth);
    RouteSpec route_string(const std::string& s, const std::string& path, int depth);
    RouteSpec route_object(const Json& j, const std::string& path, int depth);
    std::vector<RouteSpec> routes(const Json& j, const std::string& path, int depth);
    std::string pool_value(const Json& j, const std::string& path);
    ShadowSpec shadow(const Json& j, const std::string& path, int depth);
    const Handle& handle(const std::string& name, const std::string& path, int depth);
    void add_pool(PoolSpec pool, const std::string& path);
    void count(std::size_t added, const std::string& path);

    RouteConfig config_;
    std::set<std::string> pool_names_;
    std::map<std::string, Handle> handles_;
    std::vector<std::string> reading_;  // the named handles being read, outermost first
    // Pool routes by name, checked once every pool is known: an inline pool may be defined
    // after (or inside another handle than) a route that names it.
    std::vector<std::pair<std::string, std::string>> pool_uses_;  // {path, pool}
    std::size_t routes_ = 0;
};

RouteConfig JsonReader::read(const Json& doc) {
    constexpr std::string_view top_keys = "pools, route, named_handles";
    if (!doc.is_object()) fail("", "expected a JSON object with 'pools' and 'route', " + got(doc));
    if (doc.contains("routes"))
        fail("routes",
             "'routes' (mcrouter's routes with aliases) is not supported: use 'route' (one route "
             "tree)");
    check_keys(doc, "", top_keys, "the top level", false);

    if (const Json* pools = optional(doc, "pools")) {
        if (!pools->is_object())
            fail("pools", "expected an object (pool name -> {\"servers\": [...]}), " + got(*pools));
        for (auto it = pools->begin(); it != pools->end(); ++it) {
            const auto& name = it.key();
            if (name.empty()) fail("pools", "a pool name cannot be empty");
            const auto path = member("pools", name);
            const Json& p = it.value();
            if (!p.is_object()) fail(path, "expected a pool object, " + got(p));
            check_keys(p, path,
                       "servers, server_timeout, protocol, security_mech, weights, "
                       "keep_routing_prefix, username, password",
                       "a pool", false);
            PoolSpec pool{name, servers_value(require(p, "servers", path, "a pool"),
                                              member(path, "servers"))};
            read_pool_options(p, path, pool);
            check_pool(pool, path);
            add_pool(std::move(pool), path);
        }
    }

    if (const Json* handles = optional(doc, "named_handles")) {
        if (!handles->is_array())
            fail("named_handles", "expected an array of route objects, " + got(*handles));
        std::vector<std::string> order;
        for (std::size_t i = 0; i < handles->size(); ++i) {
            const auto path = element("named_handles", i);
            const Json& h = (*handles)[i];
            if (!h.is_object()) fail(path, "expected a route object with a 'name', " + got(h));
            auto name =
                name_value(require(h, "name", path, "a named handle"), member(path, "name"));
            if (is_route_string(name))
                fail(member(path, "name"), "a named handle cannot be called " + in_quotes(name) +
                                               ": that string already means a route");
            if (handles_.count(name) != 0)
                fail(member(path, "name"), "named handle " + in_quotes(name) + " is defined twice");
            handles_.emplace(name, Handle{&h, path});
            order.push_back(std::move(name));
        }
        // Every handle is read, used or not, so that its faults are found now.
        for (const auto& name : order)
            handle(name, handles_.at(name).path, 1);
    }

    const Json& root = require(doc, "route", "", "the top level");
    config_.route = route(root, "route", 1);

    for (const auto& [path, pool] : pool_uses_)
        if (pool_names_.count(pool) == 0) fail(path, "unknown pool " + in_quotes(pool));
    // What the JSON checks above cover, validate() covers again; it stays the one judge of
    // what a client may run.
    config_.validate();
    return std::move(config_);
}

RouteSpec JsonReader::route(const Json& j, const std::string& path, int depth) {
    if (depth > max_route_depth)
        fail(path, "routes nested more than " + std::to_string(max_route_depth) + " deep");
    if (j.is_string()) return route_string(j.get_ref<const std::string&>(), path, depth);
    if (j.is_object()) return route_object(j, path, depth);
    fail(path, "expected a route (a string or an object), " + got(j));
}

RouteSpec JsonReader::route_string(const std::string& s, const std::string& path, int depth) {
    RouteSpec r;
    r.name = path;
    const auto bar = s.find('|');
    const std::string_view head = std::string_view(s).substr(0, bar);
    const std::string_view tail =
        bar == std::string::npos ? std::string_view{} : std::string_view(s).substr(bar + 1);
    if (bar != std::string::npos && (head == "PoolRoute" || head == "Pool")) {
        if (tail.empty()) fail(path, in_quotes(s) + " names no pool");
        count(1, path);
        r.type = RouteType::pool;
        r.pool = tail;
        pool_uses_.emplace_back(path, r.pool);
        return r;
    }
    if (s == "NullRoute") {
        count(1, path);
        r.type = RouteType::null;
        return r;
    }
    if (head == "ErrorRoute") {
        count(1, path);
        r.type = RouteType::error;
        r.error_message = tail;
        return r;
    }
    if (handles_.count(s) != 0) {
        const Handle& h = handle(s, path, depth);
        count(h.routes, path);
        return h.spec;
    }
    fail(path, "unknown route " + in_quotes(s) +
                   " (a route string is PoolRoute|POOL, Pool|POOL, NullRoute, ErrorRoute, "
                   "ErrorRoute|MESSAGE or the name of a named handle)");
}

RouteSpec JsonReader::route_object(const Json& j, const std::string& path, int depth) {
    count(1, path);
    const auto type_path = member(path, "type");
    const auto& type_name = string_value(require(j, "type", path, "a route object"), type_path);
    const TypeInfo* info = find_type(type_name);
    if (!info)
        fail(type_path,
             "unknown route type " + in_quotes(type_name) + " (supported: " + type_names() + ")");
    const std::string type(info->name);
    check_keys(j, path, info->keys, type, true);

    RouteSpec r;
    r.type = info->type;
    r.name = path;
    if (const Json* name = optional(j, "name")) r.name = name_value(*name, member(path, "name"));

    const auto children = [&] {
        const auto at = member(path, "children");
        return routes(require(j, "children", path, type), at, depth);
    };
    const auto u32 = [&](std::string_view key) -> std::optional<std::uint32_t> {
        const Json* v = optional(j, key);
        if (!v) return std::nullopt;
        return u32_value(*v, member(path, key));
    };
    // A selector's policies: an object whose keys become `selectors`, in the written order.
    const auto policies = [&](std::string_view key, std::string_view fallback, bool operations) {
        if (const Json* p = optional(j, key)) {
            const auto at = member(path, key);
            if (!p->is_object())
                fail(at, std::string("expected an object (") +
                             (operations ? "operation" : "key prefix") + " -> route), " + got(*p));
            for (auto it = p->begin(); it != p->end(); ++it) {
                const auto child = member(at, it.key());
                if (operations && !is_operation(it.key()))
                    fail(child, "unknown operation " + in_quotes(it.key()) +
                                    " (operations: " + operation_list() + ")");
                r.selectors.push_back(it.key());
                r.children.push_back(route(it.value(), child, depth + 1));
            }
        }
        if (const Json* f = optional(j, fallback)) {
            r.children.push_back(route(*f, member(path, fallback), depth + 1));
            r.has_default = true;
        }
    };

    switch (r.type) {
        case RouteType::pool: {
            r.pool = pool_value(require(j, "pool", path, type), member(path, "pool"));
            if (const Json* h = optional(j, "hash"))
                r.hash_func = pool_hash_value(*h, member(path, "hash"));
            if (const Json* shadows = optional(j, "shadows")) {
                const auto at = member(path, "shadows");
                if (!shadows->is_array())
                    fail(at, "expected an array of shadows, " + got(*shadows));
                for (std::size_t i = 0; i < shadows->size(); ++i)
                    r.shadows.push_back(shadow((*shadows)[i], element(at, i), depth));
            }
            break;
        }
        case RouteType::all_sync:
        case RouteType::all_async:
        case RouteType::all_majority:
        case RouteType::all_fastest:
        case RouteType::all_initial:
            r.children = children();
            break;
        case RouteType::failover:
        case RouteType::miss_failover:
            r.children = children();
            r.failover_exptime = u32("failover_exptime");
            break;
        case RouteType::warm_up:
            r.children.push_back(
                route(require(j, "cold", path, type), member(path, "cold"), depth + 1));
            r.children.push_back(
                route(require(j, "warm", path, type), member(path, "warm"), depth + 1));
            r.exptime = u32("exptime").value_or(0);
            break;
        case RouteType::prefix_selector:
            policies("policies", "wildcard", false);
            break;
        case RouteType::operation_selector:
            policies("operation_policies", "default_policy", true);
            break;
        case RouteType::hash:
            r.children = children();
            r.hash_func = "Ch3";  // mcrouter's default
            if (const Json* f = optional(j, "hash_func"))
                r.hash_func = string_value(*f, member(path, "hash_func"));
            if (const Json* s = optional(j, "salt"))
                r.salt = string_value(*s, member(path, "salt"));
            if (const Json* w = optional(j, "weights"))
                r.weights = weights_value(*w, member(path, "weights"));
            break;
        case RouteType::null:
            break;
        case RouteType::error:
            if (const Json* m = optional(j, "response"))
                r.error_message = string_value(*m, member(path, "response"));
            break;
    }
    check_route_node(r, path);
    return r;
}

std::vector<RouteSpec> JsonReader::routes(const Json& j, const std::string& path, int depth) {
    if (!j.is_array()) fail(path, "expected an array of routes, " + got(j));
    std::vector<RouteSpec> out;
    out.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i)
        out.push_back(route(j[i], element(path, i), depth + 1));
    return out;
}

// A PoolRoute's "pool": the name of a pool, or an inline pool {"name": ..., "servers": [...]}
// that adds that pool.
std::string JsonReader::pool_value(const Json& j, const std::string& path) {
    if (j.is_string()) {
        const auto& name = j.get_ref<const std::string&>();
        if (!name.empty()) pool_uses_.emplace_back(path, name);  // empty: check_route_node says
        return name;
    }
    if (!j.is_object()) fail(path, "expected a pool name or an inline pool object, " + got(j));
    check_keys(j, path,
               "name, servers, server_timeout, protocol, security_mech, weights, "
               "keep_routing_prefix, username, password",
               "an inline pool", false);
    PoolSpec pool{
        name_value(require(j, "name", path, "an inline pool"), member(path, "name")),
        servers_value(require(j, "servers", path, "an inline pool"), member(path, "servers"))};
    read_pool_options(j, path, pool);
    check_pool(pool, path);
    auto name = pool.name;
    add_pool(std::move(pool), member(path, "name"));
    return name;
}

ShadowSpec JsonReader::shadow(const Json& j, const std::string& path, int depth) {
    if (!j.is_object()) fail(path, "expected a shadow object, " + got(j));
    check_keys(j, path, "target, key_fraction_range", "a shadow", false);
    ShadowSpec s;
    s.target.push_back(
        route(require(j, "target", path, "a shadow"), member(path, "target"), depth + 1));
    if (const Json* range = optional(j, "key_fraction_range")) {
        if (!range->is_array() || range->size() != 2 || !(*range)[0].is_number() ||
            !(*range)[1].is_number())
            fail(member(path, "key_fraction_range"), range_message);
        s.key_fraction_begin = (*range)[0].get<double>();
        s.key_fraction_end = (*range)[1].get<double>();
    }
    return s;
}

// A named handle, read the first time it is needed (handles may use handles defined after
// them) and copied from then on.
const JsonReader::Handle& JsonReader::handle(const std::string& name, const std::string& path,
                                             int depth) {
    Handle& h = handles_.at(name);
    if (h.state == Handle::State::read) return h;
    if (h.state == Handle::State::reading) {
        std::string chain;
        for (auto it = std::find(reading_.begin(), reading_.end(), name); it != reading_.end();
             ++it)
            chain += *it + " -> ";
        fail(path, "cycle through named handles: " + chain + name);
    }
    h.state = Handle::State::reading;
    reading_.push_back(name);
    const auto before = routes_;
    h.spec = route(*h.json, h.path, depth);
    h.routes = routes_ - before;
    reading_.pop_back();
    h.state = Handle::State::read;
    return h;
}

void JsonReader::add_pool(PoolSpec pool, const std::string& path) {
    if (!pool_names_.insert(pool.name).second)
        fail(path, "pool " + in_quotes(pool.name) + " is already defined");
    config_.pools.push_back(std::move(pool));
}

void JsonReader::count(std::size_t added, const std::string& path) {
    routes_ += added;
    if (routes_ > max_routes)
        fail(path, "the route tree has more than " + std::to_string(max_routes) +
                       " routes (a named handle is copied wherever it is used)");
}
#endif  // FOLSOM_HAVE_NLOHMANN_JSON

}  // namespace

std::string_view route_type_name(RouteType t) noexcept {
    const TypeInfo* info = find_type(t);
    return info ? info->name : std::string_view("UnknownRoute");
}

RouteConfig RouteConfig::parse(std::string_view json) {
#if !FOLSOM_HAVE_NLOHMANN_JSON
    (void)json;
    throw RouteConfigError("", errc::built_without_nlohmann_json);
#else
    Json doc;
    try {
        doc = Json::parse(json.begin(), json.end(), nullptr, /*allow_exceptions=*/true,
                          /*ignore_comments=*/true);
    } catch (const Json::exception& e) {
        fail("", std::string("not JSON: ") + e.what());
    }
    return JsonReader{}.read(doc);
#endif
}

RouteConfig RouteConfig::load(const std::string& path) {
    if (!FOLSOM_HAVE_NLOHMANN_JSON) throw RouteConfigError("", errc::built_without_nlohmann_json);
    const auto cannot_read = [&](int err) {
        fail("", "cannot read " + path + ": " + std::generic_category().message(err));
    };
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                         &std::fclose);
    if (!file) cannot_read(errno);
    std::string text;
    char buffer[65536];
    while (true) {
        const auto n = std::fread(buffer, 1, sizeof buffer, file.get());
        text.append(buffer, n);
        if (n < sizeof buffer) break;
    }
    if (std::ferror(file.get())) cannot_read(errno);
    return parse(text);
}

void RouteConfig::validate() const {
    PoolsByName names;
    for (std::size_t i = 0; i < pools.size(); ++i) {
        const auto& p = pools[i];
        if (p.name.empty()) fail(element("pools", i), "a pool needs a name");
        const auto path = member("pools", p.name);
        if (!names.emplace(p.name, &p).second)
            fail(path, "pool " + in_quotes(p.name) + " is defined twice");
        check_pool(p, path);
    }
    Placements placements;
    validate_route(route, "route", names, placements, 1);
}

}  // namespace folsom
