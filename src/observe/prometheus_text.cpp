// A MetricsSnapshot in the Prometheus text exposition format (version 0.0.4):
// https://prometheus.io/docs/instrumenting/exposition_formats/
#include "folsom/metrics_registry.hpp"

#include <cinttypes>
#include <cstdio>
#include <string>
#include <string_view>

namespace folsom {
namespace {

/// Label values escape backslash, double quote and line feed.
void append_escaped(std::string& out, std::string_view v) {
    for (char c : v) {
        switch (c) {
            case '\\':
                out += "\\\\";
                break;
            case '"':
                out += "\\\"";
                break;
            case '\n':
                out += "\\n";
                break;
            default:
                out += c;
        }
    }
}

struct Label {
    std::string_view name;
    std::string_view value;
};

class Writer {
  public:
    explicit Writer(std::string& out) : out_(out) {}

    void family(std::string_view name, std::string_view type, std::string_view help) {
        out_ += "# HELP ";
        out_ += name;
        out_ += ' ';
        out_ += help;  // constant texts: no backslash or line feed to escape
        out_ += "\n# TYPE ";
        out_ += name;
        out_ += ' ';
        out_ += type;
        out_ += '\n';
    }

    void sample(std::string_view name, std::initializer_list<Label> labels, std::uint64_t v) {
        head(name, labels);
        char buf[32];
        std::snprintf(buf, sizeof buf, "%" PRIu64 "\n", v);
        out_ += buf;
    }
    void sample(std::string_view name, std::initializer_list<Label> labels, std::int64_t v) {
        head(name, labels);
        char buf[32];
        std::snprintf(buf, sizeof buf, "%" PRId64 "\n", v);
        out_ += buf;
    }
    void sample(std::string_view name, std::initializer_list<Label> labels, double v) {
        head(name, labels);
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.9g\n", v);
        out_ += buf;
    }

  private:
    void head(std::string_view name, std::initializer_list<Label> labels) {
        out_ += name;
        if (labels.size()) {
            out_ += '{';
            bool first = true;
            for (const Label& l : labels) {
                if (!first) out_ += ',';
                first = false;
                out_ += l.name;
                out_ += "=\"";
                append_escaped(out_, l.value);
                out_ += '"';
            }
            out_ += '}';
        }
        out_ += ' ';
    }
    std::string& out_;
};

/// The label of an errc value (index into OpSnapshot::errors).
std::string_view error_name(std::size_t index) {
    if (index == 0) return "other";
    return error_label(make_error_code(static_cast<errc>(index)));
}

}  // namespace

std::string to_prometheus(const MetricsSnapshot& snapshot) {
    std::string out;
    out.reserve(4096 + snapshot.servers.size() * 4096);
    Writer w(out);
    const auto& servers = snapshot.servers;

    w.family("folsom_requests_total", "counter",
             "Requests completed per server, operation and outcome (an error's outcome is its "
             "folsom::errc name).");
    for (const auto& s : servers)
        for (const auto& o : s.ops) {
            const std::string_view op = to_string(o.op);
            for (std::size_t k = 0; k < outcome_count; ++k) {
                if (k == static_cast<std::size_t>(Outcome::error) || o.outcomes[k] == 0) continue;
                w.sample("folsom_requests_total",
                         {{"server", s.name}, {"op", op}, {"outcome", to_string(Outcome(k))}},
                         o.outcomes[k]);
            }
            for (std::size_t k = 0; k <= max_error_label; ++k)
                if (o.errors[k])
                    w.sample("folsom_requests_total",
                             {{"server", s.name}, {"op", op}, {"outcome", error_name(k)}},
                             o.errors[k]);
        }

    w.family("folsom_retrieval_keys_total", "counter",
             "Keys asked for by retrievals per server and operation, by result (hit or miss).");
    for (const auto& s : servers)
        for (const auto& o : s.ops) {
            if (o.keys == 0) continue;
            const std::string_view op = to_string(o.op);
            w.sample("folsom_retrieval_keys_total",
                     {{"server", s.name}, {"op", op}, {"result", "hit"}}, o.hits);
            w.sample("folsom_retrieval_keys_total",
                     {{"server", s.name}, {"op", op}, {"result", "miss"}}, o.misses);
        }

    w.family("folsom_retries_total", "counter",
             "Requests lost with their connection and retried, per server and operation.");
    for (const auto& s : servers)
        for (const auto& o : s.ops)
            if (o.retries)
                w.sample("folsom_retries_total", {{"server", s.name}, {"op", to_string(o.op)}},
                         o.retries);

    w.family("folsom_request_duration_seconds", "summary",
             "Time from queueing a request on a connection to its completion.");
    for (const auto& s : servers)
        for (const auto& o : s.ops) {
            if (o.latency.count == 0) continue;
            const std::string_view op = to_string(o.op);
            const char* name = "folsom_request_duration_seconds";
            w.sample(name, {{"server", s.name}, {"op", op}, {"quantile", "0.5"}}, o.latency.p50);
            w.sample(name, {{"server", s.name}, {"op", op}, {"quantile", "0.99"}}, o.latency.p99);
            w.sample(name, {{"server", s.name}, {"op", op}, {"quantile", "0.999"}}, o.latency.p999);
            w.sample("folsom_request_duration_seconds_sum", {{"server", s.name}, {"op", op}},
                     o.latency.sum);
            w.sample("folsom_request_duration_seconds_count", {{"server", s.name}, {"op", op}},
                     o.latency.count);
        }

    w.family("folsom_outstanding_requests", "gauge",
             "Requests queued on the server's connections and not yet completed.");
    for (const auto& s : servers)
        w.sample("folsom_outstanding_requests", {{"server", s.name}}, s.outstanding);

    struct PerServer {
        const char* name;
        const char* help;
        std::uint64_t ServerSnapshot::*field;
    };
    static constexpr PerServer per_server[] = {
        {"folsom_sent_bytes_total", "Bytes written to the server.", &ServerSnapshot::bytes_sent},
        {"folsom_received_bytes_total", "Bytes read from the server.",
         &ServerSnapshot::bytes_received},
        {"folsom_connects_total", "Successful connects to the server (first ones included).",
         &ServerSnapshot::connects},
        {"folsom_disconnects_total", "Connected connections to the server that were lost.",
         &ServerSnapshot::disconnects},
        {"folsom_reconnect_attempts_total", "Connect attempts made after a failure.",
         &ServerSnapshot::reconnect_attempts},
        {"folsom_connect_failures_total", "Connect attempts that failed.",
         &ServerSnapshot::connect_failures},
    };
    for (const auto& f : per_server) {
        w.family(f.name, "counter", f.help);
        for (const auto& s : servers)
            w.sample(f.name, {{"server", s.name}}, s.*f.field);
    }

    w.family("folsom_unrouted_requests_total", "counter",
             "Requests that never reached a server (overloaded, or no server to route to), per "
             "operation and outcome.");
    for (const auto& o : snapshot.unrouted.ops)
        for (std::size_t k = 0; k <= max_error_label; ++k)
            if (o.errors[k])
                w.sample("folsom_unrouted_requests_total",
                         {{"op", to_string(o.op)}, {"outcome", error_name(k)}}, o.errors[k]);
    return out;
}

}  // namespace folsom
