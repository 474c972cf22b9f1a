// RouteConfig: mcrouter-shaped JSON read into route trees, the folsom::routes builders, and
// validate(); every refusal is checked by its exact one-line message, since the message (with
// its JSON path) is what a user reads to find the fault.
#include "folsom/error.hpp"
#include "folsom/options.hpp"
#include "folsom/routes.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace {

using folsom::PoolSpec;
using folsom::RouteConfig;
using folsom::RouteConfigError;
using folsom::RouteSpec;
using folsom::RouteType;
using folsom::ShadowSpec;
using testing::EndsWith;
using testing::HasSubstr;
using testing::StartsWith;
namespace routes = folsom::routes;

// Every field of a tree, one node per line: a readable diff when two trees differ.
void render(const RouteSpec& r, const std::string& indent, std::string& out) {
    out += indent + std::string(folsom::route_type_name(r.type)) + " name=" + r.name;
    if (!r.pool.empty()) out += " pool=" + r.pool;
    if (!r.selectors.empty()) {
        out += " selectors=";
        for (const auto& s : r.selectors)
            out += s + ",";
    }
    if (r.has_default) out += " has_default";
    if (r.failover_exptime) out += " failover_exptime=" + std::to_string(*r.failover_exptime);
    if (r.exptime != 0) out += " exptime=" + std::to_string(r.exptime);
    if (!r.hash_func.empty()) out += " hash_func=" + r.hash_func;
    if (!r.salt.empty()) out += " salt=" + r.salt;
    if (!r.weights.empty()) {
        out += " weights=";
        for (double w : r.weights)
            out += std::to_string(w) + ",";
    }
    if (!r.error_message.empty()) out += " error_message=" + r.error_message;
    out += "\n";
    for (const auto& s : r.shadows) {
        out += indent + "  shadow [" + std::to_string(s.key_fraction_begin) + ", " +
               std::to_string(s.key_fraction_end) + ")\n";
        for (const auto& t : s.target)
            render(t, indent + "    ", out);
    }
    for (const auto& c : r.children)
        render(c, indent + "  ", out);
}

std::string render(const RouteSpec& r) {
    std::string out;
    render(r, "", out);
    return out;
}

std::string render(const std::vector<PoolSpec>& pools) {
    std::string out;
    for (const auto& p : pools) {
        out += p.name + ":";
        for (const auto& s : p.servers)
            out += " " + s;
        out += "\n";
    }
    return out;
}

// The message of the RouteConfigError that parsing `json` throws.
std::string parse_error(std::string_view json) {
    try {
        RouteConfig::parse(json);
    } catch (const RouteConfigError& e) {
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
        EXPECT_EQ(e.code(), folsom::errc::invalid_argument);
        EXPECT_THAT(e.message(), StartsWith(e.path()));
        return e.message();
    }
    ADD_FAILURE() << "parsed without error: " << json;
    return {};
}

std::string validate_error(const RouteConfig& config) {
    try {
        config.validate();
    } catch (const RouteConfigError& e) {
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
        EXPECT_THAT(e.message(), StartsWith(e.path()));
        return e.message();
    }
    ADD_FAILURE() << "validated without error";
    return {};
}

// A config whose pools are A and B (one server each) and whose route is `route`.
std::string with_route(std::string_view route) {
    return R"({"pools": {"A": {"servers": ["127.0.0.1:11211"]},
                         "B": {"servers": ["127.0.0.1:11212"]}},
               "route": )" +
           std::string(route) + "}";
}

std::vector<PoolSpec> two_pools() {
    return {{"A", {"127.0.0.1:11211"}}, {"B", {"127.0.0.1:11212"}}};
}

RouteConfig with_tree(RouteSpec route) {
    return RouteConfig{two_pools(), std::move(route)};
}

// ---- JSON that reads --------------------------------------------------------------------------

TEST(RouteConfigParse, IssueExampleBecomesTheExpectedTree) {
    const auto config = RouteConfig::parse(R"(
        {"pools": {"A": {"servers": ["127.0.0.1:11211", "127.0.0.1:11212"]},
                   "B": {"servers": ["127.0.0.1:11213"]}},
         "route": {"type": "OperationSelectorRoute",
                   "operation_policies": {"get": {"type": "MissFailoverRoute",
                                                  "children": ["PoolRoute|A", "PoolRoute|B"]}},
                   "default_policy": {"type": "AllSyncRoute",
                                      "children": ["PoolRoute|A", "PoolRoute|B"]}}})");
    EXPECT_EQ(render(config.pools), "A: 127.0.0.1:11211 127.0.0.1:11212\nB: 127.0.0.1:11213\n");
    using routes::named;
    const auto get = "route.operation_policies.get";
    const auto expected = named(
        "route",
        routes::operation_selector(
            {{"get",
              named(get, routes::miss_failover(
                             {named(get + std::string(".children[0]"), routes::pool("A")),
                              named(get + std::string(".children[1]"), routes::pool("B"))}))}},
            named(
                "route.default_policy",
                routes::all_sync({named("route.default_policy.children[0]", routes::pool("A")),
                                  named("route.default_policy.children[1]", routes::pool("B"))}))));
    EXPECT_EQ(render(config.route), render(expected));
    EXPECT_EQ(config.route.selectors, std::vector<std::string>{"get"});
    EXPECT_TRUE(config.route.has_default);
    EXPECT_NO_THROW(config.validate());
}

TEST(RouteConfigParse, StringShorthands) {
    const auto config = RouteConfig::parse(with_route(R"(
        {"type": "AllSyncRoute",
         "children": ["PoolRoute|A", "Pool|B", "NullRoute", "ErrorRoute", "ErrorRoute|a: b|c"]})"));
    ASSERT_EQ(config.route.children.size(), 5u);
    const auto& c = config.route.children;
    EXPECT_EQ(c[0].type, RouteType::pool);
    EXPECT_EQ(c[0].pool, "A");
    EXPECT_EQ(c[0].name, "route.children[0]");
    EXPECT_EQ(c[1].type, RouteType::pool);
    EXPECT_EQ(c[1].pool, "B");
    EXPECT_EQ(c[2].type, RouteType::null);
    EXPECT_EQ(c[2].name, "route.children[2]");
    EXPECT_EQ(c[3].type, RouteType::error);
    EXPECT_EQ(c[3].error_message, "");
    EXPECT_EQ(c[4].type, RouteType::error);
    EXPECT_EQ(c[4].error_message, "a: b|c");

    const auto top = RouteConfig::parse(with_route(R"("PoolRoute|B")"));
    EXPECT_EQ(render(top.route), render(routes::named("route", routes::pool("B"))));
}

TEST(RouteConfigParse, PoolsAreOptionalAndKeepTheirOrder) {
    EXPECT_EQ(render(RouteConfig::parse(R"({"route": "NullRoute"})").route),
              "NullRoute name=route\n");
    const auto config = RouteConfig::parse(R"({"pools": {"Z": {"servers": ["z:1"]},
                                                         "A": {"servers": ["a:1", "/run/mc.sock"]},
                                                         "unused": {"servers": ["u:1"]}},
                                               "route": "PoolRoute|A"})");
    EXPECT_EQ(render(config.pools), "Z: z:1\nA: a:1 /run/mc.sock\nunused: u:1\n");
}

TEST(RouteConfigParse, CommentsAreAllowed) {
    const auto config = RouteConfig::parse(R"(
        // mcrouter configs carry C++ comments
        {"pools": {"A": {"servers": [/* the only one */ "127.0.0.1:11211"]}},
         "route": "PoolRoute|A"  // all of it
        })");
    EXPECT_EQ(config.route.pool, "A");
}

TEST(RouteConfigParse, ObjectRoutesTakeANameAsTheirLabel) {
    const auto config = RouteConfig::parse(with_route(R"(
        {"type": "FailoverRoute", "name": "primary-then-backup",
         "children": [{"type": "PoolRoute", "pool": "A", "name": "primary"}, "PoolRoute|B"]})"));
    EXPECT_EQ(config.route.name, "primary-then-backup");
    EXPECT_EQ(config.route.children[0].name, "primary");
    EXPECT_EQ(config.route.children[1].name, "route.children[1]");
}

TEST(RouteConfigParse, NamedHandlesAreCopiedWhereTheyAreUsed) {
    const auto config = RouteConfig::parse(R"(
        {"pools": {"A": {"servers": ["127.0.0.1:11211"]}, "B": {"servers": ["127.0.0.1:11212"]}},
         "named_handles": [
             {"name": "both", "type": "AllSyncRoute", "children": ["PoolRoute|A", "b"]},
             {"name": "b", "type": "PoolRoute", "pool": "B"},
             {"name": "never-used", "type": "NullRoute"}],
         "route": {"type": "PrefixSelectorRoute",
                   "policies": {"x:": "both", "y:": "b"},
                   "wildcard": "both"}})");
    const auto both = routes::named(
        "both", routes::all_sync({routes::named("named_handles[0].children[0]", routes::pool("A")),
                                  routes::named("b", routes::pool("B"))}));
    const auto expected = routes::named(
        "route", routes::prefix_selector(
                     {{"x:", both}, {"y:", routes::named("b", routes::pool("B"))}}, both));
    EXPECT_EQ(render(config.route), render(expected));
    EXPECT_EQ(config.route.selectors, (std::vector<std::string>{"x:", "y:"}));
}

TEST(RouteConfigParse, TheRouteMayBeANamedHandle) {
    const auto config = RouteConfig::parse(R"(
        {"named_handles": [{"name": "nothing", "type": "ErrorRoute", "response": "closed"}],
         "route": "nothing"})");
    EXPECT_EQ(render(config.route), "ErrorRoute name=nothing error_message=closed\n");
}

TEST(RouteConfigParse, InlinePoolsAddAPool) {
    const auto config = RouteConfig::parse(R"(
        {"pools": {"A": {"servers": ["127.0.0.1:11211"]}},
         "route": {"type": "AllSyncRoute",
                   "children": ["PoolRoute|C",
                                {"type": "PoolRoute",
                                 "pool": {"name": "C", "servers": ["127.0.0.1:11300"]}},
                                "PoolRoute|A"]}})");
    EXPECT_EQ(render(config.pools), "A: 127.0.0.1:11211\nC: 127.0.0.1:11300\n");
    ASSERT_EQ(config.route.children.size(), 3u);
    EXPECT_EQ(config.route.children[0].pool, "C");  // named before it is defined: fine
    EXPECT_EQ(config.route.children[1].pool, "C");
    EXPECT_EQ(config.route.children[1].name, "route.children[1]");
}

TEST(RouteConfigParse, EveryRouteType) {
    const auto config = RouteConfig::parse(with_route(R"(
        {"type": "AllSyncRoute", "children": [
            {"type": "PoolRoute", "pool": "A",
             "shadows": [{"target": "PoolRoute|B", "key_fraction_range": [0.25, 0.5]},
                         {"target": {"type": "AllAsyncRoute", "children": ["PoolRoute|B"]}}]},
            {"type": "AllAsyncRoute", "children": ["PoolRoute|A"]},
            {"type": "AllMajorityRoute", "children": ["PoolRoute|A", "PoolRoute|B", "NullRoute"]},
            {"type": "AllFastestRoute", "children": ["PoolRoute|A"]},
            {"type": "AllInitialRoute", "children": ["PoolRoute|A", "PoolRoute|B"]},
            {"type": "FailoverRoute", "children": ["PoolRoute|A", "PoolRoute|B"]},
            {"type": "MissFailoverRoute", "children": ["PoolRoute|A"], "failover_exptime": 60},
            {"type": "WarmUpRoute", "cold": "PoolRoute|A", "warm": "PoolRoute|B", "exptime": 300},
            {"type": "WarmUpRoute", "cold": "PoolRoute|A", "warm": "PoolRoute|B"},
            {"type": "PrefixSelectorRoute", "policies": {"a:": "PoolRoute|A", "b:": "PoolRoute|B"}},
            {"type": "PrefixSelectorRoute", "wildcard": "PoolRoute|A"},
            {"type": "OperationSelectorRoute",
             "operation_policies": {"set": "PoolRoute|A", "delete": "PoolRoute|B"}},
            {"type": "HashRoute", "children": ["PoolRoute|A", "PoolRoute|B"]},
            {"type": "HashRoute", "children": ["PoolRoute|A"], "hash_func": "Md5", "salt": "s1"},
            {"type": "HashRoute", "children": ["PoolRoute|A", "PoolRoute|B"],
             "hash_func": "WeightedCh3", "weights": [1, 0.25]},
            {"type": "NullRoute"},
            {"type": "ErrorRoute"},
            {"type": "ErrorRoute", "response": "maintenance"}]})"));
    EXPECT_EQ(render(config.route),
              "AllSyncRoute name=route\n"
              "  PoolRoute name=route.children[0] pool=A\n"
              "    shadow [0.250000, 0.500000)\n"
              "      PoolRoute name=route.children[0].shadows[0].target pool=B\n"
              "    shadow [0.000000, 1.000000)\n"
              "      AllAsyncRoute name=route.children[0].shadows[1].target\n"
              "        PoolRoute name=route.children[0].shadows[1].target.children[0] pool=B\n"
              "  AllAsyncRoute name=route.children[1]\n"
              "    PoolRoute name=route.children[1].children[0] pool=A\n"
              "  AllMajorityRoute name=route.children[2]\n"
              "    PoolRoute name=route.children[2].children[0] pool=A\n"
              "    PoolRoute name=route.children[2].children[1] pool=B\n"
              "    NullRoute name=route.children[2].children[2]\n"
              "  AllFastestRoute name=route.children[3]\n"
              "    PoolRoute name=route.children[3].children[0] pool=A\n"
              "  AllInitialRoute name=route.children[4]\n"
              "    PoolRoute name=route.children[4].children[0] pool=A\n"
              "    PoolRoute name=route.children[4].children[1] pool=B\n"
              "  FailoverRoute name=route.children[5]\n"
              "    PoolRoute name=route.children[5].children[0] pool=A\n"
              "    PoolRoute name=route.children[5].children[1] pool=B\n"
              "  MissFailoverRoute name=route.children[6] failover_exptime=60\n"
              "    PoolRoute name=route.children[6].children[0] pool=A\n"
              "  WarmUpRoute name=route.children[7] exptime=300\n"
              "    PoolRoute name=route.children[7].cold pool=A\n"
              "    PoolRoute name=route.children[7].warm pool=B\n"
              "  WarmUpRoute name=route.children[8]\n"
              "    PoolRoute name=route.children[8].cold pool=A\n"
              "    PoolRoute name=route.children[8].warm pool=B\n"
              "  PrefixSelectorRoute name=route.children[9] selectors=a:,b:,\n"
              "    PoolRoute name=route.children[9].policies.a: pool=A\n"
              "    PoolRoute name=route.children[9].policies.b: pool=B\n"
              "  PrefixSelectorRoute name=route.children[10] has_default\n"
              "    PoolRoute name=route.children[10].wildcard pool=A\n"
              "  OperationSelectorRoute name=route.children[11] selectors=set,delete,\n"
              "    PoolRoute name=route.children[11].operation_policies.set pool=A\n"
              "    PoolRoute name=route.children[11].operation_policies.delete pool=B\n"
              "  HashRoute name=route.children[12] hash_func=Ch3\n"
              "    PoolRoute name=route.children[12].children[0] pool=A\n"
              "    PoolRoute name=route.children[12].children[1] pool=B\n"
              "  HashRoute name=route.children[13] hash_func=Md5 salt=s1\n"
              "    PoolRoute name=route.children[13].children[0] pool=A\n"
              "  HashRoute name=route.children[14] hash_func=WeightedCh3 "
              "weights=1.000000,0.250000,\n"
              "    PoolRoute name=route.children[14].children[0] pool=A\n"
              "    PoolRoute name=route.children[14].children[1] pool=B\n"
              "  NullRoute name=route.children[15]\n"
              "  ErrorRoute name=route.children[16]\n"
              "  ErrorRoute name=route.children[17] error_message=maintenance\n");
    EXPECT_FALSE(config.route.children[5].failover_exptime.has_value());
}

TEST(RouteConfigParse, LargestExptimeIsAccepted) {
    const auto config = RouteConfig::parse(with_route(
        R"({"type": "FailoverRoute", "children": ["NullRoute"], "failover_exptime": 4294967295})"));
    EXPECT_EQ(config.route.failover_exptime, 4294967295u);
}

TEST(RouteConfigParse, RouteTypeNames) {
    const std::vector<std::pair<RouteType, std::string_view>> names = {
        {RouteType::pool, "PoolRoute"},
        {RouteType::all_sync, "AllSyncRoute"},
        {RouteType::all_async, "AllAsyncRoute"},
        {RouteType::all_majority, "AllMajorityRoute"},
        {RouteType::all_fastest, "AllFastestRoute"},
        {RouteType::all_initial, "AllInitialRoute"},
        {RouteType::failover, "FailoverRoute"},
        {RouteType::miss_failover, "MissFailoverRoute"},
        {RouteType::warm_up, "WarmUpRoute"},
        {RouteType::prefix_selector, "PrefixSelectorRoute"},
        {RouteType::operation_selector, "OperationSelectorRoute"},
        {RouteType::hash, "HashRoute"},
        {RouteType::null, "NullRoute"},
        {RouteType::error, "ErrorRoute"},
    };
    for (const auto& [type, name] : names)
        EXPECT_EQ(folsom::route_type_name(type), name);
}

// ---- JSON that is refused ---------------------------------------------------------------------

TEST(RouteConfigParseError, NotJson) {
    for (std::string_view text :
         {"", "{", "{\"route\": }", "{\"route\": \"NullRoute\",}", "{\n\"route\":\n\n nope}"}) {
        const auto message = parse_error(text);
        EXPECT_THAT(message, StartsWith("not JSON: [json.exception.parse_error.101] parse error"))
            << text;
    }
    try {
        RouteConfig::parse("{");
    } catch (const RouteConfigError& e) {
        EXPECT_EQ(e.path(), "");
    }
}

TEST(RouteConfigParseError, TopLevel) {
    EXPECT_EQ(parse_error("[1]"), "expected a JSON object with 'pools' and 'route', got array");
    EXPECT_EQ(parse_error(R"({"pools": {}})"), "the top level needs 'route'");
    EXPECT_EQ(parse_error(R"({"route": "NullRoute", "extra": 1})"),
              "unknown key 'extra' (the top level takes pools, route, named_handles)");
    EXPECT_EQ(
        parse_error(R"({"pools": {}, "routes": [{"aliases": ["/a/a/"], "route": "NullRoute"}]})"),
        "routes: 'routes' (mcrouter's routes with aliases) is not supported: use 'route' "
        "(one route tree)");
}

TEST(RouteConfigParseError, UnknownRouteType) {
    EXPECT_EQ(parse_error(with_route(R"({"type": "AllSyncRoute", "children": [
                                          "PoolRoute|A", {"type": "LatestRoute"}]})")),
              "route.children[1].type: unknown route type 'LatestRoute' (supported: PoolRoute, "
              "AllSyncRoute, AllAsyncRoute, AllMajorityRoute, AllFastestRoute, AllInitialRoute, "
              "FailoverRoute, MissFailoverRoute, WarmUpRoute, PrefixSelectorRoute, "
              "OperationSelectorRoute, HashRoute, NullRoute, ErrorRoute)");
    EXPECT_EQ(parse_error(with_route(R"({"children": []})")), "route: a route object needs 'type'");
    EXPECT_EQ(parse_error(with_route(R"({"type": 7})")), "route.type: expected a string, got 7");
}

TEST(RouteConfigParseError, UnknownRouteString) {
    const std::string forms =
        " (a route string is PoolRoute|POOL, Pool|POOL, NullRoute, ErrorRoute, "
        "ErrorRoute|MESSAGE or the name of a named handle)";
    EXPECT_EQ(parse_error(with_route(R"({"type": "AllSyncRoute", "children": ["AllSyncRoute"]})")),
              "route.children[0]: unknown route 'AllSyncRoute'" + forms);
    EXPECT_EQ(parse_error(with_route(R"("HostIdRoute|A")")),
              "route: unknown route 'HostIdRoute|A'" + forms);
    EXPECT_EQ(parse_error(with_route(R"("PoolRoute|")")), "route: 'PoolRoute|' names no pool");
}

TEST(RouteConfigParseError, ChildNamingNoPool) {
    EXPECT_EQ(parse_error(with_route(
                  R"({"type": "AllSyncRoute", "children": ["PoolRoute|A", "PoolRoute|C"]})")),
              "route.children[1]: unknown pool 'C'");
    EXPECT_EQ(parse_error(with_route(R"({"type": "PoolRoute", "pool": "C"})")),
              "route.pool: unknown pool 'C'");
    EXPECT_EQ(parse_error(with_route(R"({"type": "PoolRoute", "pool": ""})")),
              "route.pool: PoolRoute needs a pool");
    EXPECT_EQ(parse_error(with_route(R"({"type": "PoolRoute", "pool": 3})")),
              "route.pool: expected a pool name or an inline pool object, got 3");
    EXPECT_EQ(parse_error(with_route(R"({"type": "PoolRoute"})")), "route: PoolRoute needs 'pool'");
    // In a named handle, the fault is where the handle is defined.
    EXPECT_EQ(parse_error(R"({"named_handles": [{"name": "h", "type": "FailoverRoute",
                                                 "children": ["NullRoute", "Pool|X"]}],
                              "route": "h"})"),
              "named_handles[0].children[1]: unknown pool 'X'");
}

TEST(RouteConfigParseError, CycleThroughNamedHandles) {
    EXPECT_EQ(parse_error(R"({"named_handles": [
                                {"name": "A", "type": "AllSyncRoute", "children": ["B"]},
                                {"name": "B", "type": "FailoverRoute", "children": ["NullRoute", "A"]}],
                              "route": "A"})"),
              "named_handles[1].children[1]: cycle through named handles: A -> B -> A");
    EXPECT_EQ(parse_error(R"({"named_handles": [
                                {"name": "A", "type": "WarmUpRoute", "cold": "NullRoute", "warm": "A"}],
                              "route": "NullRoute"})"),
              "named_handles[0].warm: cycle through named handles: A -> A");
}

TEST(RouteConfigParseError, NamedHandles) {
    EXPECT_EQ(parse_error(R"({"named_handles": {"h": "NullRoute"}, "route": "NullRoute"})"),
              "named_handles: expected an array of route objects, got object");
    EXPECT_EQ(parse_error(R"({"named_handles": ["NullRoute"], "route": "NullRoute"})"),
              "named_handles[0]: expected a route object with a 'name', got string");
    EXPECT_EQ(parse_error(R"({"named_handles": [{"type": "NullRoute"}], "route": "NullRoute"})"),
              "named_handles[0]: a named handle needs 'name'");
    EXPECT_EQ(parse_error(R"({"named_handles": [{"type": "NullRoute", "name": ""}],
                              "route": "NullRoute"})"),
              "named_handles[0].name: a name cannot be empty");
    EXPECT_EQ(parse_error(R"({"named_handles": [{"type": "NullRoute", "name": "h"},
                                                {"type": "ErrorRoute", "name": "h"}],
                              "route": "h"})"),
              "named_handles[1].name: named handle 'h' is defined twice");
    EXPECT_EQ(parse_error(R"({"named_handles": [{"type": "ErrorRoute", "name": "NullRoute"}],
                              "route": "NullRoute"})"),
              "named_handles[0].name: a named handle cannot be called 'NullRoute': that string "
              "already means a route");
    // A handle nobody uses is still checked.
    EXPECT_EQ(parse_error(R"({"named_handles": [{"type": "AllSyncRoute", "name": "h",
                                                 "children": []}],
                              "route": "NullRoute"})"),
              "named_handles[0].children: AllSyncRoute needs at least one child");
}

TEST(RouteConfigParseError, BadServerAddress) {
    EXPECT_EQ(parse_error(R"({"pools": {"A": {"servers": ["127.0.0.1:11211", "host:0"]}},
                              "route": "PoolRoute|A"})"),
              "pools.A.servers[1]: bad server address 'host:0': expected HOST[:PORT[:WEIGHT]], "
              "[IPV6][:PORT[:WEIGHT]] or /SOCKET/PATH[/?WEIGHT]");
    EXPECT_EQ(parse_error(R"({"pools": {"A": {"servers": []}}, "route": "NullRoute"})"),
              "pools.A.servers: a pool needs at least one server");
    EXPECT_EQ(parse_error(R"({"pools": {"A": {"servers": "a:1"}}, "route": "NullRoute"})"),
              "pools.A.servers: expected an array of server addresses, got string");
    EXPECT_EQ(parse_error(R"({"pools": {"A": {"servers": ["a:1", 11211]}}, "route": "NullRoute"})"),
              "pools.A.servers[1]: expected a server address string, got 11211");
    EXPECT_EQ(parse_error(R"({"pools": {"A": {}}, "route": "NullRoute"})"),
              "pools.A: a pool needs 'servers'");
    EXPECT_EQ(parse_error(R"({"pools": {"A": ["a:1"]}, "route": "NullRoute"})"),
              "pools.A: expected a pool object, got array");
    EXPECT_EQ(parse_error(R"({"pools": ["a:1"], "route": "NullRoute"})"),
              "pools: expected an object (pool name -> {\"servers\": [...]}), got array");
    EXPECT_EQ(parse_error(R"({"pools": {"": {"servers": ["a:1"]}}, "route": "NullRoute"})"),
              "pools: a pool name cannot be empty");
}

TEST(RouteConfigParseError, InlinePools) {
    EXPECT_EQ(parse_error(with_route(
                  R"({"type": "PoolRoute", "pool": {"name": "A", "servers": ["127.0.0.1:1"]}})")),
              "route.pool.name: pool 'A' is already defined");
    EXPECT_EQ(parse_error(with_route(R"({"type": "PoolRoute", "pool": {"servers": ["a:1"]}})")),
              "route.pool: an inline pool needs 'name'");
    EXPECT_EQ(parse_error(with_route(
                  R"({"type": "PoolRoute", "pool": {"name": "C", "servers": ["a:1", "a:x"]}})")),
              "route.pool.servers[1]: bad server address 'a:x': expected HOST[:PORT[:WEIGHT]], "
              "[IPV6][:PORT[:WEIGHT]] or /SOCKET/PATH[/?WEIGHT]");
    EXPECT_EQ(parse_error(with_route(R"({"type": "PoolRoute",
                                         "pool": {"name": "C", "servers": ["a:1"], "hash": "ch3"}})")),
              "route.pool: unknown key 'hash' (an inline pool takes name, servers, server_timeout, "
              "protocol, security_mech, weights, keep_routing_prefix, username, password)");
}

TEST(RouteConfigParseError, UnknownKeys) {
    EXPECT_EQ(parse_error(with_route(R"({"type": "PoolRoute", "pool": "A", "rates": {}})")),
              "route: unknown key 'rates' (PoolRoute takes pool, shadows, hash, name)");
    EXPECT_EQ(parse_error(R"({"pools": {"A": {"servers": ["a:1"], "failover_policy": {}}},
                              "route": "PoolRoute|A"})"),
              "pools.A: unknown key 'failover_policy' (a pool takes servers, server_timeout, "
              "protocol, security_mech, weights, keep_routing_prefix, username, password)");
    EXPECT_EQ(parse_error(with_route(R"({"type": "PoolRoute", "pool": "A",
                                         "shadows": [{"target": "PoolRoute|B",
                                                      "index_range": [0, 1]}]})")),
              "route.shadows[0]: unknown key 'index_range' (a shadow takes target, "
              "key_fraction_range)");
    EXPECT_EQ(parse_error(with_route(R"({"type": "FailoverRoute", "children": ["PoolRoute|A"],
                                         "failover_errors": ["tko"]})")),
              "route: unknown key 'failover_errors' (FailoverRoute takes children, "
              "failover_exptime, name)");
    EXPECT_EQ(parse_error(with_route(R"({"type": "NullRoute", "response": "x"})")),
              "route: unknown key 'response' (NullRoute takes name)");
    EXPECT_EQ(
        parse_error(with_route(R"({"type": "WarmUpRoute", "cold": "PoolRoute|A",
                                         "warm": "PoolRoute|B", "failover_exptime": 1})")),
        "route: unknown key 'failover_exptime' (WarmUpRoute takes cold, warm, exptime, name)");
}

TEST(RouteConfigParseError, WrongTypes) {
    EXPECT_EQ(
        parse_error(with_route(R"({"type": "AllSyncRoute", "children": {"a": "NullRoute"}})")),
        "route.children: expected an array of routes, got object");
    EXPECT_EQ(parse_error(with_route(R"({"type": "AllSyncRoute", "children": [true]})")),
              "route.children[0]: expected a route (a string or an object), got boolean");
    EXPECT_EQ(parse_error(with_route(R"(42)")),
              "route: expected a route (a string or an object), got 42");
    const std::string u32 = "expected a non-negative integer of at most 4294967295, got ";
    EXPECT_EQ(parse_error(with_route(R"({"type": "WarmUpRoute", "cold": "PoolRoute|A",
                                         "warm": "PoolRoute|B", "exptime": "60"})")),
              "route.exptime: " + u32 + "string");
    for (std::string_view bad : {"-1", "4294967296", "1.5", "null"}) {
        EXPECT_EQ(parse_error(with_route(R"({"type": "FailoverRoute", "children": ["PoolRoute|A"],
                                             "failover_exptime": )" +
                                         std::string(bad) + "}")),
                  "route.failover_exptime: " + u32 + std::string(bad));
    }
    EXPECT_EQ(parse_error(with_route(R"({"type": "NullRoute", "name": 1})")),
              "route.name: expected a string, got 1");
    EXPECT_EQ(parse_error(with_route(R"({"type": "NullRoute", "name": ""})")),
              "route.name: a name cannot be empty");
    EXPECT_EQ(parse_error(with_route(R"({"type": "ErrorRoute", "response": ["x"]})")),
              "route.response: expected a string, got array");
    EXPECT_EQ(parse_error(with_route(R"({"type": "HashRoute", "children": ["NullRoute"],
                                         "salt": 5})")),
              "route.salt: expected a string, got 5");
    EXPECT_EQ(parse_error(with_route(R"({"type": "PrefixSelectorRoute", "policies": ["a:"]})")),
              "route.policies: expected an object (key prefix -> route), got array");
    EXPECT_EQ(parse_error(with_route(R"({"type": "OperationSelectorRoute",
                                         "operation_policies": "PoolRoute|A"})")),
              "route.operation_policies: expected an object (operation -> route), got string");
    EXPECT_EQ(parse_error(with_route(R"({"type": "PoolRoute", "pool": "A", "shadows": {}})")),
              "route.shadows: expected an array of shadows, got object");
    EXPECT_EQ(parse_error(with_route(R"({"type": "PoolRoute", "pool": "A", "shadows": ["B"]})")),
              "route.shadows[0]: expected a shadow object, got string");
}

TEST(RouteConfigParseError, MissingOrEmptyChildren) {
    EXPECT_EQ(parse_error(with_route(R"({"type": "AllSyncRoute"})")),
              "route: AllSyncRoute needs 'children'");
    EXPECT_EQ(parse_error(with_route(R"({"type": "AllMajorityRoute", "children": []})")),
              "route.children: AllMajorityRoute needs at least one child");
    EXPECT_EQ(parse_error(with_route(R"({"type": "HashRoute", "children": []})")),
              "route.children: HashRoute needs at least one child");
    EXPECT_EQ(parse_error(with_route(R"({"type": "WarmUpRoute", "cold": "PoolRoute|A"})")),
              "route: WarmUpRoute needs 'warm'");
    EXPECT_EQ(parse_error(with_route(R"({"type": "PrefixSelectorRoute", "policies": {}})")),
              "route: PrefixSelectorRoute needs policies or a wildcard");
    EXPECT_EQ(parse_error(with_route(R"({"type": "OperationSelectorRoute"})")),
              "route: OperationSelectorRoute needs operation_policies or a default_policy");
    EXPECT_EQ(parse_error(with_route(R"({"type": "PoolRoute", "pool": "A", "shadows": [{}]})")),
              "route.shadows[0]: a shadow needs 'target'");
}

TEST(RouteConfigParseError, BadKeyFractionRange) {
    const auto config = [](std::string_view range) {
        return with_route(R"({"type": "PoolRoute", "pool": "A",
                              "shadows": [{"target": "PoolRoute|B", "key_fraction_range": )" +
                          std::string(range) + "}]}");
    };
    for (std::string_view bad : {"[0.5, 0.2]", "[0, 2]", "[-0.1, 0.5]", "[0]", "[0, 0.5, 1]",
                                 "[\"0\", \"1\"]", "0.5", "{\"begin\": 0}"}) {
        EXPECT_EQ(parse_error(config(bad)),
                  "route.shadows[0].key_fraction_range: expected [begin, end] with 0 <= begin <= "
                  "end <= 1")
            << bad;
    }
    const auto ok = RouteConfig::parse(config("[0, 0]"));
    EXPECT_EQ(ok.route.shadows.at(0).key_fraction_end, 0.0);
    const auto all = RouteConfig::parse(config("[0, 1]"));
    EXPECT_EQ(all.route.shadows.at(0).key_fraction_end, 1.0);
}

TEST(RouteConfigParseError, UnknownOperation) {
    EXPECT_EQ(parse_error(with_route(R"({"type": "OperationSelectorRoute",
                                         "operation_policies": {"get": "PoolRoute|A",
                                                                "fetch": "PoolRoute|B"}})")),
              "route.operation_policies.fetch: unknown operation 'fetch' (operations: get, gets, "
              "gat, gats, set, add, replace, append, prepend, cas, delete, incr, decr, touch)");
}

TEST(RouteConfigParseError, UnsupportedHashFunc) {
    // mcrouter's names are case-sensitive, and its other functions are not supported.
    for (std::string_view bad : {"ch3", "crc32", "", "WeightedCh4", "Rendezvous", "ConstShard"}) {
        EXPECT_EQ(parse_error(with_route(R"({"type": "HashRoute", "children": ["PoolRoute|A"],
                                             "hash_func": ")" +
                                         std::string(bad) + "\"}")),
                  "route.hash_func: unsupported hash_func '" + std::string(bad) +
                      "' (supported: Ch3, WeightedCh3, Crc32, Md5)");
    }
}

TEST(RouteConfigParse, HashRouteDefaultsToCh3AsMcrouterDoes) {
    const auto config = RouteConfig::parse(
        with_route(R"({"type": "HashRoute", "children": ["PoolRoute|A", "PoolRoute|B"]})"));
    EXPECT_EQ(config.route.hash_func, "Ch3");
    EXPECT_TRUE(config.route.weights.empty());
}

TEST(RouteConfigParseError, WeightedCh3) {
    const auto weighted = [](std::string_view tail) {
        return with_route(R"({"type": "HashRoute", "children": ["PoolRoute|A", "PoolRoute|B"], )" +
                          std::string(tail) + "}");
    };
    EXPECT_EQ(parse_error(weighted(R"("hash_func": "WeightedCh3")")),
              "route.weights: WeightedCh3 needs one weight per child (0 weights, 2 children)");
    EXPECT_EQ(parse_error(weighted(R"("hash_func": "WeightedCh3", "weights": [1])")),
              "route.weights: WeightedCh3 needs one weight per child (1 weights, 2 children)");
    EXPECT_EQ(parse_error(weighted(R"("hash_func": "WeightedCh3", "weights": [1, 1.5])")),
              "route.weights[1]: a weight is a number in [0, 1]");
    EXPECT_EQ(parse_error(weighted(R"("hash_func": "WeightedCh3", "weights": [-0.1, 1])")),
              "route.weights[0]: a weight is a number in [0, 1]");
    EXPECT_EQ(parse_error(weighted(R"("hash_func": "WeightedCh3", "weights": [1, "1"])")),
              "route.weights[1]: expected a number in [0, 1], got string");
    EXPECT_EQ(parse_error(weighted(R"("hash_func": "WeightedCh3", "weights": 1)")),
              "route.weights: expected an array of weights in [0, 1], got 1");
    EXPECT_EQ(parse_error(weighted(R"("weights": [1, 1])")),
              "route.weights: only hash_func WeightedCh3 takes weights");
}

// mcrouter's PoolRoute "hash": a function's name or an object of HashRoute properties. Only
// Ch3 is supported: it makes the pool place keys as mcrouter does.
TEST(RouteConfigParse, PoolRouteHashCh3) {
    for (std::string_view hash : {R"("Ch3")", R"({"hash_func": "Ch3"})", R"({})"}) {
        SCOPED_TRACE(hash);
        const auto config = RouteConfig::parse(
            with_route(R"({"type": "PoolRoute", "pool": "A", "hash": )" + std::string(hash) + "}"));
        EXPECT_EQ(render(config.route), "PoolRoute name=route pool=A hash_func=Ch3\n");
    }
    // Without "hash", Options::distribution places the keys.
    EXPECT_EQ(RouteConfig::parse(with_route(R"("PoolRoute|A")")).route.hash_func, "");
}

TEST(RouteConfigParseError, PoolRouteHash) {
    const std::string why =
        " (a PoolRoute places keys by Options::distribution, libmemcached's ketama unless "
        "changed, by mcrouter's \"hash\": \"Ch3\", or by a distribution name such as "
        "\"gomemcache\" or \"libmemcached_modula:crc\": see docs/placement.md)";
    const auto pool_with = [](std::string_view hash) {
        return with_route(R"({"type": "PoolRoute", "pool": "A", "hash": )" + std::string(hash) +
                          "}");
    };
    EXPECT_EQ(parse_error(pool_with(R"("Crc32")")), "route.hash: unsupported hash 'Crc32'" + why);
    EXPECT_EQ(parse_error(pool_with(R"("WeightedCh3")")),
              "route.hash: unsupported hash 'WeightedCh3'" + why);
    EXPECT_EQ(parse_error(pool_with(R"("ch3")")), "route.hash: unsupported hash 'ch3'" + why);
    EXPECT_EQ(parse_error(pool_with(R"("")")), "route.hash: unsupported hash ''" + why);
    EXPECT_EQ(parse_error(pool_with(R"({"hash_func": "Crc32"})")),
              "route.hash: unsupported hash 'Crc32'" + why);
    EXPECT_EQ(parse_error(pool_with(R"({"hash_func": "Ch3", "salt": "x"})")),
              "route.hash: unknown key 'salt' (a PoolRoute's hash takes hash_func)");
    EXPECT_EQ(parse_error(pool_with(R"({"hash_func": 3})")),
              "route.hash.hash_func: expected a string, got 3");
    EXPECT_EQ(parse_error(pool_with("3")),
              "route.hash: expected \"Ch3\" or {\"hash_func\": \"Ch3\"}, got 3");
    // A pool places its keys one way: its pool routes must agree.
    EXPECT_EQ(parse_error(with_route(R"({"type": "AllSyncRoute", "children": [
                  {"type": "PoolRoute", "pool": "A", "hash": "Ch3"}, "PoolRoute|B", "PoolRoute|A"]})")),
              "route.children[2]: pool 'A' is placed by 'Ch3' at route.children[0] and by "
              "Options::distribution (no \"hash\") here: every PoolRoute of a pool must give "
              "the same \"hash\"");
    EXPECT_EQ(parse_error(with_route(R"({"type": "PoolRoute", "pool": "A", "shadows": [
                  {"target": {"type": "PoolRoute", "pool": "A", "hash": {"hash_func": "Ch3"}}}]})")),
              "route.shadows[0].target.hash: pool 'A' is placed by Options::distribution (no "
              "\"hash\") at route and by 'Ch3' here: every PoolRoute of a pool must give the "
              "same \"hash\"");
}

TEST(RouteConfigParseError, PathsNameKeysVerbatimOnOneLine) {
    EXPECT_EQ(parse_error(with_route(R"({"type": "PrefixSelectorRoute",
                                         "policies": {"a:": "PoolRoute|A", "b:": "PoolRoute|Q"}})")),
              "route.policies.b:: unknown pool 'Q'");
    // A key holding a newline is written escaped: the message stays one line.
    const auto message = parse_error(with_route(R"({"type": "PrefixSelectorRoute",
                                                    "policies": {"a\nb": 1}})"));
    EXPECT_EQ(message, "route.policies.a\\nb: expected a route (a string or an object), got 1");
}

TEST(RouteConfigParseError, DeepTreesAreRefused) {
    std::string route = "\"NullRoute\"";
    for (int i = 0; i < 100; ++i)
        route = R"({"type": "AllSyncRoute", "children": [)" + route + "]}";
    const auto message = parse_error(with_route(route));
    EXPECT_THAT(message, StartsWith("route.children[0].children[0]"));
    EXPECT_THAT(message, EndsWith(": routes nested more than 100 deep"));

    std::string fine = "\"NullRoute\"";
    for (int i = 0; i < 99; ++i)
        fine = R"({"type": "AllSyncRoute", "children": [)" + fine + "]}";
    EXPECT_NO_THROW(RouteConfig::parse(with_route(fine)));
}

TEST(RouteConfigParseError, NamedHandlesThatDoubleAtEveryLevelAreBounded) {
    // h1 uses h0 twice, h2 uses h1 twice, ...: 2^20 copies of h0.
    std::string handles = R"({"name": "h0", "type": "NullRoute"})";
    for (int i = 1; i <= 20; ++i) {
        const auto prev = "\"h" + std::to_string(i - 1) + "\"";
        handles += R"(, {"name": "h)" + std::to_string(i) +
                   R"(", "type": "AllSyncRoute", "children": [)" + prev + ", " + prev + "]}";
    }
    const auto message = parse_error(R"({"named_handles": [)" + handles + R"(], "route": "h20"})");
    EXPECT_THAT(message, EndsWith(": the route tree has more than 100000 routes (a named handle "
                                  "is copied wherever it is used)"));
}

// ---- builders and validate() ------------------------------------------------------------------

TEST(RouteBuilders, HeaderExampleValidates) {
    RouteConfig c{{{"A", {"127.0.0.1:11211"}}, {"B", {"127.0.0.1:11212"}}},
                  routes::all_sync({routes::pool("A"), routes::pool("B")})};
    EXPECT_NO_THROW(c.validate());
    EXPECT_EQ(render(c.route),
              "AllSyncRoute name=\n  PoolRoute name= pool=A\n  PoolRoute name= pool=B\n");
    EXPECT_NO_THROW(RouteConfig{}.validate());  // a NullRoute over no pools
}

TEST(RouteBuilders, FillTheFieldsOfTheirType) {
    const auto p = routes::pool("A", {routes::shadow(routes::pool("B"), 0.1, 0.2)});
    EXPECT_EQ(p.type, RouteType::pool);
    EXPECT_EQ(p.pool, "A");
    ASSERT_EQ(p.shadows.size(), 1u);
    EXPECT_EQ(p.shadows[0].target.size(), 1u);
    EXPECT_EQ(p.shadows[0].target[0].pool, "B");
    EXPECT_EQ(p.shadows[0].key_fraction_begin, 0.1);
    EXPECT_EQ(p.shadows[0].key_fraction_end, 0.2);
    EXPECT_TRUE(p.name.empty());

    EXPECT_EQ(routes::all_async({routes::null()}).type, RouteType::all_async);
    EXPECT_EQ(routes::all_majority({routes::null()}).type, RouteType::all_majority);
    EXPECT_EQ(routes::all_fastest({routes::null()}).type, RouteType::all_fastest);
    EXPECT_EQ(routes::all_initial({routes::null()}).type, RouteType::all_initial);

    const auto f = routes::failover({routes::pool("A"), routes::pool("B")}, 30);
    EXPECT_EQ(f.type, RouteType::failover);
    EXPECT_EQ(f.children.size(), 2u);
    EXPECT_EQ(f.failover_exptime, 30u);
    EXPECT_FALSE(routes::miss_failover({routes::null()}).failover_exptime);
    EXPECT_EQ(routes::miss_failover({routes::null()}, 5).type, RouteType::miss_failover);

    const auto w = routes::warm_up(routes::pool("A"), routes::pool("B"), 600);
    EXPECT_EQ(render(w),
              "WarmUpRoute name= exptime=600\n  PoolRoute name= pool=A\n"
              "  PoolRoute name= pool=B\n");

    const auto ps = routes::prefix_selector({{"a:", routes::pool("A")}, {"b:", routes::pool("B")}},
                                            routes::null());
    EXPECT_EQ(render(ps),
              "PrefixSelectorRoute name= selectors=a:,b:, has_default\n"
              "  PoolRoute name= pool=A\n  PoolRoute name= pool=B\n  NullRoute name=\n");
    const auto os = routes::operation_selector({{"get", routes::pool("A")}});
    EXPECT_EQ(render(os),
              "OperationSelectorRoute name= selectors=get,\n  PoolRoute name= pool=A\n");

    EXPECT_EQ(render(routes::hash({routes::pool("A")})),
              "HashRoute name= hash_func=Ch3\n  PoolRoute name= pool=A\n");
    EXPECT_EQ(
        render(routes::hash({routes::pool("A"), routes::pool("B")}, "WeightedCh3", {}, {1.0, 0.5})),
        "HashRoute name= hash_func=WeightedCh3 weights=1.000000,0.500000,\n"
        "  PoolRoute name= pool=A\n  PoolRoute name= pool=B\n");
    EXPECT_EQ(render(routes::pool("A", {}, "Ch3")), "PoolRoute name= pool=A hash_func=Ch3\n");
    EXPECT_EQ(render(routes::hash({routes::pool("A")}, "Md5", "x")),
              "HashRoute name= hash_func=Md5 salt=x\n  PoolRoute name= pool=A\n");
    EXPECT_EQ(render(routes::error("down")), "ErrorRoute name= error_message=down\n");
    EXPECT_EQ(render(routes::named("label", routes::null())), "NullRoute name=label\n");
}

TEST(RouteBuilders, EveryTypeValidates) {
    using namespace folsom::routes;
    const auto config = with_tree(all_sync({
        pool("A", {shadow(pool("B"), 0.0, 0.5), shadow(all_async({pool("B")}), 0.5, 1.0)}),
        all_majority({pool("A"), pool("B"), null()}),
        all_fastest({pool("A")}),
        all_initial({pool("A"), pool("B")}),
        failover({pool("A"), pool("B")}, 10),
        miss_failover({pool("A"), pool("B")}),
        warm_up(pool("A"), pool("B"), 60),
        prefix_selector({{"a:", pool("A")}, {"", pool("B")}}),
        prefix_selector({}, pool("A")),
        operation_selector({{"get", pool("A")}, {"touch", pool("B")}}, error("no")),
        hash({pool("A"), pool("B")}, "Md5", "salt"),
        hash({pool("A"), pool("B")}),
        hash({pool("A"), pool("B")}, "Crc32"),
        hash({pool("A"), pool("B")}, "WeightedCh3", "salt", {0.0, 1.0}),
        named("n", null()),
    }));
    EXPECT_NO_THROW(config.validate());
}

TEST(RouteValidate, UnknownPool) {
    using namespace folsom::routes;
    EXPECT_EQ(validate_error(with_tree(all_sync({pool("A"), pool("C")}))),
              "route.children[1].pool: unknown pool 'C'");
    EXPECT_EQ(validate_error(with_tree(pool("A", {shadow(pool("C"), 0, 1)}))),
              "route.shadows[0].target.pool: unknown pool 'C'");
    EXPECT_EQ(validate_error(with_tree(warm_up(pool("A"), pool("C")))),
              "route.warm.pool: unknown pool 'C'");
    EXPECT_EQ(validate_error(with_tree(prefix_selector({{"a:", pool("C")}}))),
              "route.policies.a:.pool: unknown pool 'C'");
    EXPECT_EQ(validate_error(with_tree(prefix_selector({{"a:", pool("A")}}, pool("C")))),
              "route.wildcard.pool: unknown pool 'C'");
    EXPECT_EQ(validate_error(with_tree(operation_selector({{"set", pool("C")}}))),
              "route.operation_policies.set.pool: unknown pool 'C'");
    EXPECT_EQ(validate_error(with_tree(operation_selector({{"set", pool("A")}}, pool("C")))),
              "route.default_policy.pool: unknown pool 'C'");
    EXPECT_EQ(validate_error(with_tree(pool(""))), "route.pool: PoolRoute needs a pool");
}

TEST(RouteValidate, Pools) {
    EXPECT_EQ(validate_error(RouteConfig{{{"A", {"a:1"}}, {"A", {"b:1"}}}, routes::pool("A")}),
              "pools.A: pool 'A' is defined twice");
    EXPECT_EQ(validate_error(RouteConfig{{{"A", {}}}, routes::null()}),
              "pools.A.servers: a pool needs at least one server");
    EXPECT_EQ(validate_error(RouteConfig{{{"A", {"a:1", "[::1"}}}, routes::null()}),
              "pools.A.servers[1]: bad server address '[::1': expected HOST[:PORT[:WEIGHT]], "
              "[IPV6][:PORT[:WEIGHT]] or /SOCKET/PATH[/?WEIGHT]");
    EXPECT_EQ(validate_error(RouteConfig{{{"A", {"a:1"}}, {"", {"b:1"}}}, routes::null()}),
              "pools[1]: a pool needs a name");
}

TEST(RouteValidate, ChildCounts) {
    using namespace folsom::routes;
    EXPECT_EQ(validate_error(with_tree(all_sync({}))),
              "route.children: AllSyncRoute needs at least one child");
    EXPECT_EQ(validate_error(with_tree(all_sync({failover({})}))),
              "route.children[0].children: FailoverRoute needs at least one child");
    EXPECT_EQ(validate_error(with_tree(miss_failover({}))),
              "route.children: MissFailoverRoute needs at least one child");
    EXPECT_EQ(validate_error(with_tree(hash({}))),
              "route.children: HashRoute needs at least one child");
    EXPECT_EQ(validate_error(with_tree(prefix_selector({}))),
              "route: PrefixSelectorRoute needs policies or a wildcard");

    auto three = warm_up(pool("A"), pool("B"));
    three.children.push_back(null());
    EXPECT_EQ(validate_error(with_tree(three)),
              "route: WarmUpRoute needs exactly two children (cold, warm), not 3");

    auto mismatched = prefix_selector({{"a:", pool("A")}});
    mismatched.has_default = true;
    EXPECT_EQ(validate_error(with_tree(mismatched)),
              "route: PrefixSelectorRoute needs one child per selector, and one more with "
              "has_default (1 selectors, has_default true, 1 children)");
}

TEST(RouteValidate, Selectors) {
    using namespace folsom::routes;
    EXPECT_EQ(validate_error(with_tree(operation_selector({{"fetch", null()}}))),
              "route.operation_policies.fetch: unknown operation 'fetch' (operations: get, gets, "
              "gat, gats, set, add, replace, append, prepend, cas, delete, incr, decr, touch)");
    EXPECT_EQ(validate_error(with_tree(operation_selector({{"get", null()}, {"get", null()}}))),
              "route.operation_policies.get: operation 'get' appears twice");
    EXPECT_EQ(validate_error(with_tree(prefix_selector({{"a:", null()}, {"a:", null()}}))),
              "route.policies.a:: prefix 'a:' appears twice");
}

TEST(RouteValidate, Shadows) {
    using namespace folsom::routes;
    EXPECT_EQ(validate_error(with_tree(pool("A", {shadow(pool("B"), 0.5, 0.2)}))),
              "route.shadows[0].key_fraction_range: expected [begin, end] with 0 <= begin <= end "
              "<= 1");
    EXPECT_EQ(validate_error(with_tree(
                  pool("A", {shadow(pool("B"), 0, 1),
                             shadow(pool("B"), 0, std::numeric_limits<double>::quiet_NaN())}))),
              "route.shadows[1].key_fraction_range: expected [begin, end] with 0 <= begin <= end "
              "<= 1");
    EXPECT_EQ(validate_error(with_tree(pool("A", {ShadowSpec{}}))),
              "route.shadows[0].target: a shadow needs exactly one target route");
    ShadowSpec two = shadow(pool("B"), 0, 1);
    two.target.push_back(pool("B"));
    EXPECT_EQ(validate_error(with_tree(pool("A", {two}))),
              "route.shadows[0].target: a shadow needs exactly one target route");
}

TEST(RouteValidate, HashFunc) {
    using namespace folsom::routes;
    EXPECT_EQ(validate_error(with_tree(hash({pool("A")}, "ch3"))),
              "route.hash_func: unsupported hash_func 'ch3' (supported: Ch3, WeightedCh3, Crc32, "
              "Md5)");
    EXPECT_EQ(
        validate_error(with_tree(hash({pool("A")}, ""))),
        "route.hash_func: unsupported hash_func '' (supported: Ch3, WeightedCh3, Crc32, Md5)");
    EXPECT_EQ(validate_error(with_tree(hash({pool("A"), pool("B")}, "WeightedCh3", {}, {1.0}))),
              "route.weights: WeightedCh3 needs one weight per child (1 weights, 2 children)");
    EXPECT_EQ(validate_error(
                  with_tree(hash({pool("A"), pool("B")}, "WeightedCh3", {}, {1.0, std::nan("")}))),
              "route.weights[1]: a weight is a number in [0, 1]");
    EXPECT_EQ(validate_error(with_tree(hash({pool("A")}, "Ch3", {}, {1.0}))),
              "route.weights: only hash_func WeightedCh3 takes weights");
    auto a = all_sync({pool("A")});
    a.weights = {1.0};
    EXPECT_EQ(validate_error(with_tree(a)), "route.weights: AllSyncRoute takes no weights");
}

TEST(RouteValidate, PoolPlacement) {
    using namespace folsom::routes;
    EXPECT_NO_THROW(
        with_tree(all_sync({pool("A", {}, "Ch3"), pool("B"), pool("A", {}, "Ch3")})).validate());
    EXPECT_EQ(validate_error(with_tree(pool("A", {}, "Crc32"))),
              "route.hash: unsupported hash 'Crc32' (a PoolRoute places keys by "
              "Options::distribution, libmemcached's ketama unless changed, by mcrouter's "
              "\"hash\": \"Ch3\", or by a distribution name such as \"gomemcache\" or "
              "\"libmemcached_modula:crc\": see docs/placement.md)");
    // Any distribution name places a pool as that client does; a known scheme with a hash it
    // does not take says so.
    EXPECT_NO_THROW(
        with_tree(all_sync({pool("A", {}, "gomemcache"), pool("B", {}, "libmemcached_modula:crc")}))
            .validate());
    EXPECT_EQ(validate_error(with_tree(pool("A", {}, "dalli:md5"))),
              "route.hash: unsupported hash 'dalli:md5' (distribution 'dalli:md5': dalli has its "
              "own fixed hash and takes no other (not md5))");
    EXPECT_EQ(validate_error(with_tree(failover({pool("A"), pool("A", {}, "Ch3")}))),
              "route.children[1].hash: pool 'A' is placed by Options::distribution (no \"hash\") "
              "at route.children[0] and by 'Ch3' here: every PoolRoute of a pool must give the "
              "same \"hash\"");
}

TEST(RouteValidate, FieldsOfAnotherTypeAreRefused) {
    using namespace folsom::routes;
    auto n = null();
    n.exptime = 5;
    EXPECT_EQ(validate_error(with_tree(n)), "route.exptime: NullRoute takes no exptime");
    auto p = pool("A");
    p.children.push_back(null());
    EXPECT_EQ(validate_error(with_tree(all_sync({p}))),
              "route.children[0].children: PoolRoute takes no children");
    auto a = all_sync({pool("A")});
    a.hash_func = "Md5";
    EXPECT_EQ(validate_error(with_tree(a)), "route.hash_func: AllSyncRoute takes no hash_func");
    auto e = failover({pool("A")});
    e.error_message = "x";
    EXPECT_EQ(validate_error(with_tree(e)),
              "route.error_message: FailoverRoute takes no error_message");
    auto s = warm_up(pool("A"), pool("B"));
    s.failover_exptime = 1;
    EXPECT_EQ(validate_error(with_tree(s)),
              "route.failover_exptime: WarmUpRoute takes no failover_exptime");
}

TEST(RouteValidate, NamesAreOptional) {
    using namespace folsom::routes;
    EXPECT_NO_THROW(with_tree(failover({pool("A"), named("backup", pool("B"))})).validate());
    EXPECT_NO_THROW(with_tree(named("", pool("A"))).validate());
}

TEST(RouteValidate, DeepTreesAreRefused) {
    RouteSpec deep = routes::null();
    for (int i = 0; i < 100; ++i)
        deep = routes::all_sync({deep});
    const auto message = validate_error(with_tree(deep));
    EXPECT_THAT(message, EndsWith(": routes nested more than 100 deep"));
}

// ---- load() -----------------------------------------------------------------------------------

std::string temp_path(const std::string& name) {
    return testing::TempDir() + "folsom_route_config_test_" + name;
}

TEST(RouteConfigLoad, ReadsAFile) {
    const auto path = temp_path("ok.json");
    {
        std::ofstream out(path);
        out << with_route(
            R"({"type": "FailoverRoute", "children": ["PoolRoute|A", "PoolRoute|B"]})");
    }
    const auto config = RouteConfig::load(path);
    std::remove(path.c_str());
    EXPECT_EQ(render(config.pools), "A: 127.0.0.1:11211\nB: 127.0.0.1:11212\n");
    EXPECT_EQ(config.route.type, RouteType::failover);
    EXPECT_EQ(config.route.children.size(), 2u);
}

TEST(RouteConfigLoad, FaultsOfTheContentsKeepTheirPath) {
    const auto path = temp_path("bad.json");
    {
        std::ofstream out(path);
        out << with_route(R"("PoolRoute|C")");
    }
    try {
        RouteConfig::load(path);
        ADD_FAILURE() << "loaded";
    } catch (const RouteConfigError& e) {
        EXPECT_EQ(e.path(), "route");
        EXPECT_EQ(e.message(), "route: unknown pool 'C'");
    }
    std::remove(path.c_str());
}

TEST(RouteConfigLoad, AMissingFileIsARouteConfigError) {
    const auto path = temp_path("does-not-exist.json");
    try {
        RouteConfig::load(path);
        ADD_FAILURE() << "loaded";
    } catch (const RouteConfigError& e) {
        EXPECT_EQ(e.path(), "");
        EXPECT_EQ(e.message(), "cannot read " + path + ": No such file or directory");
        EXPECT_EQ(e.code(), folsom::errc::invalid_argument);
    }
    try {
        RouteConfig::load(testing::TempDir());
        ADD_FAILURE() << "loaded a directory";
    } catch (const RouteConfigError& e) {
        EXPECT_EQ(e.message(), "cannot read " + testing::TempDir() + ": Is a directory");
    }
}

}  // namespace

// ---- mcrouter's pool options ----------------------------------------------------------------

namespace pool_options {

RouteConfig parse_pools(std::string_view pools) {
    return RouteConfig::parse(R"({"pools": )" + std::string(pools) +
                              R"(, "route": "PoolRoute|A"})");
}

TEST(RouteConfigPoolOptions, AreReadWithMcroutersMeaning) {
    const RouteConfig c = parse_pools(R"({"A": {"servers": ["a:1", "b:2"], "server_timeout": 250,
                                               "protocol": "meta", "security_mech": "tls",
                                               "weights": [1, 0.5], "keep_routing_prefix": true}})");
    ASSERT_EQ(c.pools.size(), 1u);
    const PoolSpec& a = c.pools[0];
    EXPECT_EQ(a.server_timeout, std::chrono::milliseconds(250));
    EXPECT_EQ(a.protocol, folsom::Protocol::meta);
    EXPECT_EQ(a.tls, true);
    EXPECT_EQ(a.weights, (std::vector<double>{1.0, 0.5}));
    EXPECT_TRUE(a.keep_routing_prefix);
}

TEST(RouteConfigPoolOptions, UnsetMeansTheClientsOptions) {
    const RouteConfig c = parse_pools(R"({"A": {"servers": ["a:1"]}})");
    const PoolSpec& a = c.pools[0];
    EXPECT_FALSE(a.server_timeout);
    EXPECT_FALSE(a.protocol);
    EXPECT_FALSE(a.tls);
    EXPECT_TRUE(a.weights.empty());
    EXPECT_FALSE(a.keep_routing_prefix);
}

TEST(RouteConfigPoolOptions, PoolsMayDiffer) {
    const RouteConfig c = RouteConfig::parse(R"({"pools": {
        "A": {"servers": ["a:1"], "protocol": "ascii", "security_mech": "plain"},
        "B": {"servers": ["b:1"], "protocol": "binary", "server_timeout": 10}},
        "route": {"type": "AllSyncRoute", "children": ["PoolRoute|A",
            {"type": "PoolRoute", "pool": {"name": "C", "servers": ["c:1"], "protocol": "meta"}}]}})");
    ASSERT_EQ(c.pools.size(), 3u);
    EXPECT_EQ(c.pools[0].protocol, folsom::Protocol::ascii);
    EXPECT_EQ(c.pools[0].tls, false);
    EXPECT_EQ(c.pools[1].protocol, folsom::Protocol::binary);
    EXPECT_EQ(c.pools[1].server_timeout, std::chrono::milliseconds(10));
    EXPECT_EQ(c.pools[2].protocol, folsom::Protocol::meta);
}

TEST(RouteConfigPoolOptions, BadValuesAreRefusedByPath) {
    auto refused = [](std::string_view pools) {
        return parse_error(R"({"pools": )" + std::string(pools) + R"(, "route": "PoolRoute|A"})");
    };
    EXPECT_EQ(refused(R"({"A": {"servers": ["a:1"], "server_timeout": 0}})"),
              "pools.A.server_timeout: expected a timeout in milliseconds, 1 to 86400000, got 0");
    EXPECT_EQ(
        refused(R"({"A": {"servers": ["a:1"], "server_timeout": "1s"}})"),
        "pools.A.server_timeout: expected a timeout in milliseconds, 1 to 86400000, got string");
    EXPECT_EQ(refused(R"({"A": {"servers": ["a:1"], "protocol": "caret"}})"),
              "pools.A.protocol: unsupported protocol 'caret' (supported: ascii, binary, meta; "
              "mcrouter's caret, umbrella and thrift are not memcached's)");
    EXPECT_EQ(refused(R"({"A": {"servers": ["a:1"], "security_mech": "tls_to_plain"}})"),
              "pools.A.security_mech: unsupported security_mech 'tls_to_plain' (supported: tls, "
              "plain)");
    EXPECT_EQ(refused(R"({"A": {"servers": ["a:1"], "keep_routing_prefix": 1}})"),
              "pools.A.keep_routing_prefix: expected true or false, got 1");
    EXPECT_EQ(refused(R"({"A": {"servers": ["a:1", "b:1"], "weights": [1]}})"),
              "pools.A.weights: one weight per server (1 weights, 2 servers)");
    EXPECT_EQ(refused(R"({"A": {"servers": ["a:1", "b:1"], "weights": [0, 0]}})"),
              "pools.A.weights: every weight is 0: no server would be given a key");
    EXPECT_EQ(refused(R"({"A": {"servers": ["a:1", "b:1"], "weights": [1, 1.5]}})"),
              "pools.A.weights[1]: a weight is a number in [0, 1]");
    EXPECT_EQ(parse_error(R"({"pools": {"A": {"servers": ["a:1"], "weights": [1]}},
                              "route": {"type": "PoolRoute", "pool": "A", "hash": "Ch3"}})"),
              "route.hash: pool 'A' has weights: it places keys by WeightedCh3 and its routes "
              "take no hash");
    EXPECT_EQ(parse_error(R"({"pools": {"A": {"servers": ["a:1"], "weights": [1]},
                                        "B": {"servers": ["b:1"]}},
                              "route": {"type": "PoolRoute", "pool": "A",
                                        "shadows": [{"target": "PoolRoute|B"}]}})"),
              "route.shadows: pool 'A' has weights: its routes take no shadows");
}

TEST(RouteConfigPoolOptions, CredentialsPerPool) {
    const RouteConfig c =
        parse_pools(R"({"A": {"servers": ["a:1"], "username": "app", "password": "s3cret"}})");
    EXPECT_EQ(c.pools[0].username, "app");
    EXPECT_EQ(c.pools[0].password, "s3cret");
    auto refused = [](std::string_view pools) {
        return parse_error(R"({"pools": )" + std::string(pools) + R"(, "route": "PoolRoute|A"})");
    };
    EXPECT_EQ(refused(R"({"A": {"servers": ["a:1"], "username": "app"}})"),
              "pools.A.password: a pool's username and password are given together");
    // The password's value never appears in a message.
    const std::string m =
        refused(R"({"A": {"servers": ["a:1"], "username": "u", "password": 918273}})");
    EXPECT_EQ(m, "pools.A.password: expected a string");
    EXPECT_EQ(m.find("918273"), std::string::npos);
}

TEST(RouteConfigPoolOptions, ValidateChecksPoolsMadeInCode) {
    PoolSpec a{"A", {"a:1", "b:1"}};
    a.weights = {0.0, 0.0};
    EXPECT_EQ(validate_error(RouteConfig{{a}, routes::pool("A")}),
              "pools.A.weights: every weight is 0: no server would be given a key");
    PoolSpec t{"A", {"a:1"}};
    t.server_timeout = std::chrono::milliseconds(0);
    EXPECT_EQ(validate_error(RouteConfig{{t}, routes::pool("A")}),
              "pools.A.server_timeout: a timeout is at least 1 ms");
}

}  // namespace pool_options
