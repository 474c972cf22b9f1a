#include "bench/workload.hpp"

#include "folsom/client.hpp"

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/use_future.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <set>
#include <thread>

namespace folsom::bench {

using Clock = std::chrono::steady_clock;

std::string_view to_string(Op op) noexcept {
    switch (op) {
        case Op::get:
            return "get";
        case Op::set:
            return "set";
        case Op::mget:
            return "mget";
        case Op::mixed:
            return "mixed";
    }
    return "?";
}

void Counts::add(const Counts& o) {
    ops += o.ops;
    keys += o.keys;
    gets += o.gets;
    hits += o.hits;
    misses += o.misses;
    sets += o.sets;
    errors += o.errors;
    for (const auto& [msg, n] : o.errors_by_message)
        errors_by_message[msg] += n;
}

namespace {

constexpr std::uint64_t unlimited = std::numeric_limits<std::uint64_t>::max();

/// Single-writer counter bump (see Histogram::bump for why not fetch_add).
void bump(std::atomic<std::uint64_t>& a) noexcept {
    a.store(a.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

/// How many servers a client of `o` talks to: Options::servers, or with routes every server of
/// every pool, counted once. At least 1, so that a tree with no pool still has slots.
std::size_t server_count(const Options& o) {
    if (!o.routes) return std::max<std::size_t>(1, o.servers.size());
    std::set<std::string> servers;
    for (const auto& pool : o.routes->pools)
        servers.insert(pool.servers.begin(), pool.servers.end());
    return std::max<std::size_t>(1, servers.size());
}

unsigned digits(std::uint64_t n) noexcept {
    unsigned d = 1;
    while (n >= 10) {
        n /= 10;
        ++d;
    }
    return d;
}

}  // namespace

/// What every worker of one phase shares: the request budget, the deadline, and the count of
/// workers still busy (under mu, which is also what publishes their counters to the runner).
struct Phase {
    Op op = Op::get;
    double set_ratio = 0;
    std::size_t batch = 1;
    std::uint64_t keys = 1;
    unsigned key_width = 1;
    bool sequential = false;  // key = ticket number (preload), instead of random
    bool noreply = false;     // sets through the quiet view
    std::string_view value;
    std::uint64_t limit = unlimited;
    std::atomic<std::uint64_t> tickets{0};
    Clock::time_point start;
    Clock::time_point deadline;
    std::atomic<bool> stop{false};
    const std::atomic<bool>* interrupted = nullptr;

    std::mutex mu;
    std::condition_variable cv;
    std::size_t running = 0;
};

class Slot;

/// One thread, one io_context, one Client, and the slots that keep its pipeline full.
class Worker {
  public:
    Worker(std::size_t index, const Options& options, std::size_t slots);
    ~Worker();

    Client& client() noexcept { return client_; }
    QuietClient& quiet() noexcept { return quiet_; }

    /// Called by the runner while the worker is idle: clears what the last phase counted.
    void reset() {
        counts = {};
        latency_ns.reset();
        ops.store(0, std::memory_order_relaxed);
        errors.store(0, std::memory_order_relaxed);
        finished_at = {};
    }
    /// Starts every slot of `phase` on the worker's thread.
    void start(Phase& phase);
    void slot_finished(Clock::time_point now);

    // Written by the worker's thread; the atomics may be read at any time, the rest once the
    // phase has finished (Phase::mu orders them).
    Histogram latency_ns;
    std::atomic<std::uint64_t> ops{0};
    std::atomic<std::uint64_t> errors{0};
    Counts counts;
    Clock::time_point finished_at;
    Phase* phase = nullptr;

  private:
    std::size_t index_;
    asio::io_context io_{1};
    asio::executor_work_guard<asio::io_context::executor_type> work_;
    Client client_;
    QuietClient quiet_{client_};  // kept, so a quiet set copies no client handle
    std::vector<std::unique_ptr<Slot>> slots_;
    std::size_t active_ = 0;
    std::thread thread_;
};

/// One request in flight: when it completes, the slot records it and issues the next.
/// Only ever touched on its worker's thread.
class Slot {
  public:
    Slot(Worker& w, std::uint64_t seed, std::size_t batch) : w_(w), rng_(seed), keys_(batch) {
        bufs_.resize(batch);
    }

    void issue(Clock::time_point now) {
        Phase& p = *w_.phase;
        if (now >= p.deadline || p.stop.load(std::memory_order_relaxed) ||
            p.interrupted->load(std::memory_order_relaxed))
            return w_.slot_finished(now);
        std::uint64_t ticket = 0;
        if (p.limit != unlimited) {
            ticket = p.tickets.fetch_add(1, std::memory_order_relaxed);
            if (ticket >= p.limit) return w_.slot_finished(now);
        }
        Op op = p.op;
        if (op == Op::mixed)
            op = static_cast<double>(next() >> 11) * 0x1.0p-53 < p.set_ratio ? Op::set : Op::get;
        started_ = now;
        Client& c = w_.client();
        switch (op) {
            case Op::get:
                c.get(key(0, next() % p.keys), [this](std::error_code ec, std::optional<Value> v) {
                    done_get(ec, v.has_value());
                });
                break;
            case Op::set:
            case Op::mixed:
                if (p.noreply)
                    w_.quiet().set(key(0, p.sequential ? ticket : next() % p.keys), p.value, Ttl{0},
                                   [this](std::error_code ec, Status s) { done_set(ec, s); });
                else
                    c.set(key(0, p.sequential ? ticket : next() % p.keys), p.value, Ttl{0},
                          [this](std::error_code ec, Status s) { done_set(ec, s); });
                break;
            case Op::mget: {
                // Consecutive key numbers from a random start: distinct whenever batch <= keys,
                // and still spread over servers by the hash ring.
                const std::uint64_t first = next() % p.keys;
                for (std::size_t i = 0; i < keys_.size(); ++i)
                    keys_[i] = key(i, (first + i) % p.keys);
                c.get_multi(std::span<const std::string_view>(keys_),
                            [this](std::error_code ec, MultiGetResult r) { done_mget(ec, r); });
                break;
            }
        }
    }

  private:
    std::string_view key(std::size_t buf, std::uint64_t n) {
        auto& b = bufs_[buf];
        const auto r = fmt::format_to_n(b.data(), b.size(), "k{:0{}}", n, w_.phase->key_width);
        return {b.data(), r.size};
    }

    std::uint64_t next() noexcept {  // splitmix64: tiny, fast, good enough for key choice
        std::uint64_t z = (rng_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }

    void failed(const std::string& why) {
        ++w_.counts.errors;
        ++w_.counts.errors_by_message[why];  // allocates only for a message not seen before
        bump(w_.errors);
    }

    /// A request that got its reply: it counts towards throughput.
    void succeeded(std::size_t keys) {
        w_.counts.ops += 1;
        w_.counts.keys += keys;
        bump(w_.ops);
    }

    void record(Clock::time_point now) {
        w_.latency_ns.record(static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(now - started_).count()));
    }

    void done_get(std::error_code ec, bool hit) {
        const auto now = Clock::now();
        if (ec) {
            failed(ec.message());
        } else {
            record(now);
            succeeded(1);
            ++w_.counts.gets;
            ++(hit ? w_.counts.hits : w_.counts.misses);
        }
        issue(now);
    }

    void done_set(std::error_code ec, Status s) {
        const auto now = Clock::now();
        if (ec) {
            failed(ec.message());
        } else {
            ++w_.counts.sets;                                // the server saw it, whatever it said
            if (s == Status::stored || s == Status::sent) {  // sent: ascii noreply
                record(now);
                succeeded(1);
            } else {
                failed(fmt::format("store refused: {}", to_string(s)));
            }
        }
        issue(now);
    }

    void done_mget(std::error_code ec, const MultiGetResult& r) {
        const auto now = Clock::now();
        if (ec) {
            failed(ec.message());
        } else {
            if (!r.complete()) {
                for (const auto& e : r.errors)
                    if (e) {
                        failed(e.message());
                        break;
                    }
            } else {
                record(now);
                succeeded(keys_.size());
            }
            for (std::size_t i = 0; i < r.values.size(); ++i) {
                if (!r.errors.empty() && r.errors[i]) continue;
                ++w_.counts.gets;
                ++(r.values[i] ? w_.counts.hits : w_.counts.misses);
            }
        }
        issue(now);
    }

    Worker& w_;
    std::uint64_t rng_;
    Clock::time_point started_;
    std::vector<std::array<char, 24>> bufs_;  // key texts; "k" + up to 20 digits
    std::vector<std::string_view> keys_;
};

Worker::Worker(std::size_t index, const Options& options, std::size_t slots)
    : index_(index), work_(asio::make_work_guard(io_)), client_(Client::connect(io_, options)) {
    slots_.resize(slots);
    thread_ = std::thread([this] { io_.run(); });
}

Worker::~Worker() {
    // As BlockingClient: shut the client down, let the I/O thread deliver what that fails, and
    // let run() return once nothing is left.
    client_.shutdown();
    work_.reset();
    asio::post(io_, [this] { client_ = Client(); });
    thread_.join();
}

void Worker::start(Phase& p) {
    asio::post(io_, [this, &p] {
        phase = &p;
        // Slots are rebuilt when the batch size changes (preload vs. a multi-get run).
        for (std::size_t i = 0; i < slots_.size(); ++i)
            slots_[i] = std::make_unique<Slot>(*this, (std::uint64_t{index_} << 32) ^ (i + 1),
                                               p.op == Op::mget ? p.batch : 1);
        active_ = slots_.size();
        const auto now = Clock::now();
        for (auto& s : slots_)
            s->issue(now);
    });
}

void Worker::slot_finished(Clock::time_point now) {
    finished_at = std::max(finished_at, now);
    if (--active_ != 0) return;
    std::lock_guard lk(phase->mu);
    --phase->running;
    phase->cv.notify_all();
}

// ---- Runner ------------------------------------------------------------------------------

Runner::Runner(const Workload& w, const Options& base, const std::atomic<bool>& interrupted)
    : w_(w), options_(base), interrupted_(interrupted) {
    value_.resize(w_.value_size);
    for (std::size_t i = 0; i < value_.size(); ++i)
        value_[i] = static_cast<char>('a' + static_cast<char>(i % 26));
    options_.connections_per_server = w_.connections;
    const std::size_t slots = w_.depth * w_.connections * server_count(options_);
    // Room for every slot and more: the bench must never see errc::overloaded by its own doing.
    options_.max_outstanding_requests = 2 * slots + 16;
    for (std::size_t t = 0; t < w_.threads; ++t)
        workers_.push_back(std::make_unique<Worker>(t, options_, slots));
    // Each server once (with routes, a server may be in two pools), in the order version()
    // answers.
    const Client& first = workers_.front()->client();
    for (std::size_t i = 0; i < first.server_count(); ++i)
        if (std::find(servers_.begin(), servers_.end(), first.server_name(i)) == servers_.end())
            servers_.push_back(first.server_name(i));
}

std::vector<RouteStats> Runner::route_stats() const {
    std::vector<RouteStats> sum;
    for (const auto& wk : workers_) {
        // Every worker's client runs the same tree: its routes come in the same order.
        std::vector<RouteStats> stats = wk->client().route_stats();
        if (sum.empty()) {
            sum = std::move(stats);
            continue;
        }
        for (std::size_t i = 0; i < sum.size() && i < stats.size(); ++i) {
            sum[i].requests += stats[i].requests;
            sum[i].failovers += stats[i].failovers;
            sum[i].shadow_requests += stats[i].shadow_requests;
            sum[i].shadow_errors += stats[i].shadow_errors;
        }
    }
    return sum;
}

Runner::~Runner() = default;

std::optional<Runner::ServerFailure> Runner::check_servers(std::vector<std::string>* versions) {
    for (auto& wk : workers_) {
        // One version request per connection: the pool hands requests out round-robin.
        for (std::size_t c = 0; c < w_.connections; ++c) {
            std::vector<NodeResult<std::string>> nodes;
            try {
                nodes = wk->client().version(asio::use_future).get();
            } catch (const std::system_error& e) {
                // Every server failed: the error is the first server's.
                return ServerFailure{servers_.empty() ? std::string() : servers_.front(), e.code()};
            }
            for (const auto& n : nodes) {
                if (n.error) return ServerFailure{n.server, n.error};
                if (versions && versions->size() < servers_.size()) versions->push_back(n.value);
            }
        }
    }
    return std::nullopt;
}

PhaseResult Runner::preload(std::chrono::milliseconds cap) {
    auto phase = std::make_unique<Phase>();
    Phase& p = *phase;
    p.op = Op::set;
    p.sequential = true;
    p.limit = w_.keys;
    p.start = Clock::now();
    p.deadline = p.start + cap;
    return finish_phase(std::move(phase), {});
}

PhaseResult Runner::run(const std::function<void(const Tick&)>& on_tick) {
    auto phase = std::make_unique<Phase>();
    Phase& p = *phase;
    p.op = w_.op;
    p.noreply = w_.noreply;
    p.set_ratio = w_.set_ratio;
    p.batch = w_.batch;
    if (w_.requests != 0) p.limit = w_.requests;
    p.start = Clock::now();
    p.deadline = p.start + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(w_.duration_s));
    return finish_phase(std::move(phase), on_tick);
}

PhaseResult Runner::finish_phase(std::unique_ptr<Phase> phase,
                                 const std::function<void(const Tick&)>& on_tick) {
    PhaseResult r = run_phase(*phase, on_tick);
    // Workers that never finished still point at the phase: it must outlive them. This only
    // happens when the library broke its every-request-completes contract; the caller exits.
    if (!r.finished) (void)phase.release();
    return r;
}

PhaseResult Runner::run_phase(Phase& p, const std::function<void(const Tick&)>& on_tick) {
    p.keys = w_.keys;
    p.key_width = digits(w_.keys - 1);
    p.value = value_;
    p.interrupted = &interrupted_;
    p.running = workers_.size();
    for (auto& wk : workers_)
        wk->reset();
    for (auto& wk : workers_)
        wk->start(p);

    // A request the library never completes would break its contract; bound the wait anyway:
    // past the deadline, give in-flight requests the request timeout (which the library
    // enforces) plus a margin, then shut the clients down, which fails whatever is left.
    const auto grace = 2 * options_.request_timeout + std::chrono::seconds(1);
    auto give_up = p.deadline + grace;
    bool shut = false;
    PhaseResult result;
    auto scratch = std::make_unique<Histogram>();
    auto next_tick = p.start + std::chrono::seconds(1);
    std::unique_lock lk(p.mu);
    while (p.running > 0) {
        const auto wake = on_tick ? std::min(next_tick, give_up) : give_up;
        p.cv.wait_until(lk, wake);
        if (p.running == 0) break;
        const auto now = Clock::now();
        if (on_tick && now >= next_tick) {
            lk.unlock();
            Tick t;
            t.elapsed_s = std::chrono::duration<double>(now - p.start).count();
            scratch->reset();
            for (auto& wk : workers_) {
                t.ops += wk->ops.load(std::memory_order_relaxed);
                t.errors += wk->errors.load(std::memory_order_relaxed);
                scratch->merge(wk->latency_ns);
            }
            t.latency_ns = scratch.get();
            on_tick(t);
            next_tick += std::chrono::seconds(1);
            lk.lock();
        }
        if (now >= give_up) {
            if (shut) break;  // even shutting down did not complete them: report, stop waiting
            shut = true;
            p.stop = true;
            lk.unlock();
            for (auto& wk : workers_) {
                result.stuck += wk->client().outstanding();
                wk->client().shutdown();
            }
            lk.lock();
            give_up = now + std::chrono::seconds(2);
        }
    }
    const bool finished = p.running == 0;
    lk.unlock();

    result.latency_ns = std::move(scratch);
    result.latency_ns->reset();
    Clock::time_point end = p.start;
    for (auto& wk : workers_) {
        if (!finished) break;  // a worker still running owns its counters
        result.counts.add(wk->counts);
        result.latency_ns->merge(wk->latency_ns);
        end = std::max(end, wk->finished_at);
    }
    if (!finished) end = Clock::now();
    result.elapsed_s = std::chrono::duration<double>(end - p.start).count();
    result.interrupted = interrupted_.load();
    result.finished = finished;
    if (!finished && result.stuck == 0) result.stuck = 1;
    return result;
}

}  // namespace folsom::bench
