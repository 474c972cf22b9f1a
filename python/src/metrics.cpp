// The client's metrics as dicts (recipes_and_metrics.hpp).
#include "folsom/metrics.hpp"

#include "recipes_and_metrics.hpp"

namespace folsom::python {

namespace {

py::dict latency_dict(const LatencySummary& l) {
    py::dict d;
    d["count"] = l.count;
    d["sum"] = l.sum;
    d["p50"] = l.p50;
    d["p99"] = l.p99;
    d["p999"] = l.p999;
    return d;
}

py::dict server_dict(const ServerSnapshot& s) {
    py::dict d;
    d["requests"] = s.requests;
    d["hits"] = s.hits;
    d["misses"] = s.misses;
    d["errors"] = s.errors;
    d["retries"] = s.retries;
    d["outstanding"] = s.outstanding;
    d["bytes_sent"] = s.bytes_sent;
    d["bytes_received"] = s.bytes_received;
    d["connects"] = s.connects;
    d["disconnects"] = s.disconnects;
    d["reconnect_attempts"] = s.reconnect_attempts;
    d["connect_failures"] = s.connect_failures;
    d["latency"] = latency_dict(s.latency);
    py::dict ops;
    for (const auto& op : s.ops) {
        py::dict o;
        o["requests"] = op.requests();
        py::dict outcomes;
        for (std::size_t i = 0; i < outcome_count; ++i)
            if (op.outcomes[i])
                outcomes[py::str(std::string(to_string(static_cast<Outcome>(i))))] = op.outcomes[i];
        o["outcomes"] = outcomes;
        py::dict errors;
        for (std::size_t i = 1; i < op.errors.size(); ++i)
            if (op.errors[i]) errors[py::str(errc_name(static_cast<int>(i)))] = op.errors[i];
        o["errors"] = errors;
        o["keys"] = op.keys;
        o["hits"] = op.hits;
        o["misses"] = op.misses;
        o["retries"] = op.retries;
        o["latency"] = latency_dict(op.latency);
        ops[py::str(std::string(to_string(op.op)))] = o;
    }
    d["ops"] = ops;
    return d;
}

}  // namespace

py::object metrics_dict(NativeClient& c) {
    MetricsRegistry* m = c.metrics();
    if (!m) return py::none();
    MetricsSnapshot snap = m->snapshot();
    py::dict d;
    py::dict servers;
    for (const auto& s : snap.servers)
        servers[py::str(s.name)] = server_dict(s);
    d["servers"] = servers;
    d["unrouted"] = server_dict(snap.unrouted);
    d["totals"] = server_dict(snap.totals);
    return d;
}

}  // namespace folsom::python
