#include "bench/workload.hpp"

#include "folsom/client.hpp"

#include "bench/keys.hpp"
#include "bench/ticks.hpp"

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/use_future.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <future>
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

}  // namespace

/// What every worker of one phase shares: the request budget, the deadline, and the count of
/// workers still busy (under mu, which is also what publishes their counters to the runner).
struct Phase {
    Op op = Op::get;
    double set_ratio = 0;
    std::size_t batch = 1;
    std::uint64_t keys = 1;
    const KeyTable* key_table = nullptr;  // the Runner's: every key's text, or none
    bool sequential = false;              // key = ticket number (preload), instead of random
    bool in_order = false;                // keys from the worker's cursor, instead of random
    bool owning = false;   // get / get_multi (an owning Value per hit), not the views
    bool noreply = false;  // sets through the quiet view
    std::string_view value;
    std::uint64_t limit = unlimited;
    std::atomic<std::uint64_t> tickets{0};
    Clock::time_point start;
    Clock::time_point deadline;
    Ticks ticks;  // the slots' clock: start and deadline again, in its ticks
    std::uint64_t start_ticks = 0;
    std::uint64_t deadline_ticks = 0;
    std::uint32_t time_every = 1;  // each slot times one request in this many
    std::size_t workers = 1;
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
        finished_at = 0;
        ticket_next_ = ticket_end_ = 0;
    }
    /// Starts every slot of `phase` on the worker's thread.
    void start(Phase& phase);
    /// Returns once the worker's thread has finished the handler it is running: a request's
    /// completion ends the phase from inside the library's read loop, which still counts it
    /// (the client's metrics, a get_view's release) after the completion returns.
    void settle();
    void slot_finished();

    /// The next `n` keys in order: the first of them (each worker walks from its own start).
    std::uint64_t keys_in_order(std::uint64_t n) noexcept {
        const std::uint64_t first = key_cursor_;
        key_cursor_ = (first + n) % phase->keys;
        return first;
    }

    /// Reads the phase's clock, and keeps the reading for the requests that are not timed.
    /// A stop (another worker's request budget used up, or an interrupt) is looked for here
    /// too, at least once in 64 completions, rather than by every request: it moves the
    /// worker's end to now.
    std::uint64_t read_clock() noexcept {
        now = phase->ticks.now();
        if (phase->stop.load(std::memory_order_relaxed) ||
            phase->interrupted->load(std::memory_order_relaxed))
            end_ticks = 0;
        return now;
    }

    /// The next request's ticket number, or false when the phase's request count is used up.
    /// Tickets come from the phase's shared counter a block at a time, so a worker makes one
    /// atomic read-modify-write per block rather than one per request.
    bool take_ticket(std::uint64_t& ticket) noexcept {
        if (ticket_next_ == ticket_end_ && !refill_tickets()) return false;
        ticket = ticket_next_++;
        return true;
    }

    // Written by the worker's thread; the atomics may be read at any time, the rest once the
    // phase has finished (Phase::mu orders them).
    Histogram latency_ns;
    std::atomic<std::uint64_t> ops{0};
    std::atomic<std::uint64_t> errors{0};
    Counts counts;
    std::uint64_t finished_at = 0;  // in the phase's ticks; 0 until a slot finishes
    std::uint64_t now = 0;          // the last clock reading (the phase's ticks)
    std::uint64_t end_ticks = 0;    // no request starts at or after it: the deadline, or 0
    std::uint32_t untimed = 0;      // completions since it
    Phase* phase = nullptr;

  private:
    bool refill_tickets() noexcept;

    std::size_t index_;
    std::uint64_t key_cursor_ = 0;   // --key-order sequential: the next key
    std::uint64_t ticket_next_ = 0;  // this worker's block of tickets: [next, end)
    std::uint64_t ticket_end_ = 0;
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
    /// `batch` keys per request (1 but for multi-gets), each `text.size()` characters: the
    /// views over the slot's key texts are made once, and a request rewrites only the digits.
    /// Without the table's texts, the keys are written into the slot's own: the views are
    /// made once, and a request rewrites only the digits.
    /// The slot times its `first_timed`-th request and then one in Phase::time_every.
    Slot(Worker& w, std::uint64_t seed, std::size_t batch, const KeyTable& table,
         std::uint32_t first_timed)
        : w_(w),
          rng_(seed),
          until_timed_(first_timed),
          table_(table),
          text_(table.text()),
          chars_(table.texts() ? nullptr : new char[batch * text_.size() + KeyText::slack]),
          keys_(batch) {
        if (!table.texts())
            for (std::size_t i = 0; i < batch; ++i)
                keys_[i] = std::string_view(chars_.get() + i * text_.size(), text_.size());
    }

    /// `now`: the phase's ticks, `fresh` when just read (else the worker's last reading,
    /// good enough for the deadline).
    void issue(std::uint64_t now, bool fresh) {
        if (now >= w_.end_ticks) return w_.slot_finished();
        Phase& p = *w_.phase;
        std::uint64_t ticket = 0;
        if (p.limit != unlimited && !w_.take_ticket(ticket)) return w_.slot_finished();
        Op op = p.op;
        if (op == Op::mixed)
            op = static_cast<double>(next() >> 11) * 0x1.0p-53 < p.set_ratio ? Op::set : Op::get;
        // Latency: one request in time_every is timed, so most completions read no clock.
        timed_ = --until_timed_ == 0;
        if (timed_) {
            until_timed_ = p.time_every;
            started_ = fresh ? now : w_.read_clock();
        }
        // Each kind of request in a function of its own: a get's path carries none of a
        // set's or a multi-get's locals.
        switch (op) {
            case Op::get:
                return p.owning ? issue_get(p) : issue_get_view(p);
            case Op::set:
            case Op::mixed:
                return issue_set(p, ticket);
            case Op::mget:
                return issue_mget(p);
        }
    }

  private:
    [[gnu::noinline]] void issue_get_view(const Phase& p) {
        w_.client().get_view(key(0, choose(p, 1)), [this](std::error_code ec, const ValueView* v) {
            done_get(ec, v != nullptr);
        });
    }

    [[gnu::noinline]] void issue_get(const Phase& p) {
        w_.client().get(key(0, choose(p, 1)), [this](std::error_code ec, std::optional<Value> v) {
            done_get(ec, v.has_value());
        });
    }

    [[gnu::noinline]] void issue_set(const Phase& p, std::uint64_t ticket) {
        const std::string_view k = key(0, p.sequential ? ticket : choose(p, 1));
        if (p.noreply)
            w_.quiet().set(k, p.value, Ttl{0},
                           [this](std::error_code ec, Status s) { done_set(ec, s); });
        else
            w_.client().set(k, p.value, Ttl{0},
                            [this](std::error_code ec, Status s) { done_set(ec, s); });
    }

    [[gnu::noinline]] void issue_mget(const Phase& p) {
        // Consecutive key numbers from a random start (or the next ones in order): distinct
        // whenever batch <= keys, and still spread over servers by the ring.
        std::uint64_t n = choose(p, keys_.size());
        if (table_.texts()) {
            for (auto& k : keys_) {
                k = table_.at(n);
                n = n + 1 == p.keys ? 0 : n + 1;
            }
        } else {
            text_.write_run(chars_.get(), n, keys_.size(), p.keys);
        }
        const std::span<const std::string_view> keys(keys_);
        if (p.owning)
            w_.client().get_multi(keys, [this](std::error_code ec, MultiGetResult r) {
                done_mget(ec, r.errors, r.values.size(),
                          static_cast<std::size_t>(
                              std::count_if(r.values.begin(), r.values.end(),
                                            [](const auto& v) { return v.has_value(); })));
            });
        else
            // The values are not kept: the view is dropped as soon as it is handed over.
            w_.client().get_multi_view(
                keys, [](std::size_t, const ValueView&) {},
                [this](std::error_code ec, MultiGetViewResult r) {
                    done_mget(ec, r.errors, keys_.size(), r.hits);
                });
    }

    /// The first of the `n` consecutive keys of the next request: at random, or in order.
    std::uint64_t choose(const Phase& p, std::uint64_t n) noexcept {
        return p.in_order ? w_.keys_in_order(n) : pick_key(next(), p.keys);
    }

    std::string_view key(std::size_t i, std::uint64_t n) noexcept {
        if (table_.texts()) [[likely]]
            return table_.at(n);
        text_.write(chars_.get() + i * text_.size(), n);
        return keys_[i];
    }

    std::uint64_t next() noexcept { return splitmix64(rng_); }

    // Out of line, so the completions' common path carries none of it.
    [[gnu::cold, gnu::noinline]] void failed(const std::string& why) {
        ++w_.counts.errors;
        ++w_.counts.errors_by_message[why];  // allocates only for a message not seen before
        bump(w_.errors);
    }
    [[gnu::cold, gnu::noinline]] void failed(std::error_code ec) { failed(ec.message()); }

    /// A request that got its reply: it counts towards throughput.
    void succeeded(std::size_t keys) {
        w_.counts.ops += 1;
        w_.counts.keys += keys;
        bump(w_.ops);
    }

    /// A completion's time: read when its request was timed, else the worker's last reading.
    /// The worker reads it at least once in 64 completions anyway, so the deadline is seen
    /// whatever --latency-every says. `fresh`: it was read.
    std::uint64_t completed_at(bool& fresh) noexcept {
        fresh = timed_ || ++w_.untimed >= 64;
        if (!fresh) return w_.now;
        w_.untimed = 0;
        return w_.read_clock();
    }

    /// Records a timed request's latency.
    void record(std::uint64_t now) {
        if (timed_)
            w_.latency_ns.record(w_.phase->ticks.to_ns(now > started_ ? now - started_ : 0));
    }

    void done_get(std::error_code ec, bool hit) {
        bool fresh = false;
        const std::uint64_t now = completed_at(fresh);
        if (ec) {
            failed(ec);
        } else {
            record(now);
            succeeded(1);
            ++w_.counts.gets;
            ++(hit ? w_.counts.hits : w_.counts.misses);
        }
        issue(now, fresh);
    }

    void done_set(std::error_code ec, Status s) {
        bool fresh = false;
        const std::uint64_t now = completed_at(fresh);
        if (ec) {
            failed(ec);
        } else {
            ++w_.counts.sets;                                // the server saw it, whatever it said
            if (s == Status::stored || s == Status::sent) {  // sent: ascii noreply
                record(now);
                succeeded(1);
            } else {
                failed(fmt::format("store refused: {}", to_string(s)));
            }
        }
        issue(now, fresh);
    }

    /// A multi-get of `asked` keys ended: `errors` is empty when every key was answered (a
    /// hit or a miss), or says why each unanswered key was not; `hits` counts the keys found.
    void done_mget(std::error_code ec, const std::vector<std::error_code>& errors,
                   std::size_t asked, std::size_t hits) {
        bool fresh = false;
        const std::uint64_t now = completed_at(fresh);
        if (ec) {
            failed(ec);
        } else {
            std::size_t answered = asked;
            if (errors.empty()) {
                record(now);
                succeeded(asked);
            } else {
                const std::error_code* first = nullptr;
                for (const auto& e : errors)
                    if (e) {
                        --answered;
                        if (!first) first = &e;
                    }
                if (first) failed(first->message());
            }
            w_.counts.gets += answered;
            w_.counts.hits += hits;
            w_.counts.misses += answered - hits;
        }
        issue(now, fresh);
    }

    Worker& w_;
    std::uint64_t rng_;
    std::uint32_t until_timed_;  // requests until the next timed one
    bool timed_ = false;         // the request in flight is timed
    std::uint64_t started_ = 0;  // when the timed one started (the phase's ticks)
    const KeyTable& table_;
    KeyText text_;
    std::unique_ptr<char[]> chars_;       // without the table: the key texts, one after another
    std::vector<std::string_view> keys_;  // views of them
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
        key_cursor_ = p.keys * index_ / p.workers;  // the workers' starts spread over the keys
        // Slots are rebuilt when the batch size changes (preload vs. a multi-get run).
        // The slots' timed requests are staggered: slot i times its (i mod N + 1)-th first.
        for (std::size_t i = 0; i < slots_.size(); ++i)
            slots_[i] = std::make_unique<Slot>(*this, (std::uint64_t{index_} << 32) ^ (i + 1),
                                               p.op == Op::mget ? p.batch : 1, *p.key_table,
                                               static_cast<std::uint32_t>(i % p.time_every) + 1);
        active_ = slots_.size();
        end_ticks = p.deadline_ticks;
        const std::uint64_t t = read_clock();
        for (auto& s : slots_)
            s->issue(t, true);
    });
}

void Worker::settle() {
    std::promise<void> done;
    asio::post(io_, [&done] { done.set_value(); });
    done.get_future().wait();
}

bool Worker::refill_tickets() noexcept {
    // Small enough that a run of a few thousand requests still spreads over every worker.
    constexpr std::uint64_t block = 64;
    Phase& p = *phase;
    const std::uint64_t first = p.tickets.fetch_add(block, std::memory_order_relaxed);
    if (first >= p.limit) return false;
    ticket_next_ = first;
    ticket_end_ = std::min(first + block, p.limit);
    return true;
}

void Worker::slot_finished() {
    finished_at = std::max(finished_at, phase->ticks.now());
    if (--active_ != 0) return;
    std::lock_guard lk(phase->mu);
    --phase->running;
    phase->cv.notify_all();
}

// ---- Runner ------------------------------------------------------------------------------

Runner::Runner(const Workload& w, const Options& base, const std::atomic<bool>& interrupted)
    : w_(w),
      options_(base),
      interrupted_(interrupted),
      ticks_(Ticks::calibrated()),
      key_table_(w.keys) {
    value_.resize(w_.value_size);
    for (std::size_t i = 0; i < value_.size(); ++i)
        value_[i] = static_cast<char>('a' + static_cast<char>(i % 26));
    options_.connections_per_server = w_.connections;
    const std::size_t slots = w_.depth * w_.connections * server_count(options_);
    slots_ = slots;
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

std::uint32_t Runner::latency_every() const noexcept {
    if (w_.latency_every != 0) return w_.latency_every;
    constexpr std::size_t timed_in_flight = 64;
    return static_cast<std::uint32_t>(
        std::max<std::size_t>(1, (slots_ + timed_in_flight - 1) / timed_in_flight));
}

PhaseResult Runner::preload(std::chrono::milliseconds cap) {
    auto phase = std::make_unique<Phase>();
    Phase& p = *phase;
    p.op = Op::set;
    p.sequential = true;
    p.limit = w_.keys;
    p.start = Clock::now();
    p.deadline = p.start + cap;
    p.ticks = ticks_;
    p.start_ticks = ticks_.now();
    p.deadline_ticks =
        p.start_ticks + ticks_.from_ns(std::chrono::duration<double, std::nano>(cap).count());
    return finish_phase(std::move(phase), {});
}

PhaseResult Runner::run(const std::function<void(const Tick&)>& on_tick) {
    auto phase = std::make_unique<Phase>();
    Phase& p = *phase;
    p.op = w_.op;
    p.noreply = w_.noreply;
    p.in_order = w_.keys_in_order;
    p.owning = w_.owning;
    p.set_ratio = w_.set_ratio;
    p.batch = w_.batch;
    if (w_.requests != 0) p.limit = w_.requests;
    p.start = Clock::now();
    p.deadline = p.start + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(w_.duration_s));
    p.ticks = ticks_;
    p.start_ticks = ticks_.now();
    p.deadline_ticks = p.start_ticks + ticks_.from_ns(w_.duration_s * 1e9);
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
    p.key_table = &key_table_;
    p.time_every = latency_every();
    p.workers = workers_.size();
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
    if (finished)
        for (auto& wk : workers_)
            wk->settle();

    result.latency_ns = std::move(scratch);
    result.latency_ns->reset();
    std::uint64_t end = p.start_ticks;
    for (auto& wk : workers_) {
        if (!finished) break;  // a worker still running owns its counters
        result.counts.add(wk->counts);
        result.latency_ns->merge(wk->latency_ns);
        end = std::max(end, wk->finished_at);
    }
    result.elapsed_s = finished ? static_cast<double>(p.ticks.to_ns(end - p.start_ticks)) / 1e9
                                : std::chrono::duration<double>(Clock::now() - p.start).count();
    result.interrupted = interrupted_.load();
    result.finished = finished;
    result.latency_every = p.time_every;
    if (!finished && result.stuck == 0) result.stuck = 1;
    return result;
}

}  // namespace folsom::bench
