// End-to-end benchmark: folsom and libmemcached side by side against a real memcached on
// loopback, in one run. Reports client CPU per operation (getrusage user+sys of this process,
// divided by operations), throughput, and for folsom heap allocations per operation. A second
// table puts the protocols side by side for the main shapes: folsom over ascii, binary and
// meta, libmemcached over ascii and binary (MEMCACHED_BEHAVIOR_BINARY_PROTOCOL).
//
// Every figure is the median of the repetitions. On a machine other work also loads, compare
// the ratios (measured in the same run, moments apart) rather than the absolute times.
//
//   build/bench/folsom_e2e_bench [--quick] [--cpu N] [--reps N] [--seconds S] [--ops N]
//                                [--case SUBSTRING]
//
// For figures worth comparing, pin the client and the server to the same core:
//   taskset -c 0 build/bench/folsom_e2e_bench      (memcached inherits the mask), or
//   build/bench/folsom_e2e_bench --cpu 0            (pins both itself)
// Sharing one core keeps the two from racing each other for the second CPU of a small VM and
// makes "client CPU" the only thing that differs between the clients.
//
// Under callgrind, only the timed repetitions are collected:
//   valgrind --tool=callgrind --collect-atstart=no build/bench/folsom_e2e_bench
//       --case get.pipe.folsom --reps 1 --ops 20000
//
// Route trees (Options::routes) are measured against the same client without routes, in the
// same run: *.route_pool through {"pools": {"A": ...}, "route": "PoolRoute|A"} (served by the
// pool's own core: it should cost what a plain client costs), *.allsync2 through an
// AllSyncRoute over two pools, A (the first memcached) and B (a second one the bench starts,
// pinned as the first). Their ratios are the "route trees" table:
//   taskset -c 0 build/bench/folsom_e2e_bench --reps 5
//       --case 'route_pool,allsync2,get.pipe.folsom$,mget100.folsom$,set.pipe.folsom$'
#include "e2e/blocking_cases.hpp"
#include "e2e/folsom_cases.hpp"
#include "e2e/keyset.hpp"
#include "e2e/libmemcached_cases.hpp"
#include "e2e/measure.hpp"
#include "e2e/memcached_process.hpp"
#include "e2e/raw_socket_get.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fb = folsom::bench;

namespace {

constexpr std::size_t key_count = 10000;
constexpr std::size_t value_size = 64;
constexpr std::size_t window = 1000;

struct Args {
    bool quick = false;
    int cpu = -1;
    int reps = 0;
    double seconds = 0;
    std::uint64_t ops = 0;
    std::string filter;
};

void usage() {
    std::puts(
        "usage: folsom_e2e_bench [--quick] [--cpu N] [--reps N] [--seconds S] [--ops N]\n"
        "                        [--case SUBSTRING]\n"
        "  --quick      3 short repetitions per case (whole run <= ~10 s)\n"
        "  --cpu N      pin this process and memcached to CPU N (or run under taskset -c N)\n"
        "  --reps N     timed repetitions per case (default 5; median reported)\n"
        "  --seconds S  wall time each repetition aims at (default 0.45; quick 0.08)\n"
        "  --ops N      fixed operations per repetition instead of calibrating\n"
        "  --case S     only the variants whose id contains S (e.g. get.pipe, folsom);\n"
        "               S$ selects exactly the variant S; S1,S2,... any of them");
}

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string s = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", s.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (s == "--quick") {
            a.quick = true;
        } else if (s == "--cpu") {
            a.cpu = std::stoi(value());
        } else if (s == "--reps") {
            a.reps = std::stoi(value());
        } else if (s == "--seconds") {
            a.seconds = std::stod(value());
        } else if (s == "--ops") {
            a.ops = std::stoull(value());
        } else if (s == "--case") {
            a.filter = value();
        } else if (s == "-h" || s == "--help") {
            usage();
            std::exit(0);
        } else {
            std::fprintf(stderr, "unknown argument %s\n", s.c_str());
            usage();
            std::exit(2);
        }
    }
    return a;
}

/// `--case S` selects the variants whose id contains S; `--case S$` only the one whose id is S;
/// `--case S1,S2` those any of S1, S2 selects.
bool selected(const std::string& filter, const std::string& id) {
    if (filter.empty()) return true;
    for (std::size_t at = 0; at <= filter.size();) {
        std::size_t end = filter.find(',', at);
        if (end == std::string::npos) end = filter.size();
        const std::string one = filter.substr(at, end - at);
        at = end + 1;
        if (one.empty()) continue;
        if (one.back() == '$' ? id == one.substr(0, one.size() - 1)
                              : id.find(one) != std::string::npos)
            return true;
    }
    return false;
}

/// One measured variant: `units` is what one operation counts as in the per-op figure (the
/// keys of a multi-get, for per-key rows, are applied when printing).
struct Variant {
    std::string id;
    std::string what;
    std::uint64_t calibration_ops;
    fb::CaseBody body;
};

struct Row {
    std::string label;
    std::string folsom;              // variant id
    std::vector<std::string> peers;  // best (lowest CPU) of these is the comparison
    std::string peer_label;
    double divide = 1;       // per-key rows: keys per op
    double peer_divide = 0;  // the peer's keys per op, when not `divide` (0: as `divide`)
};

Row row(std::string label, std::string folsom, std::vector<std::string> peers,
        std::string peer_label, double divide = 1, double peer_divide = 0) {
    return Row{std::move(label), std::move(folsom), std::move(peers), std::move(peer_label),
               divide,           peer_divide};
}

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

/// A comparison table: each row's variant against the best of its peers (ratios of client CPU
/// within this run). `subject` heads the first columns ("folsom").
void print_rows(const std::map<std::string, fb::Measurement>& results, const std::vector<Row>& rows,
                const char* subject) {
    std::printf(
        "| case | %s CPU µs | %s kops/s | %s allocs/op | peer | peer CPU µs | "
        "peer kops/s | %s/peer CPU |\n",
        subject, subject, subject, subject);
    std::printf("|---|---:|---:|---:|---|---:|---:|---:|\n");
    for (const auto& r : rows) {
        auto f = results.find(r.folsom);
        if (f == results.end()) continue;
        const fb::Measurement* peer = nullptr;
        std::string peer_id;
        for (const auto& id : r.peers) {
            auto p = results.find(id);
            if (p != results.end() && (!peer || p->second.cpu_us_per_op < peer->cpu_us_per_op)) {
                peer = &p->second;
                peer_id = id;
            }
        }
        const double fc = f->second.cpu_us_per_op / r.divide;
        const double pc =
            peer ? peer->cpu_us_per_op / (r.peer_divide > 0 ? r.peer_divide : r.divide) : 0;
        const double ratio = peer ? fc / pc : 0;
        const double kops_div = r.divide == 1 ? 1e3 : 1e3 / r.divide;  // per-key rows: kkeys/s
        const double peer_kops_div = r.peer_divide > 0 ? 1e3 / r.peer_divide : kops_div;
        std::printf(
            "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.label.c_str(), fmt("%.3f", fc).c_str(),
            fmt("%.1f", f->second.ops_per_s / kops_div).c_str(),
            fmt("%.2f", f->second.allocs_per_op / r.divide).c_str(),
            peer ? (r.peer_label + (r.peers.size() > 1 ? " (" + peer_id + ")" : "")).c_str() : "–",
            peer ? fmt("%.3f", pc).c_str() : "–",
            peer ? fmt("%.1f", peer->ops_per_s / peer_kops_div).c_str() : "–",
            peer ? fmt("%.2f", ratio).c_str() : "–");
    }
}

/// The route trees against the same client without routes: a tree that is one PoolRoute is
/// served by the pool's own core, and an AllSyncRoute over two pools sends each request twice.
void print_route_trees(const std::map<std::string, fb::Measurement>& results) {
    const std::vector<Row> rows = {
        row("pipelined get (1000 in flight), PoolRoute\\|A / no routes",
            "get.pipe.folsom.route_pool", {"get.pipe.folsom"}, "folsom without routes", 1),
        row("multi-get 100 keys, PoolRoute\\|A / no routes, per op", "mget100.folsom.route_pool",
            {"mget100.folsom"}, "folsom without routes", 1),
        row("pipelined set (1000 in flight), AllSyncRoute over 2 pools / one server",
            "set.pipe.folsom.allsync2", {"set.pipe.folsom"}, "folsom without routes", 1),
        row("pipelined get (1000 in flight), AllSyncRoute over 2 pools / one server",
            "get.pipe.folsom.allsync2", {"get.pipe.folsom"}, "folsom without routes"),
    };
    bool any = false;
    for (const auto& r : rows)
        any = any || results.count(r.folsom) != 0;
    if (!any) return;
    std::printf(
        "\nRoute trees (Options::routes) against the same client without routes (CPU per "
        "operation, median; ratios within this run):\n\n");
    print_rows(results, rows, "routed");
}

/// The protocol table: for each shape, folsom over ascii, binary and meta and libmemcached
/// over ascii and binary, with each one's CPU as a ratio of folsom ascii's and of libmemcached
/// ascii's (the same run, so the ratios hold even when the machine is loaded).
void print_protocol_table(const std::map<std::string, fb::Measurement>& results) {
    struct Shape {
        const char* label;
        const char* prefix;  // variant ids: <prefix>.<client>[.<protocol>]
        const char*
            libmemcached_suffix;  // libmemcached's ascii variant: <prefix>.libmemcached<suffix>
        double divide;            // per-key rows: keys per operation
    };
    const Shape shapes[] = {
        {"sequential get", "get.seq", "", 1},
        {"pipelined get, 1000 in flight (libmemcached: mget 1000 + fetch)", "get.pipe", "", 1},
        {"multi-get 100 keys, per key", "mget100", "", 100},
        {"sequential set", "set.seq", "", 1},
        {"pipelined set, 1000 in flight (libmemcached: BUFFER_REQUESTS)", "set.pipe", "_buffered",
         1},
    };
    struct Client {
        const char* name;
        const char* protocol;
    };
    const Client clients[] = {{"folsom", "ascii"},
                              {"folsom", "binary"},
                              {"folsom", "meta"},
                              {"libmemcached", "ascii"},
                              {"libmemcached", "binary"}};
    auto id_of = [](const Shape& s, const Client& c) {
        std::string id = std::string(s.prefix) + "." + c.name;
        if (std::string(c.protocol) == "ascii")
            return std::string(c.name) == "libmemcached" ? id + s.libmemcached_suffix : id;
        return id + "." + c.protocol;
    };
    auto find = [&](const std::string& id) -> const fb::Measurement* {
        auto it = results.find(id);
        return it == results.end() ? nullptr : &it->second;
    };

    std::printf(
        "\nBy protocol (median of the repetitions; ratios are of client CPU per operation "
        "within this run):\n\n");
    std::printf(
        "| case | client | protocol | CPU µs/op | kops/s | allocs/op | CPU ÷ folsom ascii | "
        "CPU ÷ libmemcached ascii |\n");
    std::printf("|---|---|---|---:|---:|---:|---:|---:|\n");
    for (const auto& s : shapes) {
        const fb::Measurement* folsom_ascii = find(id_of(s, clients[0]));
        const fb::Measurement* lm_ascii = find(id_of(s, clients[3]));
        bool first = true;
        for (const auto& c : clients) {
            const fb::Measurement* m = find(id_of(s, c));
            if (!m) continue;
            const double kops_div = s.divide == 1 ? 1e3 : 1e3 / s.divide;
            const bool counted = std::string(c.name) == "folsom";
            std::printf(
                "| %s | %s | %s | %.3f | %.1f | %s | %s | %s |\n", first ? s.label : "", c.name,
                c.protocol, m->cpu_us_per_op / s.divide, m->ops_per_s / kops_div,
                counted ? fmt("%.2f", m->allocs_per_op / s.divide).c_str() : "n/a",
                folsom_ascii ? fmt("%.2f", m->cpu_us_per_op / folsom_ascii->cpu_us_per_op).c_str()
                             : "–",
                lm_ascii ? fmt("%.2f", m->cpu_us_per_op / lm_ascii->cpu_us_per_op).c_str() : "–");
            first = false;
        }
    }
}

}  // namespace

int main(int argc, char** argv) try {
    const Args args = parse(argc, argv);
    if (args.cpu >= 0 && !fb::pin_to_cpu(args.cpu)) {
        std::fprintf(stderr, "cannot pin to CPU %d\n", args.cpu);
        return 2;
    }
    fb::Plan base;
    base.reps = args.reps > 0 ? args.reps : (args.quick ? 3 : 5);
    base.seconds_per_rep = args.seconds > 0 ? args.seconds : (args.quick ? 0.08 : 0.45);
    base.fixed_ops = args.ops;

    fb::MemcachedProcess server(args.cpu);
    const fb::KeySet keys(key_count, value_size);
    auto lm = std::make_unique<fb::LibmemcachedCases>(server.port(), keys);
    lm->set(keys.size());  // preload every key
    auto fo = std::make_unique<fb::FolsomCases>(server.port(), keys);
    auto raw = std::make_unique<fb::RawSocketGet>(server.port(), keys);
    // The synchronous facade, with either driver.
    auto blocking_thread = std::make_unique<fb::BlockingCases>(
        server.port(), keys, folsom::BlockingClient::Driver::io_thread);
    auto blocking_caller = std::make_unique<fb::BlockingCases>(
        server.port(), keys, folsom::BlockingClient::Driver::caller);
    // The other protocols, for the protocol table.
    auto lm_bin = std::make_unique<fb::LibmemcachedCases>(server.port(), keys, true);
    auto fo_bin = std::make_unique<fb::FolsomCases>(server.port(), keys, folsom::Protocol::binary);
    auto fo_meta = std::make_unique<fb::FolsomCases>(server.port(), keys, folsom::Protocol::meta);
    // A second memcached on a Unix socket (memcached -s has no TCP listener), for its rows.
    fb::MemcachedProcess unix_server(args.cpu, fb::OnUnixSocket{});
    auto lm_unix = std::make_unique<fb::LibmemcachedCases>(unix_server.socket_path(), keys);
    lm_unix->set(keys.size());  // preload every key
    auto fo_unix = std::make_unique<fb::FolsomCases>(unix_server.socket_path(), keys);
    auto raw_unix = std::make_unique<fb::RawSocketGet>(unix_server.socket_path(), keys);
    // Route trees: one PoolRoute over the first memcached (served by the pool's own core), and
    // an AllSyncRoute over two pools, the first memcached and a second one (pinned alike).
    fb::MemcachedProcess server2(args.cpu);
    fb::LibmemcachedCases(server2.port(), keys).set(keys.size());  // preload every key
    const std::string server1_addr = "127.0.0.1:" + std::to_string(server.port());
    const std::string server2_addr = "127.0.0.1:" + std::to_string(server2.port());
    const std::string route_pool_json =
        R"({"pools": {"A": {"servers": [")" + server1_addr + R"("]}}, "route": "PoolRoute|A"})";
    const std::string allsync2_json = R"({"pools": {"A": {"servers": [")" + server1_addr +
                                      R"("]}, "B": {"servers": [")" + server2_addr +
                                      R"("]}}, "route": {"type": "AllSyncRoute", )"
                                      R"("children": ["PoolRoute|A", "PoolRoute|B"]}})";
    auto fo_route_pool =
        std::make_unique<fb::FolsomCases>(folsom::RouteConfig::parse(route_pool_json), keys);
    auto fo_allsync2 =
        std::make_unique<fb::FolsomCases>(folsom::RouteConfig::parse(allsync2_json), keys);

    auto batches = [](std::uint64_t ops, std::size_t per) { return (ops + per - 1) / per; };
    std::vector<Variant> variants = {
        {"get.seq.raw", "raw blocking socket: send get, recv until END", 2000,
         [&](std::uint64_t n) { return raw->get(n); }},
        {"get.seq.folsom", "folsom get (owning Value), next get from the completion", 2000,
         [&](std::uint64_t n) { return fo->get(n, 1); }},
        {"get.seq.libmemcached", "libmemcached memcached_get loop", 2000,
         [&](std::uint64_t n) { return lm->get(n); }},
        {"get.seq.blocking", "folsom::BlockingClient get loop, its own I/O thread", 2000,
         [&](std::uint64_t n) { return blocking_thread->get(n); }},
        {"get.seq.blocking_caller",
         "folsom::BlockingClient get loop, caller-driven (Driver::caller)", 2000,
         [&](std::uint64_t n) { return blocking_caller->get(n); }},
        {"get.pipe.folsom", "folsom get, 1000 in flight", 20000,
         [&](std::uint64_t n) { return fo->get(n, window); }},
        {"get.pipe.folsom.route_pool", "folsom get through PoolRoute\\|A, 1000 in flight", 20000,
         [&](std::uint64_t n) { return fo_route_pool->get(n, window); }},
        {"get.pipe.folsom.allsync2",
         "folsom get through AllSyncRoute over pools A and B, 1000 in flight", 20000,
         [&](std::uint64_t n) { return fo_allsync2->get(n, window); }},
        {"get.pipe.folsom_view", "folsom get_view (zero-copy), 1000 in flight", 20000,
         [&](std::uint64_t n) { return fo->get_view(n, window); }},
        {"get.pipe.folsom_view_random",
         "folsom get_view, 1000 in flight, keys at random (folsom bench's default order)", 20000,
         [&](std::uint64_t n) { return fo->get_view_random(n, window); }},
        {"get.batch.folsom", "folsom get, batches of 1000 (issue all, await all)", 20000,
         [&](std::uint64_t n) { return fo->get(n, window, true); }},
        {"get.batch.folsom_view", "folsom get_view, batches of 1000", 20000,
         [&](std::uint64_t n) { return fo->get_view(n, window, true); }},
        {"get.pipe.libmemcached", "libmemcached mget 1000 keys + fetch_result (blocking)", 20000,
         [&](std::uint64_t n) { return lm->mget(batches(n, window), window, false) * window; }},
        {"get.pipe.libmemcached_noblock", "as above with MEMCACHED_BEHAVIOR_NO_BLOCK", 20000,
         [&](std::uint64_t n) { return lm->mget(batches(n, window), window, true) * window; }},
        {"mget1000.folsom", "folsom get_multi, 1000 keys (per key)", 20000,
         [&](std::uint64_t n) { return fo->get_multi(batches(n, window), window) * window; }},
        {"mget16.folsom", "folsom get_multi, 16 keys", 2000,
         [&](std::uint64_t n) { return fo->get_multi(n, 16); }},
        {"mget16.libmemcached", "libmemcached mget 16 + fetch_result", 2000,
         [&](std::uint64_t n) { return lm->mget(n, 16, false); }},
        {"mget100.folsom", "folsom get_multi, 100 keys", 500,
         [&](std::uint64_t n) { return fo->get_multi(n, 100); }},
        {"mget100.folsom.route_pool", "folsom get_multi through PoolRoute\\|A, 100 keys", 500,
         [&](std::uint64_t n) { return fo_route_pool->get_multi(n, 100); }},
        {"mget100.folsom_view", "folsom get_multi_view (zero-copy), 100 keys", 500,
         [&](std::uint64_t n) { return fo->get_multi_view(n, 100); }},
        {"mget100.libmemcached", "libmemcached mget 100 + fetch_result", 500,
         [&](std::uint64_t n) { return lm->mget(n, 100, false); }},
        {"mget100.raw", "raw blocking socket: send a 100-key get, recv until END", 500,
         [&](std::uint64_t n) { return raw->get_multi(n, 100); }},
        {"set.seq.folsom", "folsom set, next set from the completion", 2000,
         [&](std::uint64_t n) { return fo->set(n, 1); }},
        {"set.seq.libmemcached", "libmemcached memcached_set loop", 2000,
         [&](std::uint64_t n) { return lm->set(n); }},
        {"set.pipe.folsom", "folsom set, 1000 in flight", 20000,
         [&](std::uint64_t n) { return fo->set(n, window); }},
        {"set.pipe.folsom.allsync2",
         "folsom set through AllSyncRoute over pools A and B, 1000 in flight", 20000,
         [&](std::uint64_t n) { return fo_allsync2->set(n, window); }},
        {"set.pipe.libmemcached_buffered",
         "libmemcached set, NO_BLOCK + BUFFER_REQUESTS, get per 1000", 20000,
         [&](std::uint64_t n) { return lm->set_buffered(n, window, false); }},
        {"set.pipe.libmemcached_noreply", "as above + NOREPLY", 20000,
         [&](std::uint64_t n) { return lm->set_buffered(n, window, true); }},
        {"set.pipe.folsom_quiet", "folsom quiet set (noreply), 1000 in flight", 20000,
         [&](std::uint64_t n) { return fo->set_quiet(n, window); }},
        {"setmulti100.folsom", "folsom set_multi, 100 keys", 500,
         [&](std::uint64_t n) { return fo->set_multi(n, 100); }},
        {"get.seq.raw.unix", "raw blocking Unix socket: send get, recv until END", 2000,
         [&](std::uint64_t n) { return raw_unix->get(n); }},
        {"get.seq.folsom.unix", "folsom get over a Unix socket, sequential", 2000,
         [&](std::uint64_t n) { return fo_unix->get(n, 1); }},
        {"get.seq.libmemcached.unix", "libmemcached memcached_get loop, Unix socket", 2000,
         [&](std::uint64_t n) { return lm_unix->get(n); }},
        {"get.pipe.folsom.unix", "folsom get over a Unix socket, 1000 in flight", 20000,
         [&](std::uint64_t n) { return fo_unix->get(n, window); }},
    };
    // The protocol table's shapes over the other protocols (ids: <shape>.<client>.<protocol>).
    for (auto& [proto, f] : {std::pair{"binary", fo_bin.get()}, std::pair{"meta", fo_meta.get()}}) {
        fb::FolsomCases* c = f;
        const std::string p = proto;
        variants.push_back({"get.seq.folsom." + p, "folsom get over " + p + ", sequential", 2000,
                            [c](std::uint64_t n) { return c->get(n, 1); }});
        variants.push_back({"get.pipe.folsom." + p, "folsom get over " + p + ", 1000 in flight",
                            20000, [c](std::uint64_t n) { return c->get(n, window); }});
        variants.push_back({"mget100.folsom." + p, "folsom get_multi over " + p + ", 100 keys", 500,
                            [c](std::uint64_t n) { return c->get_multi(n, 100); }});
        variants.push_back({"set.seq.folsom." + p, "folsom set over " + p + ", sequential", 2000,
                            [c](std::uint64_t n) { return c->set(n, 1); }});
        variants.push_back({"set.pipe.folsom." + p, "folsom set over " + p + ", 1000 in flight",
                            20000, [c](std::uint64_t n) { return c->set(n, window); }});
        variants.push_back({"set.pipe.folsom_quiet." + p,
                            "folsom quiet set over " + p + " (true outcomes), 1000 in flight",
                            20000, [c](std::uint64_t n) { return c->set_quiet(n, window); }});
        variants.push_back({"setmulti100.folsom." + p, "folsom set_multi over " + p + ", 100 keys",
                            500, [c](std::uint64_t n) { return c->set_multi(n, 100); }});
    }
    {
        fb::LibmemcachedCases* c = lm_bin.get();
        variants.push_back({"get.seq.libmemcached.binary",
                            "libmemcached memcached_get loop, binary", 2000,
                            [c](std::uint64_t n) { return c->get(n); }});
        variants.push_back({"get.pipe.libmemcached.binary",
                            "libmemcached mget 1000 keys + fetch_result, binary", 20000,
                            [c, batches](std::uint64_t n) {
                                return c->mget(batches(n, window), window, false) * window;
                            }});
        variants.push_back({"mget100.libmemcached.binary",
                            "libmemcached mget 100 + fetch_result, binary", 500,
                            [c](std::uint64_t n) { return c->mget(n, 100, false); }});
        variants.push_back({"set.seq.libmemcached.binary",
                            "libmemcached memcached_set loop, binary", 2000,
                            [c](std::uint64_t n) { return c->set(n); }});
        variants.push_back({"set.pipe.libmemcached.binary",
                            "libmemcached set, NO_BLOCK + BUFFER_REQUESTS, get per 1000, binary",
                            20000,
                            [c](std::uint64_t n) { return c->set_buffered(n, window, false); }});
    }

    std::printf("# folsom-cpp end-to-end benchmark\n\n");
    std::printf(
        "memcached pid %d on 127.0.0.1:%u (-t 1), %zu keys, %zu-byte values; "
        "CPUs allowed (client and server): %s%s; load average at start: %s; %d reps, median "
        "reported\n\n",
        static_cast<int>(server.pid()), server.port(), key_count, value_size,
        fb::cpu_affinity().c_str(), args.cpu >= 0 ? " (--cpu)" : "", fb::load_average().c_str(),
        base.reps);
    std::printf("The *.unix rows: a second memcached (pid %d, -t 1) on the Unix socket %s.\n\n",
                static_cast<int>(unix_server.pid()), unix_server.socket_path().c_str());
    std::printf(
        "The *.route_pool rows: Options::routes %s. The *.allsync2 rows: %s (B: a third "
        "memcached, pid %d, -t 1).\n\n",
        route_pool_json.c_str(), allsync2_json.c_str(), static_cast<int>(server2.pid()));
    std::fflush(stdout);

    std::map<std::string, fb::Measurement> results;
    for (const auto& v : variants) {
        if (!selected(args.filter, v.id)) continue;
        fb::Plan p = base;
        p.calibration_ops =
            args.ops > 0 ? std::min(args.ops, v.calibration_ops) : v.calibration_ops;
        p.min_ops = std::min<std::uint64_t>(v.calibration_ops, 1000);
        results[v.id] = fb::measure(p, v.body);
        const auto& m = results[v.id];
        std::fprintf(
            stderr,
            "  %-32s %8.3f us/op (%2.0f%% sys)  %10.0f ops/s  %6.2f allocs/op  %5.2f sleeps/op  "
            "%5.2f preempted/op  (%llu ops)\n",
            v.id.c_str(), m.cpu_us_per_op, m.sys_share * 100, m.ops_per_s, m.allocs_per_op,
            m.sleeps_per_op, m.preemptions_per_op, static_cast<unsigned long long>(m.ops));
    }

    const std::vector<Row> rows = {
        row("sequential get", "get.seq.folsom", {"get.seq.libmemcached"}, "libmemcached get"),
        row("sequential get vs raw socket", "get.seq.folsom", {"get.seq.raw"}, "raw socket", 1),
        row("sequential get, BlockingClient caller-driven", "get.seq.blocking_caller",
            {"get.seq.libmemcached"}, "libmemcached get"),
        row("sequential get, BlockingClient with its I/O thread", "get.seq.blocking",
            {"get.seq.libmemcached"}, "libmemcached get"),
        row("pipelined get (1000 in flight)", "get.pipe.folsom",
            {"get.pipe.libmemcached", "get.pipe.libmemcached_noblock"}, "libmemcached mget+fetch",
            1),
        row("pipelined get_view (zero-copy)", "get.pipe.folsom_view",
            {"get.pipe.libmemcached", "get.pipe.libmemcached_noblock"}, "libmemcached mget+fetch",
            1),
        row("get, batches of 1000 (mget-shaped)", "get.batch.folsom",
            {"get.pipe.libmemcached", "get.pipe.libmemcached_noblock"}, "libmemcached mget+fetch",
            1),
        row("get_view, batches of 1000", "get.batch.folsom_view",
            {"get.pipe.libmemcached", "get.pipe.libmemcached_noblock"}, "libmemcached mget+fetch",
            1),
        row("1000-key multi-get, per key (libmemcached's pipelined form)", "mget1000.folsom",
            {"get.pipe.libmemcached", "get.pipe.libmemcached_noblock"}, "libmemcached mget+fetch",
            1),
        row("multi-get 16 keys, per op", "mget16.folsom", {"mget16.libmemcached"},
            "libmemcached mget+fetch"),
        row("multi-get 16 keys, per key", "mget16.folsom", {"mget16.libmemcached"},
            "libmemcached mget+fetch", 16),
        row("multi-get 100 keys, per op", "mget100.folsom", {"mget100.libmemcached"},
            "libmemcached mget+fetch"),
        row("multi-get 100 keys, per key", "mget100.folsom", {"mget100.libmemcached"},
            "libmemcached mget+fetch", 100),
        row("multi-get_view 100 keys (zero-copy), per key", "mget100.folsom_view",
            {"mget100.libmemcached"}, "libmemcached mget+fetch", 100),
        row("multi-get_view 100 keys vs raw socket, per key", "mget100.folsom_view",
            {"mget100.raw"}, "raw socket", 100),
        row("sequential set", "set.seq.folsom", {"set.seq.libmemcached"}, "libmemcached set"),
        row("pipelined set (1000 in flight)", "set.pipe.folsom", {"set.pipe.libmemcached_buffered"},
            "libmemcached BUFFER_REQUESTS"),
        row("pipelined set vs noreply", "set.pipe.folsom", {"set.pipe.libmemcached_noreply"},
            "libmemcached BUFFER+NOREPLY"),
        row("quiet pipelined set (ascii noreply)", "set.pipe.folsom_quiet",
            {"set.pipe.libmemcached_noreply"}, "libmemcached BUFFER+NOREPLY", 1),
        row("quiet pipelined set, meta (true outcomes)", "set.pipe.folsom_quiet.meta",
            {"set.pipe.libmemcached_noreply"}, "libmemcached BUFFER+NOREPLY", 1),
        row("quiet pipelined set, binary (true outcomes)", "set.pipe.folsom_quiet.binary",
            {"set.pipe.libmemcached_noreply"}, "libmemcached BUFFER+NOREPLY"),
        // libmemcached has no multi-key set: its buffered pipelined set, per set, is the peer.
        row("set_multi 100 keys, per key", "setmulti100.folsom", {"set.pipe.libmemcached_buffered"},
            "libmemcached BUFFER_REQUESTS set", 100, 1),
        row("set_multi 100 keys over meta, per key", "setmulti100.folsom.meta",
            {"set.pipe.libmemcached_buffered"}, "libmemcached BUFFER_REQUESTS set", 100, 1),
        row("set_multi 100 keys over binary, per key", "setmulti100.folsom.binary",
            {"set.pipe.libmemcached_buffered"}, "libmemcached BUFFER_REQUESTS set", 100, 1),
        row("sequential get over a Unix socket", "get.seq.folsom.unix",
            {"get.seq.libmemcached.unix"}, "libmemcached get, Unix socket"),
        row("sequential get over a Unix socket vs raw Unix socket", "get.seq.folsom.unix",
            {"get.seq.raw.unix"}, "raw Unix socket", 1),
        row("sequential get, Unix socket vs TCP loopback", "get.seq.folsom.unix",
            {"get.seq.folsom"}, "folsom over TCP loopback"),
        row("pipelined get over a Unix socket", "get.pipe.folsom.unix", {"get.pipe.folsom"},
            "folsom over TCP loopback"),
    };

    print_rows(results, rows, "folsom");
    print_route_trees(results);

    print_protocol_table(results);

    std::printf(
        "\nEvery variant (CPU and allocations per operation; a multi-get is one operation):\n\n");
    std::printf(
        "| variant | what | CPU µs/op | kops/s | allocs/op | sleeps/op | preempted/op | "
        "ops/rep |\n");
    std::printf("|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (const auto& v : variants) {
        auto it = results.find(v.id);
        if (it == results.end()) continue;
        const auto& m = it->second;
        // folsom and the raw socket allocate with operator new (counted); libmemcached with
        // malloc (not seen).
        const bool counted = v.id.find("libmemcached") == std::string::npos;
        std::printf("| %s | %s | %.3f | %.1f | %s | %.2f | %.2f | %llu |\n", v.id.c_str(),
                    v.what.c_str(), m.cpu_us_per_op, m.ops_per_s / 1e3,
                    counted ? fmt("%.2f", m.allocs_per_op).c_str() : "n/a (malloc)",
                    m.sleeps_per_op, m.preemptions_per_op, static_cast<unsigned long long>(m.ops));
    }
    std::printf(
        "\nkops/s of per-key rows are thousands of keys per second. Allocations count "
        "operator new calls; libmemcached's malloc calls are not seen. Sleeps and preemptions "
        "are the client's voluntary and involuntary context switches (getrusage): a sequential "
        "asynchronous get that is preempted at its send finds its reply with one direct read; "
        "one that sleeps waits in epoll_wait, one more system call and event-loop turn than a "
        "blocking recv.\n");

    raw.reset();
    fo.reset();
    fo_bin.reset();
    fo_meta.reset();
    lm.reset();
    lm_bin.reset();
    raw_unix.reset();
    fo_unix.reset();
    lm_unix.reset();
    fo_route_pool.reset();
    fo_allsync2.reset();
    server2.stop();
    unix_server.stop();
    server.stop();
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "folsom_e2e_bench: %s\n", e.what());
    return 1;
}
