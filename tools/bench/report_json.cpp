#include "bench/report_json.hpp"

#include <fmt/format.h>

#include <cmath>
#include <iterator>

namespace folsom::bench {
namespace {

/// JSON has no NaN or infinity; a rate over an empty run is 0.
double finite(double v) {
    return std::isfinite(v) ? v : 0.0;
}

std::string quoted(std::string_view s) {
    // Built by appending: g++ 12 warns falsely (-Wrestrict) on "\"" + std::string + "\"".
    std::string out(1, '"');
    out += json_escape(s);
    out += '"';
    return out;
}

}  // namespace

std::string json_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (c < 0x20)
                    fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
                else
                    out += ch;
        }
    }
    return out;
}

std::string to_json(const Summary& s) {
    const auto& w = s.workload;
    std::string o;
    auto out = std::back_inserter(o);
    fmt::format_to(out, "{{\n");
    fmt::format_to(out, "  \"ops\": {},\n", s.counts.ops);
    fmt::format_to(out, "  \"ops_per_sec\": {:.1f},\n", finite(s.ops_per_sec));
    fmt::format_to(out, "  \"keys\": {},\n", s.counts.keys);
    fmt::format_to(out, "  \"keys_per_sec\": {:.1f},\n", finite(s.keys_per_sec));
    fmt::format_to(out, "  \"gets\": {},\n", s.counts.gets);
    fmt::format_to(out, "  \"hits\": {},\n", s.counts.hits);
    fmt::format_to(out, "  \"misses\": {},\n", s.counts.misses);
    fmt::format_to(out, "  \"sets\": {},\n", s.counts.sets);
    fmt::format_to(out, "  \"preload_sets\": {},\n", s.preload_sets);
    fmt::format_to(out, "  \"errors\": {},\n", s.counts.errors);
    fmt::format_to(out, "  \"errors_by_message\": {{");
    bool first = true;
    for (const auto& [msg, n] : s.counts.errors_by_message) {
        fmt::format_to(out, "{}{}: {}", first ? "" : ", ", quoted(msg), n);
        first = false;
    }
    fmt::format_to(out, "}},\n");
    fmt::format_to(out, "  \"duration_s\": {:.3f},\n", finite(s.duration_s));
    fmt::format_to(out, "  \"interrupted\": {},\n", s.interrupted);
    fmt::format_to(out, "  \"cpu_us_per_op\": {:.4f},\n", finite(s.cpu_us_per_op));
    fmt::format_to(out, "  \"cpu_user_s\": {:.3f},\n", finite(s.cpu_user_s));
    fmt::format_to(out, "  \"cpu_sys_s\": {:.3f},\n", finite(s.cpu_sys_s));
    const auto& l = s.latency_us;
    fmt::format_to(out,
                   "  \"latency_us\": {{\"p50\": {:.1f}, \"p90\": {:.1f}, \"p99\": {:.1f}, "
                   "\"p999\": {:.1f}, \"max\": {:.1f}, \"mean\": {:.1f}}},\n",
                   l.p50, l.p90, l.p99, l.p999, l.max, finite(l.mean));
    fmt::format_to(out, "  \"latency_every\": {},\n  \"latency_samples\": {},\n", s.latency_every,
                   s.latency_ns ? s.latency_ns->count() : 0);
    fmt::format_to(out, "  \"workload\": {{\"op\": {}, \"keys\": {}, \"value_size\": {}, ",
                   quoted(to_string(w.op)), w.keys, w.value_size);
    fmt::format_to(out, "\"batch\": {}, \"depth\": {}, \"connections\": {}, \"threads\": {}, ",
                   w.op == Op::mget ? w.batch : 1, w.depth, w.connections, w.threads);
    fmt::format_to(out, "\"duration_s\": {}, \"requests\": {}, \"set_ratio\": {}, ", w.duration_s,
                   w.requests, w.op == Op::mixed ? w.set_ratio : (w.op == Op::set ? 1.0 : 0.0));
    fmt::format_to(
        out,
        "\"preload\": {}, \"owning\": {}, \"key_order\": {}, \"protocol\": {}, \"cpu\": {}}},\n",
        w.preload, w.owning, quoted(w.keys_in_order ? "sequential" : "random"), quoted(s.protocol),
        s.cpu);
    fmt::format_to(out, "  \"servers\": [");
    for (std::size_t i = 0; i < s.servers.size(); ++i)
        fmt::format_to(out, "{}{}", i ? ", " : "", quoted(s.servers[i]));
    fmt::format_to(out, "],\n  \"server_versions\": [");
    for (std::size_t i = 0; i < s.server_versions.size(); ++i)
        fmt::format_to(out, "{}{}", i ? ", " : "", quoted(s.server_versions[i]));
    fmt::format_to(out, "],\n  \"embedded_server\": {}", s.embedded_server);
    if (!s.config.empty()) {
        fmt::format_to(out, ",\n  \"config\": {},\n  \"routes\": [", quoted(s.config));
        for (std::size_t i = 0; i < s.routes.size(); ++i) {
            const RouteStats& r = s.routes[i];
            fmt::format_to(out,
                           "{}{{\"name\": {}, \"type\": {}, \"requests\": {}, \"failovers\": {}, "
                           "\"shadow_requests\": {}, \"shadow_errors\": {}}}",
                           i ? ", " : "", quoted(r.name), quoted(route_type_name(r.type)),
                           r.requests, r.failovers, r.shadow_requests, r.shadow_errors);
        }
        fmt::format_to(out, "]");
    }
    if (s.floor) {
        const FloorResult& f = *s.floor;
        fmt::format_to(out,
                       ",\n  \"floor\": {{\"server\": {}, \"ops\": {}, \"keys\": {}, "
                       "\"sends\": {}, \"duration_s\": {:.3f}, \"ops_per_sec\": {:.1f}, "
                       "\"cpu_us_per_op\": {:.4f}, \"cpu_user_s\": {:.3f}, \"cpu_sys_s\": {:.3f}, "
                       "\"interrupted\": {}, \"cpu_ratio\": {:.3f}}}",
                       quoted(s.floor_server), f.ops, f.keys, f.sends, finite(f.elapsed_s),
                       finite(s.floor_ops_per_sec), finite(s.floor_cpu_us_per_op),
                       finite(f.cpu_user_s), finite(f.cpu_sys_s), f.interrupted,
                       finite(s.floor_ratio));
    }
    fmt::format_to(out, "\n}}\n");
    return o;
}

}  // namespace folsom::bench
