#include "bench/bench_command.hpp"

#include "folsom/error.hpp"
#include "folsom/metrics_registry.hpp"

#include "bench/cpu.hpp"
#include "bench/embedded_memcached.hpp"
#include "bench/floor.hpp"
#include "bench/metrics_table.hpp"
#include "bench/progress.hpp"
#include "bench/report_html.hpp"
#include "bench/report_json.hpp"
#include "bench/summary.hpp"
#include "cli_error.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <signal.h>
#include <unistd.h>

namespace folsom::bench {
namespace {

using cli::CliError;

std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);  // used from a signal handler

/// First Ctrl-C: stop issuing, finish in-flight requests, report. Second: stop the embedded
/// server and leave at once.
extern "C" void on_interrupt(int) {
    if (!g_interrupted.exchange(true)) return;
    const pid_t server = EmbeddedMemcached::running_pid();
    if (server > 0) ::kill(server, SIGKILL);
    ::_exit(130);
}

void install_interrupt_handler() {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (f) f << text;
    if (!f || !f.flush())
        throw CliError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
}

}  // namespace

void BenchCommand::add_to(CLI::App& app, std::function<int()>& action) {
    auto* b = app.add_subcommand("bench",
                                 "Load generator: keeps D requests in flight per "
                                 "connection and reports throughput, client CPU per "
                                 "operation and latency percentiles");
    b->add_option("--op", op_name_, "Workload: get, set, mget (multi-get) or mixed")
        ->check(CLI::IsMember({"get", "set", "mget", "mixed"}))
        ->default_str("get");
    b->add_flag("--noreply", w_.noreply,
                "Measured sets are quiet (fire-and-forget): meta and binary still report each "
                "one's outcome at the next barrier; ascii sends noreply (outcome unknown)");
    b->add_option("--keys", w_.keys, "Key space: keys k0..k<N-1> (default 10000)")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000'000'000}));
    b->add_option("--key-order", key_order_,
                  "random (default), or sequential: each thread walks the key space in order, "
                  "as the end-to-end benchmark's rows do (lighter on the caches a client shares "
                  "with the server on one CPU)")
        ->check(CLI::IsMember({"random", "sequential"}));
    b->add_option("--value-size", w_.value_size,
                  "Bytes per value for sets and preload (default 64)")
        ->check(CLI::Range(std::size_t{0}, Options{}.max_value_size));
    b->add_option("--batch", w_.batch, "Keys per multi-get, for --op mget (default 16)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
    b->add_option("--depth", w_.depth, "Requests in flight per connection (default 64)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
    b->add_option("--connections", w_.connections,
                  "Connections per server, per thread (Options::connections_per_server; "
                  "default 1)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1024}));
    b->add_option("--threads", w_.threads, "I/O threads, each with its own Client (default 1)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1024}));
    auto* dur = b->add_option("--duration", w_.duration_s,
                              "Seconds to run (default 5; with --requests: a cap, default 60)")
                    ->check(CLI::Range(0.001, 86400.0));
    b->add_option("--requests", w_.requests, "Stop after N requests (whichever comes first)")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 62));
    b->add_option("--set-ratio", w_.set_ratio, "Share of sets for --op mixed (default 0.1)")
        ->check(CLI::Range(0.0, 1.0));
    auto* pre = b->add_flag("--preload,!--no-preload", preload_,
                            "Set every key once before measuring (default: on, except for "
                            "--op set)");
    b->add_option("--json", json_path_, "Also write the summary as JSON to FILE")
        ->type_name("FILE");
    b->add_option("--html", html_path_,
                  "Also write a self-contained HTML report (inline SVG plots) to FILE")
        ->type_name("FILE");
    b->add_flag("--metrics", metrics_,
                "After the run, print a per-server table from the client's own metrics "
                "(requests, hits, misses, errors, p50/p99, bytes, reconnects)");
    b->add_flag("--owning", w_.owning,
                "Gets through get / get_multi, which copy every value into an owning Value, "
                "instead of the zero-copy get_view / get_multi_view (the default: the bench "
                "keeps no value)");
    b->add_option("--latency-every", w_.latency_every,
                  "Time one request in N of each request slot (default: every request up to 64 "
                  "in flight per thread, else about 64 of those in flight: each timed request "
                  "costs a clock reading)")
        ->check(CLI::Range(1u, 1u << 20));
    b->add_flag("--floor", floor_,
                "After the run, the same gets (or multi-gets) through a raw blocking socket, "
                "no library: depth requests per send, read whole; prints its client CPU next to "
                "folsom's, and the ratio (--op get or mget, one server, no TLS or SASL)");
    b->add_option("--cpu", cpu_, "Pin this process to CPU N while measuring (sched_setaffinity)")
        ->check(CLI::Range(0, 4095));
    b->footer(
        "With neither --servers, --config nor $MEMCACHED_SERVERS, bench starts a private\n"
        "memcached (/usr/bin/memcached -l 127.0.0.1 -p <free port> -U 0) and stops it\n"
        "afterwards. With --config it runs through the routes over the file's pools and then\n"
        "prints what each route did (requests, failovers, shadow requests and errors).\n"
        "Every run is bounded by count and time. For comparable numbers pin server and client\n"
        "to the same CPU: `taskset -c 0 folsom bench` (the embedded memcached inherits the\n"
        "affinity), or `taskset -c 0 memcached ...` and `taskset -c 0 folsom --servers ... "
        "bench`.");
    b->callback([this, &action, dur, pre] {
        duration_given_ = dur->count() > 0;
        preload_given_ = pre->count() > 0;
        action = [this] { return run(); };
    });
}

int BenchCommand::run() {
    w_.op = op_name_ == "set"     ? Op::set
            : op_name_ == "mget"  ? Op::mget
            : op_name_ == "mixed" ? Op::mixed
                                  : Op::get;
    w_.preload = preload_given_ ? preload_ : w_.op != Op::set;
    w_.keys_in_order = key_order_ == "sequential";
    if (w_.requests != 0 && !duration_given_) w_.duration_s = 60;
    if (w_.op == Op::mget && w_.batch > w_.keys)
        throw CliError(
            fmt::format("--batch {} is larger than the key space (--keys {})", w_.batch, w_.keys));
    if (w_.op != Op::mget) w_.batch = 1;
    if (floor_) {
        if (w_.op != Op::get && w_.op != Op::mget)
            throw CliError("--floor measures --op get and --op mget (a raw socket's gets)");
        if (g_.routed())
            throw CliError("--floor needs one server: --servers with one address, or none");
        if (g_.secured())
            throw CliError(
                "--floor's raw socket speaks neither TLS nor SASL: drop --tls and "
                "--username");
    }

    install_interrupt_handler();

    Summary s;
    s.workload = w_;
    s.protocol = g_.protocol_name;
    s.cpu = cpu_;
    std::vector<std::string> servers;
    std::unique_ptr<EmbeddedMemcached> embedded;
    if (g_.routed()) {
        s.config = g_.config;  // the pools of --config name the servers
    } else if (g_.servers_named()) {
        servers = g_.server_list();
    } else if (g_.secured()) {
        // The private server is a plain one: logging in to it or verifying it would fail.
        throw CliError(
            "--username and --tls need --servers, --config or $MEMCACHED_SERVERS: the memcached "
            "bench starts by itself runs without SASL and TLS");
    } else {
        try {
            embedded = std::make_unique<EmbeddedMemcached>();
        } catch (const std::exception& e) {
            throw CliError(e.what());
        }
        servers = {embedded->address()};
        s.embedded_server = true;
    }
    if (floor_ && servers.size() != 1)
        throw CliError("--floor needs one server: --servers with one address, or none");
    if (cpu_ >= 0) {
        // After the embedded server started: only folsom is pinned by --cpu.
        if (auto why = pin_to_cpu(cpu_); !why.empty())
            throw CliError(fmt::format("--cpu {}: {}", cpu_, why));
    }

    std::unique_ptr<Runner> runner;
    // One registry for every worker's client: a server is one row whatever the threads.
    std::shared_ptr<MetricsRegistry> registry;
    try {
        Options options = g_.options(servers);
        if (metrics_) {
            registry = std::make_shared<MetricsRegistry>();
            options.metrics = registry;
        }
        runner = std::make_unique<Runner>(w_, options, g_interrupted);
    } catch (const std::system_error& e) {
        throw CliError(cli::describe_setup_failure(e, g_.protocol_name));
    }
    s.servers = runner->servers();
    if (auto failure = runner->check_servers(&s.server_versions)) {
        cli::ErrorContext ctx;
        ctx.server = failure->server;
        ctx.timeout_ms = g_.timeout_ms;
        ctx.sasl = !g_.username.empty();
        throw CliError(cli::describe(failure->error, ctx));
    }

    std::string versions;
    for (std::size_t i = 0; i < s.servers.size(); ++i)
        versions += fmt::format("{}{} (memcached {})", i ? ", " : "", s.servers[i],
                                i < s.server_versions.size() ? s.server_versions[i] : "?");
    if (embedded)
        fmt::print("server: {} - embedded {}, pid {}\n", versions, embedded->binary(),
                   embedded->pid());
    else
        fmt::print("server: {}\n", versions);
    if (g_.routed()) fmt::print("routes: {}\n", g_.config);
    fmt::print(
        "bench: op={} keys={} value-size={}{} depth={} connections={} threads={} "
        "protocol={}{}{}{}{}{}\n",
        to_string(w_.op), w_.keys, w_.value_size,
        w_.op == Op::mget ? fmt::format(" batch={}", w_.batch) : "", w_.depth, w_.connections,
        w_.threads, g_.protocol_name,
        w_.op == Op::set    ? ""
        : w_.op == Op::mget ? (w_.owning ? " api=get_multi" : " api=get_multi_view")
                            : (w_.owning ? " api=get" : " api=get_view"),
        w_.keys_in_order ? " key-order=sequential" : "",
        w_.op == Op::mixed ? fmt::format(" set-ratio={}", w_.set_ratio) : "",
        w_.noreply ? " noreply" : "",
        w_.requests ? fmt::format(" requests={} (cap {} s)", w_.requests, w_.duration_s)
                    : fmt::format(" duration={} s", w_.duration_s));
    std::fflush(stdout);

    if (w_.preload) {
        const PhaseResult pre = runner->preload(std::chrono::seconds(60));
        s.preload_sets = pre.counts.sets;
        fmt::print("preload: {} keys set in {:.2f} s{}\n", pre.counts.sets, pre.elapsed_s,
                   pre.counts.errors ? fmt::format(" ({} errors)", pre.counts.errors) : "");
        std::fflush(stdout);
        if (!pre.finished) {
            std::fflush(stdout);
            throw CliError("preload: requests never completed (client library bug)");
        }
    }

    // The floor's socket connects and checks that key 0 is stored before anything is measured.
    std::unique_ptr<Floor> floor;
    if (floor_) {
        s.floor_server = servers.front();
        try {
            floor = std::make_unique<Floor>(w_, s.floor_server,
                                            std::chrono::milliseconds(g_.timeout_ms));
        } catch (const std::exception& e) {
            throw CliError(fmt::format("--floor: {}", e.what()));
        }
    }

    // The tables cover the measured phase only (the preload has completed: nothing in flight).
    if (registry) registry->reset();
    const std::vector<RouteStats> routes_before = runner->route_stats();
    Progress progress(stdout, ::isatty(STDOUT_FILENO) == 1);
    const CpuTime cpu0 = CpuTime::now();
    PhaseResult r =
        g_interrupted ? PhaseResult{} : runner->run([&](const Tick& t) { progress.tick(t); });
    const CpuTime cpu1 = CpuTime::now();
    progress.finish();

    s.counts = r.counts;
    s.duration_s = r.elapsed_s;
    s.interrupted = g_interrupted.load();
    s.cpu_user_s = cpu1.user_s - cpu0.user_s;
    s.cpu_sys_s = cpu1.sys_s - cpu0.sys_s;
    s.latency_ns = std::shared_ptr<const Histogram>(std::move(r.latency_ns));
    s.latency_every = r.latency_every;
    if (g_.routed()) {
        s.routes = runner->route_stats();
        for (std::size_t i = 0; i < s.routes.size() && i < routes_before.size(); ++i) {
            s.routes[i].requests -= routes_before[i].requests;
            s.routes[i].failovers -= routes_before[i].failovers;
            s.routes[i].shadow_requests -= routes_before[i].shadow_requests;
            s.routes[i].shadow_errors -= routes_before[i].shadow_errors;
        }
    }
    s.compute();
    print_summary(stdout, s);
    if (registry) std::fputs(format_metrics_table(registry->snapshot()).c_str(), stdout);
    if (g_.routed()) std::fputs(format_route_table(s.routes).c_str(), stdout);
    std::fflush(stdout);
    if (!r.finished || !floor) {
        if (!json_path_.empty()) write_file(json_path_, to_json(s));
        if (!html_path_.empty()) write_file(html_path_, to_html(s));
    }

    if (!r.finished) {
        // Workers still hold requests the library never completed: do not wait for them.
        fmt::print(stderr,
                   "folsom: {} requests never completed, even after shutdown (client "
                   "library bug)\n",
                   r.stuck);
        std::fflush(nullptr);
        if (embedded) embedded->stop();
        std::_Exit(2);
    }
    runner.reset();
    if (floor) {
        // After folsom's run, with its threads gone: the process's CPU is the floor's alone.
        if (!s.interrupted) {
            try {
                s.floor = floor->run(g_interrupted);
            } catch (const std::exception& e) {
                // folsom's own run is still reported.
                if (!json_path_.empty()) write_file(json_path_, to_json(s));
                if (!html_path_.empty()) write_file(html_path_, to_html(s));
                throw CliError(fmt::format("--floor: {}", e.what()));
            }
            s.interrupted = s.interrupted || s.floor->interrupted;
            s.compute();
            print_floor(stdout, s);
            std::fflush(stdout);
        }
        floor.reset();
        if (!json_path_.empty()) write_file(json_path_, to_json(s));
        if (!html_path_.empty()) write_file(html_path_, to_html(s));
    }
    if (embedded) embedded->stop();
    if (r.stuck)
        throw CliError(
            fmt::format("{} requests were still in flight past the request timeout", r.stuck));
    if (s.counts.ops == 0 && s.counts.errors > 0) {
        std::string first = s.counts.errors_by_message.empty()
                                ? std::string("?")
                                : s.counts.errors_by_message.begin()->first;
        throw CliError(fmt::format("every request failed ({})", first));
    }
    return s.interrupted ? 130 : 0;
}

}  // namespace folsom::bench
