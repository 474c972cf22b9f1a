/// @file
/// An in-memory memcached behind the ordinary folsom::Client, for unit tests of code that uses
/// the client (Folsom's FakeRawMemcacheClient).
///
///     asio::io_context io;
///     folsom::ManualClock clock;                       // moves only when the test says so
///     folsom::Client client = folsom::make_fake_client(io.get_executor(), {.clock = clock});
///     client.set("k", "v", std::chrono::seconds(10), [](std::error_code, folsom::Status) {});
///     clock.advance(std::chrono::seconds(11));         // "k" has now expired
///
/// The code under test keeps its folsom::Client; only the factory differs. No socket, no
/// thread and no server are involved.
///
/// **Behaviour.** The fake answers as memcached 1.6 does over the text (ASCII) protocol, and a
/// test suite (tests/integration/fake_vs_real_test.cpp) runs the same cases against both and
/// requires identical results: the same Status for every store, delete and touch outcome;
/// relative ttls up to 30 days and absolute Unix times beyond (a negative Ttl stores an item
/// that is already expired); cas values that change on every modification (set, append,
/// incr, ...) and not on touch or gat; append/prepend keep the item's flags and ttl; incr
/// wraps at 2^64, decr stops at 0, both fail with errc::client_error on a value that is not a
/// decimal number, and a result shorter than the old value is padded with spaces as memcached
/// does in place; flush_all with and without delay; multi-get; get and gat return cas 0 and
/// gets and gats the item's cas, as over ASCII. The same keys (folsom::protocol::validate_key)
/// and value sizes are refused, with the same errors, before anything is stored.
/// As over ASCII, the meta-protocol operations (Client::meta_get, meta_set, meta_delete, and
/// so the recipes of cache_recipes.hpp) fail with errc::unsupported.
///
/// **Differences from a real server**, on purpose: nothing is ever evicted (there is no memory
/// limit besides FakeOptions::max_value_size per value); cas values are small consecutive
/// numbers; stats report a handful of counters (cmd_get, cmd_set, cmd_touch, cmd_flush,
/// get_hits, get_misses, get_expired, delete_/incr_/decr_/touch_ hits and misses, cas_hits,
/// cas_misses, cas_badval, curr_items, total_items) plus uptime, time and version; curr_items
/// counts only items that have not expired; an append or prepend whose result would be over
/// max_value_size is answered not_stored; the version is FakeOptions::version ("fake").
///
/// **Completions** are delivered as by the real client: through the operation's events, on the
/// client's executor, never from inside the call that started the request. Each request takes
/// effect in the order it was made (like requests pipelined on one connection), at the moment
/// it is made, by the clock FakeOptions::clock.
///
/// **Thread-safety**: the returned Client may be used from any thread, as the real one; the
/// in-memory store is guarded by a mutex. ManualClock may be advanced from any thread.
///
/// **Lifetime**: the store lives as long as any copy of the Client or any request in flight.
/// shutdown() (or dropping the last Client handle) fails requests not yet delivered, and every
/// later one, with errc::closed.
#pragma once

#include "folsom/client.hpp"
#include "folsom/export.hpp"

#include <asio/any_io_executor.hpp>
#include <asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace folsom {

/// A wall clock that moves only when told to, for ttl tests against the fake client.
///
/// It is a cheap handle: copies share one time, so a copy can be given to FakeOptions::clock
/// and the original advanced by the test. Starts at the real current time, so that ttls over
/// 30 days (which the client sends as absolute Unix times) mean what they say.
/// Thread-safe.
class FOLSOM_EXPORT ManualClock {
  public:
    /// The time of a system_clock.
    using time_point = std::chrono::system_clock::time_point;

    /// Starts at std::chrono::system_clock::now().
    ManualClock() : ManualClock(std::chrono::system_clock::now()) {}
    /// Starts at `start`.
    explicit ManualClock(time_point start)
        : ticks_(std::make_shared<std::atomic<std::int64_t>>(start.time_since_epoch().count())) {}

    /// The current time of this clock (and of every copy).
    time_point now() const noexcept {
        return time_point(time_point::duration(ticks_->load(std::memory_order_acquire)));
    }
    /// Same as now(), so that a ManualClock can be used where a clock function is expected.
    time_point operator()() const noexcept { return now(); }

    /// Moves the clock forward by `d` (backward when `d` is negative).
    void advance(std::chrono::system_clock::duration d) noexcept {
        ticks_->fetch_add(d.count(), std::memory_order_acq_rel);
    }
    /// Sets the clock to `t`.
    void set(time_point t) noexcept {
        ticks_->store(t.time_since_epoch().count(), std::memory_order_release);
    }

  private:
    std::shared_ptr<std::atomic<std::int64_t>> ticks_;
};

/// How the fake client behaves.
struct FOLSOM_EXPORT FakeOptions {
    /// Largest value a store accepts; a larger one fails with errc::value_too_large, as
    /// Options::max_value_size does for the real client.
    std::size_t max_value_size = 1024 * 1024;

    /// Requests in flight at once; past it a request fails with errc::overloaded, as
    /// Options::max_outstanding_requests does for the real client.
    std::size_t max_outstanding_requests = 1000;

    /// The wall clock ttls are measured by; empty means std::chrono::system_clock::now.
    /// Give it a ManualClock to make items expire without sleeping.
    std::function<std::chrono::system_clock::time_point()> clock{};

    /// What version() answers.
    std::string version = "fake";

    /// Client::wait_connected() reports the fake connected this long after it was made (to
    /// test code that waits for readiness, including its timeout path). Requests are served
    /// at once regardless.
    std::chrono::milliseconds connect_delay{0};
};

/// Makes a Client whose single server, named "fake:0", is an in-memory store private to it.
/// Completions run on `ex`, which the test must run (e.g. io_context::run or run_for).
FOLSOM_EXPORT Client make_fake_client(asio::any_io_executor ex, FakeOptions options = {});

/// As make_fake_client(io.get_executor(), options).
inline Client make_fake_client(asio::io_context& io, FakeOptions options = {}) {
    return make_fake_client(io.get_executor(), std::move(options));
}

}  // namespace folsom
