// The options dict as folsom::Options (options.hpp).
#include "options.hpp"

#include "folsom/cluster/distribution.hpp"
#include "folsom/routes.hpp"

#include "conversions.hpp"
#include "errors.hpp"

#include <chrono>
#include <pybind11/stl.h>
#include <string>
#include <tuple>
#include <vector>

namespace folsom::python {

namespace {

std::string bytes_or_str(py::handle h) {
    if (PyBytes_Check(h.ptr())) return h.cast<std::string>();
    return py::str(h).cast<std::string>();
}

}  // namespace

Options parse_options(const py::dict& d) {
    Options o;
    if (auto s = opt<std::vector<std::string>>(d, "servers"))
        o.servers = *s;  // assign, never append
    if (auto p = opt<std::string>(d, "protocol")) {
        if (*p == "ascii")
            o.protocol = Protocol::ascii;
        else if (*p == "binary")
            o.protocol = Protocol::binary;
        else if (*p == "meta")
            o.protocol = Protocol::meta;
        else
            throw py::value_error("protocol must be 'meta', 'binary' or 'ascii', not '" + *p + "'");
    }
    if (auto dist = opt<std::string>(d, "distribution")) {
        std::string why;
        const auto parsed = cluster::parse_distribution(*dist, &why);
        if (!parsed) throw py::value_error(why);
        o.distribution = *parsed;
    }
    if (auto v = opt<std::size_t>(d, "max_outstanding_requests")) o.max_outstanding_requests = *v;
    if (auto v = opt<std::size_t>(d, "max_value_size")) o.max_value_size = *v;
    if (auto v = opt<std::size_t>(d, "connections_per_server")) o.connections_per_server = *v;
    if (auto v = opt<double>(d, "connect_timeout")) o.connect_timeout = ms_of(*v);
    if (auto v = opt<double>(d, "request_timeout")) o.request_timeout = ms_of(*v);
    if (auto v = opt<double>(d, "reconnect_initial_delay")) o.reconnect_initial_delay = ms_of(*v);
    if (auto v = opt<double>(d, "reconnect_max_delay")) o.reconnect_max_delay = ms_of(*v);
    if (auto v = opt<std::size_t>(d, "scatter_threshold")) o.scatter_threshold = *v;
    if (auto v = opt<bool>(d, "tcp_nodelay")) o.tcp_nodelay = *v;
    // (idle s, interval s, count), checked in folsom/_common.py (pymemcache's KeepaliveOpts).
    if (auto v = opt<std::tuple<long, long, int>>(d, "tcp_keepalive"))
        o.tcp_keepalive = TcpKeepalive{std::chrono::seconds(std::get<0>(*v)),
                                       std::chrono::seconds(std::get<1>(*v)), std::get<2>(*v)};
    if (d.contains("key_prefix") && !d["key_prefix"].is_none())
        o.key_prefix = bytes_or_str(d["key_prefix"]);
    if (auto v = opt<bool>(d, "hash_with_key_prefix")) o.hash_with_key_prefix = *v;
    if (auto v = opt<bool>(d, "binary_keys")) o.binary_keys = *v;
    if (auto v = opt<bool>(d, "retry_idempotent")) o.retry_idempotent = *v;
    if (auto v = opt<bool>(d, "failover")) o.failover.enabled = *v;
    if (auto v = opt<double>(d, "dead_timeout")) o.failover.dead_timeout = ms_of(*v);
    // 1..2^32-1, checked in folsom/_common.py.
    if (auto v = opt<std::uint32_t>(d, "failure_limit")) o.failover.failure_limit = *v;
    if (opt<bool>(d, "tls").value_or(false)) {
        TlsOptions t;
        if (auto v = opt<std::string>(d, "tls_ca_file")) t.ca_file = *v;
        if (auto v = opt<std::string>(d, "tls_cert_file")) t.cert_file = *v;
        if (auto v = opt<std::string>(d, "tls_key_file")) t.key_file = *v;
        if (auto v = opt<std::string>(d, "tls_server_name")) t.server_name = *v;
        if (auto v = opt<bool>(d, "tls_verify")) t.verify = *v;
        o.tls = std::move(t);
    }
    // mcrouter-shaped routes (docs/routing.md), as JSON text: the pools then name the servers.
    if (auto v = opt<std::string>(d, "routes")) {
        try {
            o.routes = RouteConfig::parse(*v);
        } catch (const RouteConfigError& e) {
            raise_error(e.code(), e.message());
        }
    }
    // SASL over binary, memcached's text login (-Y) over ascii and meta.
    if (auto user = opt<std::string>(d, "sasl_username")) o.username = *user;
    if (auto password = opt<std::string>(d, "sasl_password")) o.password = *password;
    return o;
}

}  // namespace folsom::python
