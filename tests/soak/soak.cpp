// folsom_soak: a long run of mixed, pipelined load from several threads against several real
// memcached processes that are killed, restarted, frozen and thawed at random, checking the
// client's promises the whole way: every request completes exactly once, no reply is misrouted,
// failures are only the ones faults explain, memory reaches a plateau, and the client recovers.
//
//   folsom_soak [--seconds N] [--report-every S] [--threads T] [--servers K] [--rate R]
//               [--seed X] [--routes]
//
// With --routes, the load goes through a replicated route instead: three clients (ascii,
// binary, meta) whose Options::routes is an AllSyncRoute over K pools of one server each, and
// at the end every replica is asked directly for the keys whose writes the route acknowledged
// (replica_book.hpp): none may hold another value, and one not restarted since a write must
// hold it.
//
// Prints a progress line every S seconds and a verdict at the end; exits 1 when the verdict is
// FAIL. scripts/soak [minutes] builds and runs it; CTest runs a one-minute version (soak.short)
// and a half-minute one of the replicated mode (soak.routes).
#include "folsom/blocking_client.hpp"
#include "folsom/client.hpp"
#include "folsom/routes.hpp"

#include "soak/load_ledger.hpp"
#include "soak/replica_book.hpp"
#include "soak/rss_trend.hpp"
#include "support/memcached_server.hpp"

#include <asio/use_future.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using folsom::soak::LoadLedger;
using folsom::soak::ReplicaBook;

struct Config {
    int seconds = 600;
    int report_every = 0;  // 0: chosen from the length of the run
    int threads = 4;
    int servers = 3;
    int rate = 20000;  // requests per second over all threads; 0: as fast as possible
    std::uint64_t seed = 0;
    bool routes = false;  // the load goes through an AllSyncRoute over one pool per server
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "folsom_soak: %s\nusage: folsom_soak [--seconds N] [--report-every S] "
                 "[--threads T] [--servers K] [--rate R (requests/s, 0: unpaced)] [--seed X] "
                 "[--routes]\n",
                 why);
    std::exit(2);
}

Config parse(int argc, char** argv) {
    Config c;
    c.seed = static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--routes") {
            c.routes = true;
            continue;
        }
        if (i + 1 >= argc) usage("every option but --routes takes a value");
        const long long v = std::strtoll(argv[++i], nullptr, 10);
        if (a == "--seconds")
            c.seconds = static_cast<int>(v);
        else if (a == "--report-every")
            c.report_every = static_cast<int>(v);
        else if (a == "--threads")
            c.threads = static_cast<int>(v);
        else if (a == "--servers")
            c.servers = static_cast<int>(v);
        else if (a == "--rate")
            c.rate = static_cast<int>(v);
        else if (a == "--seed")
            c.seed = static_cast<std::uint64_t>(v);
        else
            usage("unknown option");
    }
    if (c.seconds < 1 || c.threads < 1 || c.threads > 64 || c.servers < 1 || c.servers > 16 ||
        c.rate < 0)
        usage("value out of range");
    if (c.report_every <= 0) c.report_every = std::clamp(c.seconds / 10, 5, 60);
    return c;
}

// ---- values that say which key they belong to -----------------------------------------------

char filler_of(std::string_view key) {
    return static_cast<char>('a' + std::hash<std::string_view>{}(key) % 26);
}

/// "<key>|<size>|<filler...>", `size` bytes in all (sizes start at 16, longer than any
/// "<key>|<size>|" here): a reply for another key, a truncated or a
/// spliced value all fail check_value.
std::string make_value(std::string_view key, std::size_t size) {
    std::string v(key);
    v += '|';
    v += std::to_string(size);
    v += '|';
    if (v.size() < size) v.resize(size, filler_of(key));
    return v;
}

bool check_value(std::string_view key, std::string_view v) {
    if (v.size() <= key.size() + 1 || v.substr(0, key.size()) != key || v[key.size()] != '|')
        return false;
    const auto rest = v.substr(key.size() + 1);
    const auto bar = rest.find('|');
    if (bar == std::string_view::npos) return false;
    const auto size = std::strtoull(std::string(rest.substr(0, bar)).c_str(), nullptr, 10);
    if (size != v.size()) return false;
    const char f = filler_of(key);
    for (char c : rest.substr(bar + 1))
        if (c != f) return false;
    return true;
}

std::size_t value_size(std::mt19937_64& rng) {
    const auto r = rng() % 100;
    if (r < 90) return 16 + rng() % 1008;           // most values are small
    if (r < 99) return 1024 + rng() % (15 * 1024);  // some are a few kB
    return 16 * 1024 + rng() % (184 * 1024);        // a few are big (scatter-gather writes)
}

// ---- the load --------------------------------------------------------------------------------

// Under AddressSanitizer or ThreadSanitizer, freed memory sits in a quarantine of hundreds of
// MiB before it is reused, so resident memory grows for a long while without any leak: the
// memory verdict is left out there (the sanitizer reports real leaks and misuse itself).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool judge_memory = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool judge_memory = false;
#else
constexpr bool judge_memory = true;
#endif
#else
constexpr bool judge_memory = true;
#endif

constexpr int keyspace = 5000;
constexpr int counters = 200;
constexpr int window = 32;  // requests in flight per thread: they pipeline

struct Worker {
    std::atomic<int> inflight{0};
    std::atomic<bool> stuck{false};
};

/// One load thread's loop: calls `issue_one` (which issues exactly one request, whose handler
/// completes its ticket through `self`) at the thread's pace, keeping at most `window` requests
/// in flight, until `end`.
template <class IssueOne>
void drive(Worker& self, Clock::time_point end, double rate_per_second, IssueOne&& issue_one) {
    const auto start = Clock::now();
    std::uint64_t issued = 0;
    while (Clock::now() < end) {
        // Pacing (bounded: the sleep ends at `end` at the latest).
        if (rate_per_second > 0 &&
            static_cast<double>(issued) >
                rate_per_second * std::chrono::duration<double>(Clock::now() - start).count()) {
            std::this_thread::sleep_for(1ms);
            continue;
        }
        // The window: wait for a slot, at most 30 s (a request never completing would stop
        // this thread here: reported as stuck).
        const auto wait_until = Clock::now() + 30s;
        while (self.inflight.load(std::memory_order_relaxed) >= window && Clock::now() < wait_until)
            std::this_thread::sleep_for(100us);
        if (self.inflight.load() >= window) {
            self.stuck = true;
            return;
        }
        self.inflight.fetch_add(1, std::memory_order_relaxed);
        ++issued;
        issue_one();
    }
}

/// The completion of one request of `self`'s: counted once in the ledger, and its window slot
/// freed (a second completion is only counted).
auto completion_of(Worker& self) {
    return [&self](const LoadLedger::Ticket& t, std::error_code ec) {
        if (t.complete(ec)) self.inflight.fetch_sub(1, std::memory_order_relaxed);
    };
}

void run_worker(folsom::Client client, LoadLedger& ledger, Worker& self, std::uint64_t seed,
                Clock::time_point end, double rate_per_second) {
    std::mt19937_64 rng(seed);
    const auto done = completion_of(self);
    drive(self, end, rate_per_second, [&] {
        const auto op = rng() % 100;
        const std::string key = "k:" + std::to_string(rng() % keyspace);
        auto t = ledger.issue();
        if (op < 30) {
            client.get(key,
                       [&ledger, done, t, key](std::error_code ec, std::optional<folsom::Value> v) {
                           if (!ec && v && !check_value(key, v->data)) ledger.wrong_value();
                           done(t, ec);
                       });
        } else if (op < 55) {
            client.set(key, make_value(key, value_size(rng)), 0s,
                       [done, t](std::error_code ec, folsom::Status) { done(t, ec); });
        } else if (op < 70) {
            std::vector<std::string> keys(2 + rng() % 23);
            for (auto& k : keys)
                k = "k:" + std::to_string(rng() % keyspace);
            std::vector<std::string_view> views(keys.begin(), keys.end());
            // The keys are copied before get_multi returns; the handler keeps its own copy to
            // check the values.
            client.get_multi(views, [&ledger, done, t, keys = std::move(keys)](
                                        std::error_code ec, folsom::MultiGetResult r) {
                for (std::size_t i = 0; !ec && i < r.values.size() && i < keys.size(); ++i)
                    if (r.values[i] && !check_value(keys[i], r.values[i]->data))
                        ledger.wrong_value();
                if (!ec && !r.complete()) {
                    ledger.count_partial();
                    for (auto e : r.errors)
                        if (e) {
                            ec = e;
                            break;
                        }
                }
                done(t, ec);
            });
        } else if (op < 80) {
            const std::string k = op < 78 ? key : "c:" + std::to_string(rng() % counters);
            client.del(k, [done, t](std::error_code ec, folsom::Status) { done(t, ec); });
        } else if (op < 95) {
            client.incr(
                "c:" + std::to_string(rng() % counters), 1 + rng() % 10,
                [done, t](std::error_code ec, std::optional<std::uint64_t>) { done(t, ec); });
        } else {
            client.set("c:" + std::to_string(rng() % counters), "0", 0s,
                       [done, t](std::error_code ec, folsom::Status) { done(t, ec); });
        }
    });
}

// ---- faults ------------------------------------------------------------------------------------

/// One fault at a time on a random server: SIGKILL and a restart on the same port after a
/// while, or SIGSTOP and SIGCONT after a while (some longer than the request timeout). Runs on
/// the main thread, which started the servers: memcached dies with the thread that forked it.
class Chaos {
  public:
    /// No fault starts from `quiet_from` on (the one in progress still ends on time).
    Chaos(std::vector<std::unique_ptr<folsom::test::MemcachedServer>>& servers, std::uint64_t seed,
          Clock::time_point quiet_from = Clock::time_point::max())
        : servers_(servers),
          quiet_from_(quiet_from),
          rng_(seed),
          last_kill_(std::make_unique<std::atomic<int>[]>(servers.size())) {
        next_ = Clock::now() + 2s;  // a clean start first
    }

    void tick(Clock::time_point now) {
        if (victim_ < 0) {
            if (now < next_ || now >= quiet_from_) return;
            victim_ = static_cast<int>(rng_() % servers_.size());
            killed_ = rng_() % 2 == 0;
            auto& s = *servers_[static_cast<std::size_t>(victim_)];
            if (killed_) {
                s.kill();
                // Counted once the process is gone: a write issued after kill_sequence()
                // counts this kill cannot have been lost to it.
                last_kill_[static_cast<std::size_t>(victim_)] = ++kills;
                recover_at_ = now + std::chrono::milliseconds(100 + rng_() % 1900);
            } else {
                s.freeze();
                ++freezes;
                const auto d = std::chrono::milliseconds(200 + rng_() % 2800);
                longest_freeze = std::max(longest_freeze, d);
                recover_at_ = now + d;
            }
            return;
        }
        if (now >= recover_at_) recover();
        if (victim_ < 0) next_ = now + std::chrono::milliseconds(1000 + rng_() % 3000);
    }

    /// Ends the current fault (at the end of the run).
    void recover() {
        if (victim_ < 0) return;
        auto& s = *servers_[static_cast<std::size_t>(victim_)];
        if (killed_) {
            try {
                s.restart();
            } catch (const std::exception& e) {
                ++failed_restarts;  // tried again on the next tick
                std::fprintf(stderr, "soak: %s\n", e.what());
                return;
            }
        } else {
            s.thaw();
        }
        victim_ = -1;
    }
    bool idle() const noexcept { return victim_ < 0; }

    /// Kills so far (read from any thread). A server killed after a write was issued may
    /// have lost it (and then holds nothing under its key).
    int kill_sequence() const noexcept { return kills.load(); }
    /// kill_sequence() just after server `i`'s last kill; 0 if it was never killed.
    int last_kill_of(std::size_t i) const noexcept { return last_kill_[i].load(); }

    std::atomic<int> kills{0}, freezes{0};  // read by the reporter thread
    int failed_restarts = 0;
    std::chrono::milliseconds longest_freeze{0};

  private:
    std::vector<std::unique_ptr<folsom::test::MemcachedServer>>& servers_;
    const Clock::time_point quiet_from_;
    std::mt19937_64 rng_;
    std::unique_ptr<std::atomic<int>[]> last_kill_;
    int victim_ = -1;
    bool killed_ = false;
    Clock::time_point next_, recover_at_;
};

// ---- the replicated-route load (--routes) ------------------------------------------------------

constexpr std::size_t route_slots = 1000;  // keys per load thread, each written by it alone

/// A hit (`value`) or a miss on `slot` through the route: a value that is not a well-formed
/// value of its key is a wrong value (the ledger counts it); one that contradicts what the
/// route acknowledged, a stale read (the book counts it).
void check_read(LoadLedger& ledger, ReplicaBook& book, std::size_t slot,
                const ReplicaBook::Read& read, std::optional<std::string_view> value) {
    if (value && !folsom::soak::version_in(read.key, *value)) {
        ledger.wrong_value();
        return;
    }
    book.end_read(slot, read, value);
}

/// One load thread of --routes, through `client` (an AllSyncRoute over every server): gets
/// (30%), multi-gets of 2 to 24 keys (15%), sets of 16 B to 200 KiB (30%) and deletes (10%) of
/// the thread's own keys, with at most one write per key in flight (a write picked for a key
/// that has one becomes a get), all checked by `book`; and incr (10%) and resets (5%) of
/// counters every thread shares (not checked against the replicas: a counter's replicas drift
/// apart with every restart).
void run_route_worker(folsom::Client client, LoadLedger& ledger, ReplicaBook& book,
                      const Chaos& chaos, Worker& self, std::uint64_t seed, Clock::time_point end,
                      double rate_per_second) {
    std::mt19937_64 rng(seed);
    const auto done = completion_of(self);
    auto get = [&](std::size_t slot) {
        auto t = ledger.issue();
        auto snapshot = book.begin_read(slot);
        const std::string key = snapshot.key;
        client.get(key, [&ledger, &book, done, t, slot, read = std::move(snapshot)](
                            std::error_code ec, std::optional<folsom::Value> v) {
            if (!ec)
                check_read(ledger, book, slot, read,
                           v ? std::optional<std::string_view>(v->data) : std::nullopt);
            done(t, ec);
        });
    };
    auto write = [&](std::size_t slot, bool del) {
        auto started = book.begin_write(slot, static_cast<std::uint64_t>(chaos.kill_sequence()));
        if (!started) return get(slot);  // this key's write is still in flight
        auto t = ledger.issue();
        const std::string key = started->key;
        if (del) {
            client.del(key, [&book, done, t, slot, w = std::move(*started)](std::error_code ec,
                                                                            folsom::Status s) {
                // deleted or not_found from every replica: on none of them now.
                book.end_write(
                    slot, w,
                    !ec && (s == folsom::Status::deleted || s == folsom::Status::not_found), 0);
                done(t, ec);
            });
            return;
        }
        std::string value = folsom::soak::versioned_value(key, started->version, value_size(rng));
        const std::size_t size = value.size();
        client.set(key, std::move(value), 0s,
                   [&book, done, t, slot, size, w = std::move(*started)](std::error_code ec,
                                                                         folsom::Status s) {
                       book.end_write(slot, w, !ec && s == folsom::Status::stored, size);
                       done(t, ec);
                   });
    };
    drive(self, end, rate_per_second, [&] {
        const auto op = rng() % 100;
        const std::size_t slot = rng() % book.slots();
        if (op < 30) {
            get(slot);
        } else if (op < 45) {
            std::vector<std::size_t> picked(2 + rng() % 23);
            std::vector<ReplicaBook::Read> snapshots;
            for (auto& p : picked) {
                p = rng() % book.slots();
                snapshots.push_back(book.begin_read(p));
            }
            std::vector<std::string_view> views;
            for (const auto& s : snapshots)
                views.push_back(s.key);
            auto t = ledger.issue();
            // The keys are copied before get_multi returns (moving the vector into the handler
            // moves no string, so the views stay valid until then).
            client.get_multi(views, [&ledger, &book, done, t, slots = std::move(picked),
                                     reads = std::move(snapshots)](std::error_code ec,
                                                                   folsom::MultiGetResult r) {
                for (std::size_t i = 0; !ec && i < reads.size() && i < r.values.size(); ++i) {
                    if (!r.errors.empty() && r.errors[i]) continue;  // unanswered
                    check_read(ledger, book, slots[i], reads[i],
                               r.values[i] ? std::optional<std::string_view>(r.values[i]->data)
                                           : std::nullopt);
                }
                if (!ec && !r.complete()) {
                    ledger.count_partial();
                    for (auto e : r.errors)
                        if (e) {
                            ec = e;
                            break;
                        }
                }
                done(t, ec);
            });
        } else if (op < 75) {
            write(slot, false);
        } else if (op < 85) {
            write(slot, true);
        } else if (op < 95) {
            auto t = ledger.issue();
            client.incr(
                "rc:" + std::to_string(rng() % counters), 1 + rng() % 10,
                [done, t](std::error_code ec, std::optional<std::uint64_t>) { done(t, ec); });
        } else {
            auto t = ledger.issue();
            client.set("rc:" + std::to_string(rng() % counters), "0", 0s,
                       [done, t](std::error_code ec, folsom::Status) { done(t, ec); });
        }
    });
}

/// What the replicas hold at the end, key by key (replica_book.hpp says what each must hold).
struct ReplicaVerdict {
    std::uint64_t keys = 0;               // keys checked
    std::uint64_t stored = 0;             // of those, last acknowledged `stored`
    std::uint64_t on_every_replica = 0;   // of those, equal on every replica
    std::uint64_t copies_equal = 0;       // their copies (one per replica) found equal
    std::uint64_t lost_to_restarts = 0;   // ... missing on a replica killed since the write
    std::uint64_t lost_to_evictions = 0;  // ... missing on a replica that evicted items
    std::uint64_t absent_everywhere = 0;  // deleted or never written, and on no replica
    std::uint64_t diverged = 0;           // held otherwise by some replica
    std::uint64_t unreadable = 0;         // keys some replica could not be asked for
    std::vector<std::string> examples{};  // the first divergences, described
};

/// Asks every replica directly (ascii `get` of 50 keys at a time, on a connection of its own)
/// for every key of `books` whose state is known. Call when no write is in flight and every
/// server is up.
ReplicaVerdict check_replicas(
    const std::vector<std::unique_ptr<ReplicaBook>>& books,
    const std::vector<std::unique_ptr<folsom::test::MemcachedServer>>& servers,
    const Chaos& chaos) {
    std::vector<ReplicaBook::Expected> keys;
    for (const auto& b : books) {
        auto e = b->expected();
        std::move(e.begin(), e.end(), std::back_inserter(keys));
    }
    enum class Seen : std::uint8_t { same, restarted, evicted, missing, other, unreadable };
    std::vector<Seen> seen(keys.size() * servers.size(), Seen::unreadable);
    std::vector<std::string> found(keys.size() * servers.size());  // what `other` was
    constexpr std::size_t batch = 50;
    for (std::size_t s = 0; s < servers.size(); ++s) {
        long long evictions = -1;
        try {
            evictions = folsom::test::stat_value(
                folsom::test::raw_request(*servers[s], "stats\r\n", "END\r\n"), "evictions");
        } catch (const std::exception&) {
        }
        for (std::size_t from = 0; from < keys.size(); from += batch) {
            const std::size_t to = std::min(keys.size(), from + batch);
            std::string command = "get";
            for (std::size_t k = from; k < to; ++k)
                command += ' ' + keys[k].key;
            command += "\r\n";
            std::optional<std::map<std::string, std::string, std::less<>>> values;
            try {
                values = folsom::soak::parse_get_reply(
                    folsom::test::raw_request(*servers[s], command, "END\r\n"));
            } catch (const std::exception&) {
            }
            if (!values) continue;  // stays unreadable
            for (std::size_t k = from; k < to; ++k) {
                const auto& e = keys[k];
                auto& out = seen[k * servers.size() + s];
                const auto it = values->find(e.key);
                if (it == values->end()) {
                    if (!e.present)
                        out = Seen::same;
                    else if (static_cast<std::uint64_t>(chaos.last_kill_of(s)) > e.since)
                        out = Seen::restarted;
                    else if (evictions > 0)
                        out = Seen::evicted;
                    else
                        out = Seen::missing;
                } else if (e.present && it->second == e.value) {
                    out = Seen::same;
                } else {
                    out = Seen::other;
                    found[k * servers.size() + s] = it->second;
                }
            }
        }
    }
    ReplicaVerdict v;
    v.keys = keys.size();
    for (std::size_t k = 0; k < keys.size(); ++k) {
        const auto* row = &seen[k * servers.size()];
        auto any = [&](Seen x) {
            return std::find(row, row + servers.size(), x) != row + servers.size();
        };
        const auto& e = keys[k];
        if (e.present) {
            ++v.stored;
            v.copies_equal +=
                static_cast<std::uint64_t>(std::count(row, row + servers.size(), Seen::same));
            v.lost_to_restarts +=
                static_cast<std::uint64_t>(std::count(row, row + servers.size(), Seen::restarted));
            v.lost_to_evictions +=
                static_cast<std::uint64_t>(std::count(row, row + servers.size(), Seen::evicted));
        }
        if (any(Seen::missing) || any(Seen::other)) {
            ++v.diverged;
            if (v.examples.size() < 5) {
                std::string d = e.key + " (acknowledged: " +
                                (e.present ? e.value.substr(0, 40) + "..." : std::string("none")) +
                                "):";
                for (std::size_t s = 0; s < servers.size(); ++s) {
                    d += " " + servers[s]->address() + " ";
                    switch (row[s]) {
                        case Seen::missing:
                            d += "missing (not restarted since)";
                            break;
                        case Seen::other:
                            d += "holds " + found[k * servers.size() + s].substr(0, 40) + "...";
                            break;
                        case Seen::restarted:
                            d += "missing (restarted since)";
                            break;
                        case Seen::unreadable:
                            d += "unreadable";
                            break;
                        default:
                            d += "ok";
                            break;
                    }
                }
                v.examples.push_back(std::move(d));
            }
        } else if (any(Seen::unreadable)) {
            ++v.unreadable;
        } else if (!e.present) {
            ++v.absent_everywhere;
        } else if (!any(Seen::restarted) && !any(Seen::evicted)) {
            ++v.on_every_replica;
        }
    }
    return v;
}

double mib(std::uint64_t bytes) {
    return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

void report(const char* when, std::chrono::seconds elapsed, const LoadLedger& l, const Chaos& c,
            std::uint64_t rss) {
    // Completed first: a request counts as issued before it can complete, so this order never
    // shows more completed than issued.
    const auto completed = l.completed();
    const auto issued = l.issued();
    std::printf(
        "soak %s %5llds: issued %llu completed %llu in-flight %llu ok %llu failed %llu "
        "(%s) twice %llu wrong %llu | faults: %d kills, %d freezes | rss %.1f MiB\n",
        when, static_cast<long long>(elapsed.count()), static_cast<unsigned long long>(issued),
        static_cast<unsigned long long>(completed),
        static_cast<unsigned long long>(issued - completed),
        static_cast<unsigned long long>(l.ok()), static_cast<unsigned long long>(l.failed()),
        l.failures_by_reason().c_str(), static_cast<unsigned long long>(l.twice()),
        static_cast<unsigned long long>(l.wrong()), c.kills.load(), c.freezes.load(), mib(rss));
    std::fflush(stdout);
}

/// After the run: every client stores and reads back a key on every server (keys until each
/// server got one), within 20 s. False when some client did not recover.
bool all_recovered(std::vector<std::unique_ptr<folsom::BlockingClient>>& clients) {
    const auto deadline = Clock::now() + 20s;
    for (auto& c : clients) {
        std::vector<bool> good(c->async().server_count(), false);
        for (int k = 0; Clock::now() < deadline; ++k) {
            const std::string key = "recovery:" + std::to_string(k % 1000);
            const auto server = c->async().server_for(key);
            if (good[server]) continue;
            try {
                const auto value = make_value(key, 100);
                auto v = c->set(key, value) == folsom::Status::stored ? c->get(key) : std::nullopt;
                good[server] = v && v->data == value;
            } catch (const std::system_error&) {
                std::this_thread::sleep_for(50ms);
            }
            if (std::find(good.begin(), good.end(), false) == good.end()) break;
        }
        if (std::find(good.begin(), good.end(), false) != good.end()) return false;
    }
    return true;
}

/// After a --routes run: every client stores a key through its route (`stored`: by every
/// replica) and reads it back, and every replica, asked directly, holds it; within 20 s. False
/// when some client did not recover.
bool routes_recovered(std::vector<std::unique_ptr<folsom::BlockingClient>>& clients,
                      const std::vector<std::unique_ptr<folsom::test::MemcachedServer>>& servers) {
    const auto deadline = Clock::now() + 20s;
    for (std::size_t i = 0; i < clients.size(); ++i) {
        const std::string key = "recovery:route:" + std::to_string(i);
        const std::string value = make_value(key, 100);
        for (bool good = false; !good; std::this_thread::sleep_for(50ms)) {
            if (Clock::now() >= deadline) return false;
            try {
                if (clients[i]->set(key, value) != folsom::Status::stored) continue;
                auto v = clients[i]->get(key);
                good = v && v->data == value;
                for (const auto& s : servers) {
                    const auto held = folsom::soak::parse_get_reply(
                        folsom::test::raw_request(*s, "get " + key + "\r\n", "END\r\n"));
                    good = good && held && held->count(key) == 1 && held->at(key) == value;
                }
            } catch (const std::exception&) {
            }
        }
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    const Config cfg = parse(argc, argv);
    std::vector<std::unique_ptr<folsom::test::MemcachedServer>> servers;
    std::vector<std::string> addresses;
    for (int i = 0; i < cfg.servers; ++i) {
        // --routes: keys retired after a failed write stay on the servers until a restart;
        // room enough that nothing is evicted (evictions would excuse a missing value).
        servers.push_back(std::make_unique<folsom::test::MemcachedServer>(
            cfg.routes ? std::vector<std::string>{"-m", "1024"} : std::vector<std::string>{}));
        addresses.push_back(servers.back()->address());
    }
    // --routes: one pool per server, every request to all of them.
    folsom::RouteConfig replicated;
    std::vector<folsom::RouteSpec> replicas;
    for (std::size_t i = 0; i < addresses.size(); ++i) {
        const std::string pool = "replica" + std::to_string(i);
        replicated.pools.push_back(folsom::PoolSpec{pool, {addresses[i]}});
        replicas.push_back(folsom::routes::pool(pool));
    }
    replicated.route =
        folsom::routes::named("replicated", folsom::routes::all_sync(std::move(replicas)));
    // One client per protocol, all on every server (or all through the replicated route).
    const folsom::Protocol protocols[] = {folsom::Protocol::ascii, folsom::Protocol::binary,
                                          folsom::Protocol::meta};
    std::vector<std::unique_ptr<folsom::BlockingClient>> clients;
    for (auto p : protocols) {
        folsom::Options o;
        if (cfg.routes)
            o.routes = replicated;
        else
            o.servers = addresses;
        o.protocol = p;
        o.request_timeout = 1s;  // shorter than the longest freezes: those time out
        o.connect_timeout = 1s;
        o.reconnect_initial_delay = 10ms;
        o.reconnect_max_delay = 500ms;
        o.connections_per_server = p == folsom::Protocol::binary ? 2 : 1;
        clients.push_back(std::make_unique<folsom::BlockingClient>(o));
    }
    std::printf(
        "soak: %d s, %d memcached (%s ...), clients ascii/binary/meta%s, %d threads x %d "
        "in flight, %d req/s, seed %llu\n",
        cfg.seconds, cfg.servers, addresses.front().c_str(),
        cfg.routes ? " through an AllSyncRoute over one pool per server" : "", cfg.threads, window,
        cfg.rate, static_cast<unsigned long long>(cfg.seed));
    std::fflush(stdout);

    LoadLedger ledger;
    folsom::soak::RssTrend rss;
    const auto start = Clock::now();
    const auto end = start + std::chrono::seconds(cfg.seconds);
    // --routes: the last tenth of the run (5 to 30 s) starts no fault, so that the writes
    // acknowledged then must be on every replica at the end.
    const auto quiet = std::chrono::seconds(std::clamp(cfg.seconds / 10, 5, 30));
    Chaos chaos(servers, cfg.seed ^ 0x5eed, cfg.routes ? end - quiet : Clock::time_point::max());
    std::vector<std::unique_ptr<Worker>> workers;
    std::vector<std::unique_ptr<ReplicaBook>> books;  // --routes: each thread's keys
    std::vector<std::thread> threads;
    for (int t = 0; t < cfg.threads; ++t) {
        workers.push_back(std::make_unique<Worker>());
        auto client = clients[static_cast<std::size_t>(t) % clients.size()]->async();
        const double rate = cfg.rate > 0 ? double(cfg.rate) / cfg.threads : 0.0;
        if (cfg.routes) {
            books.push_back(
                std::make_unique<ReplicaBook>("r" + std::to_string(t) + ":", route_slots));
            threads.emplace_back(run_route_worker, client, std::ref(ledger),
                                 std::ref(*books.back()), std::cref(chaos),
                                 std::ref(*workers.back()), cfg.seed + 1 + t, end, rate);
        } else {
            threads.emplace_back(run_worker, client, std::ref(ledger), std::ref(*workers.back()),
                                 cfg.seed + 1 + t, end, rate);
        }
    }

    // A memory sample every second and a report every report_every, on a thread of their own:
    // a restart can hold the main thread for seconds on a loaded machine.
    std::thread reporter([&] {
        auto next_sample = start + 1s;
        auto next_report = start + std::chrono::seconds(cfg.report_every);
        for (auto now = Clock::now(); now < end; now = Clock::now()) {
            if (now >= next_sample) {
                rss.add(folsom::soak::resident_bytes());
                next_sample += 1s;
            }
            if (now >= next_report) {
                report("at", std::chrono::duration_cast<std::chrono::seconds>(now - start), ledger,
                       chaos, folsom::soak::resident_bytes());
                next_report += std::chrono::seconds(cfg.report_every);
            }
            std::this_thread::sleep_until(std::min(next_sample, next_report));
        }
    });
    // The main thread, which started the servers, injects the faults.
    for (auto now = Clock::now(); now < end; now = Clock::now()) {
        chaos.tick(now);
        std::this_thread::sleep_for(20ms);
    }
    reporter.join();
    for (auto& t : threads)
        t.join();

    // Drain: end the fault in progress, then every request issued must complete (the longest
    // a request can wait is about a connect timeout plus a request timeout).
    for (int i = 0; i < 20 && !chaos.idle(); ++i) {
        chaos.recover();
        if (!chaos.idle()) std::this_thread::sleep_for(500ms);
    }
    const auto drain_deadline = Clock::now() + 30s;
    while (ledger.completed() < ledger.issued() && Clock::now() < drain_deadline)
        std::this_thread::sleep_for(10ms);
    std::this_thread::sleep_for(500ms);  // room for a second completion to show
    const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start);
    report("end", elapsed, ledger, chaos, folsom::soak::resident_bytes());

    std::vector<std::string> failures;
    if (ledger.issued() != ledger.completed())
        failures.push_back(std::to_string(ledger.issued() - ledger.completed()) +
                           " requests never completed");
    if (ledger.twice() > 0)
        failures.push_back(std::to_string(ledger.twice()) +
                           " completions of requests that had "
                           "already completed");
    if (ledger.wrong() > 0)
        failures.push_back(std::to_string(ledger.wrong()) + " values not those of their key");
    if (ledger.unexpected() > 0)
        failures.push_back(std::to_string(ledger.unexpected()) +
                           " failures that faults do not explain");
    if (ledger.ok() == 0) failures.push_back("no request succeeded");
    for (auto& w : workers)
        if (w->stuck) failures.push_back("a load thread waited 30 s for a completion");
    for (auto& c : clients)
        if (c->async().outstanding() != 0)
            failures.push_back("a client still counts " + std::to_string(c->async().outstanding()) +
                               " outstanding requests");
    if (!chaos.idle()) failures.push_back("a killed server could not be restarted");
    if (cfg.seconds >= 10 && chaos.kills + chaos.freezes == 0)
        failures.push_back("no fault was injected");
    if (judge_memory && rss.grew()) failures.push_back("resident memory kept growing");
    // --routes: the replicas, asked directly now that nothing is in flight and every server is
    // up (before the recovery check, whose writes go to keys of their own).
    ReplicaVerdict replica;
    std::uint64_t reads_checked = 0, stale_reads = 0, retired = 0, route_requests = 0;
    if (cfg.routes) {
        replica = check_replicas(books, servers, chaos);
        for (const auto& b : books) {
            reads_checked += b->reads_checked();
            stale_reads += b->read_mismatches();
            retired += b->retired();
        }
        for (auto& c : clients)
            for (const auto& st : c->async().route_stats())
                if (st.name == "replicated") route_requests += st.requests;
        if (replica.diverged > 0)
            failures.push_back(std::to_string(replica.diverged) +
                               " keys on which a replica diverged from what the route "
                               "acknowledged");
        if (replica.unreadable > 0)
            failures.push_back(std::to_string(replica.unreadable) +
                               " keys a replica could not be asked for");
        if (stale_reads > 0)
            failures.push_back(std::to_string(stale_reads) +
                               " reads that contradicted an acknowledged write");
        if (replica.stored == 0) failures.push_back("no write was acknowledged by every replica");
    }
    if (!(cfg.routes ? routes_recovered(clients, servers) : all_recovered(clients)))
        failures.push_back("a client did not recover after the faults");

    std::printf(
        "soak: faults injected: %d SIGKILL+restart, %d SIGSTOP/SIGCONT (longest %lld ms)"
        ", %d restarts retried; multi-gets answered in part: %llu\n",
        chaos.kills.load(), chaos.freezes.load(),
        static_cast<long long>(chaos.longest_freeze.count()), chaos.failed_restarts,
        static_cast<unsigned long long>(ledger.partial()));
    std::printf(
        "soak: rss (%zu samples): middle-third median %.1f MiB, last-third median %.1f "
        "MiB, allowed growth %.1f MiB%s\n",
        rss.size(), mib(rss.middle_median()), mib(rss.end_median()), mib(rss.allowance()),
        judge_memory ? "" : " (not judged under a sanitizer)");
    if (cfg.routes) {
        std::printf(
            "soak: routes: %llu requests through the AllSyncRoute; %llu keys retired after a "
            "failed write; %llu reads checked against acknowledged writes, %llu contradicted\n",
            static_cast<unsigned long long>(route_requests),
            static_cast<unsigned long long>(retired),
            static_cast<unsigned long long>(reads_checked),
            static_cast<unsigned long long>(stale_reads));
        std::printf(
            "soak: replicas: %llu keys checked on %d replicas: %llu acknowledged stored, %llu of "
            "them on every replica (of their copies: %llu equal, %llu lost to restarts, %llu lost "
            "to evictions); %llu deleted or never written (%llu on no replica); %llu diverged, "
            "%llu unreadable\n",
            static_cast<unsigned long long>(replica.keys), cfg.servers,
            static_cast<unsigned long long>(replica.stored),
            static_cast<unsigned long long>(replica.on_every_replica),
            static_cast<unsigned long long>(replica.copies_equal),
            static_cast<unsigned long long>(replica.lost_to_restarts),
            static_cast<unsigned long long>(replica.lost_to_evictions),
            static_cast<unsigned long long>(replica.keys - replica.stored),
            static_cast<unsigned long long>(replica.absent_everywhere),
            static_cast<unsigned long long>(replica.diverged),
            static_cast<unsigned long long>(replica.unreadable));
        for (const auto& e : replica.examples)
            std::printf("soak: diverged: %s\n", e.c_str());
    }
    if (failures.empty()) {
        std::printf(
            "soak: PASS: %llu issued, %llu completed exactly once, %llu ok, %llu failed "
            "(%s)\n",
            static_cast<unsigned long long>(ledger.issued()),
            static_cast<unsigned long long>(ledger.completed()),
            static_cast<unsigned long long>(ledger.ok()),
            static_cast<unsigned long long>(ledger.failed()), ledger.failures_by_reason().c_str());
    } else {
        std::string why;
        for (auto& f : failures)
            why += (why.empty() ? "" : "; ") + f;
        std::printf("soak: FAIL: %s\n", why.c_str());
    }
    std::fflush(stdout);
    // Shut the clients down while the ledger and the workers their handlers use still exist:
    // requests that never completed get their (late) completion with `closed` here.
    clients.clear();
    return failures.empty() ? 0 : 1;
}
