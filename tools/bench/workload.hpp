// Workload: what `folsom bench` asks of the servers, and the engine that asks it.
//
// Shape of a run: T worker threads, each with its own io_context and its own folsom::Client
// (Options::connections_per_server = C). Each worker keeps depth x C x servers requests in
// flight: one "slot" per outstanding request, and every completion handler issues the slot's
// next request at once. So the pipeline depth the library sees is exactly what was asked
// for, with no thread hand-off between a completion and the next request.
//
// Why one Client per thread (and C connections inside each) instead of one shared Client:
// a Client's I/O runs on the executor it was given, so one io_context per thread means each
// thread owns its connections end to end — the configuration a latency-sensitive service
// would use, and the one that scales with cores without cross-thread wake-ups. C then
// exercises the library's own per-server connection pool (round-robin over C connections).
//
// Every phase is bounded twice: by a request count and by a deadline (and by Ctrl-C).
#pragma once

#include "folsom/options.hpp"
#include "folsom/routes.hpp"

#include "bench/histogram.hpp"
#include "bench/keys.hpp"
#include "bench/ticks.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace folsom::bench {

enum class Op : std::uint8_t { get, set, mget, mixed };
std::string_view to_string(Op op) noexcept;

/// The workload parameters, as given on the command line.
struct Workload {
    Op op = Op::get;
    std::uint64_t keys = 10000;   ///< key space: keys "k0000".."k9999"
    std::size_t value_size = 64;  ///< bytes per stored value
    std::size_t batch = 16;       ///< keys per multi-get (mget only)
    std::size_t depth = 64;       ///< requests in flight per connection
    std::size_t connections = 1;  ///< connections per server, per thread
    std::size_t threads = 1;      ///< I/O threads, one Client each
    double duration_s = 5;        ///< stop issuing after this long
    std::uint64_t requests = 0;   ///< stop after this many requests (0: no count limit)
    double set_ratio = 0.1;       ///< share of sets (mixed only)
    bool preload = true;          ///< set every key before the measured phase
    bool noreply = false;         ///< measured sets are quiet (QuietClient): see quiet_client.hpp
    /// Gets through get / get_multi, which hand over an owning Value per hit, instead of the
    /// zero-copy get_view / get_multi_view (the bench keeps no value, only hit and miss counts).
    bool owning = false;
    /// Latency: each request slot times one request in this many (0: one in
    /// ceil(slots per thread / 64), so about 64 timed requests are in flight per thread, and
    /// every request at the default depth). A timed request costs the client a clock reading.
    std::uint32_t latency_every = 0;
    /// Keys in order (each thread walks the key space from its own start, a multi-get takes
    /// the next `batch` keys) instead of at random. Random is what a cache sees; in order is
    /// what the end-to-end benchmark's rows do, and it is lighter on a CPU's caches that the
    /// client shares with the server.
    bool keys_in_order = false;
};

/// What happened, summed over workers.
struct Counts {
    std::uint64_t ops = 0;   ///< requests completed (a multi-get is one)
    std::uint64_t keys = 0;  ///< keys those requests carried
    std::uint64_t gets = 0;  ///< keys asked for by get / multi-get requests that got a reply
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
    std::uint64_t sets = 0;    ///< set requests that got a reply (any status)
    std::uint64_t errors = 0;  ///< requests that failed (error code, or a store refused)
    std::map<std::string, std::uint64_t> errors_by_message;

    void add(const Counts& other);
};

/// A moment of a running phase, for the progress line.
struct Tick {
    double elapsed_s = 0;
    std::uint64_t ops = 0;
    std::uint64_t errors = 0;
    const Histogram* latency_ns = nullptr;  ///< everything recorded so far
};

struct PhaseResult {
    Counts counts;
    double elapsed_s = 0;
    bool interrupted = false;         ///< stopped by Ctrl-C
    bool finished = true;             ///< false: requests never completed even after shutdown
    std::uint64_t stuck = 0;          ///< requests that had to be failed by shutting down
    std::uint32_t latency_every = 1;  ///< one request in this many was timed
    std::unique_ptr<Histogram> latency_ns;
};

class Worker;
struct Phase;

class Runner {
  public:
    /// Creates the workers and their clients (which start connecting). `base` carries the
    /// servers (or the routes), protocol and timeouts; connections and the outstanding limit
    /// come from `w`. With routes, "servers" in D x C x servers is every server of every pool.
    /// Throws std::system_error when a Client cannot be created (e.g. unsupported protocol).
    Runner(const Workload& w, const Options& base, const std::atomic<bool>& interrupted);
    ~Runner();
    Runner(const Runner&) = delete;
    Runner& operator=(const Runner&) = delete;

    /// A server that did not answer, and why.
    struct ServerFailure {
        std::string server;
        std::error_code error;
    };
    /// Asks every server for its version through every connection of every worker, so
    /// connecting is not measured. Returns the first failure, or nothing.
    std::optional<ServerFailure> check_servers(std::vector<std::string>* versions = nullptr);

    /// Sets every key of the key space once (not measured). Bounded by `cap`.
    PhaseResult preload(std::chrono::milliseconds cap);

    /// The measured phase. `on_tick` is called about once a second, on the calling thread.
    PhaseResult run(const std::function<void(const Tick&)>& on_tick);

    /// Every server once (with Options::routes: every server of every pool).
    const std::vector<std::string>& servers() const noexcept { return servers_; }

    /// Client::route_stats() summed over the workers' clients (empty without routes). Call it
    /// between phases.
    std::vector<RouteStats> route_stats() const;

  private:
    PhaseResult finish_phase(std::unique_ptr<Phase> phase,
                             const std::function<void(const Tick&)>& on_tick);
    PhaseResult run_phase(Phase& phase, const std::function<void(const Tick&)>& on_tick);

    /// Workload::latency_every, or the automatic choice.
    std::uint32_t latency_every() const noexcept;

    Workload w_;
    Options options_;
    std::size_t slots_ = 1;  // requests in flight per worker
    const std::atomic<bool>& interrupted_;
    std::string value_;
    Ticks ticks_;         // the clock every request's latency is read from (calibrated once)
    KeyTable key_table_;  // every key's text, when they are few enough
    std::vector<std::string> servers_;
    std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace folsom::bench
