// get_or_fill, get_stale_while_revalidate and invalidate (cache_recipes.hpp) against a real
// memcached, with many concurrent callers: several clients (separate connections) driven by
// several I/O threads, each with many requests in flight. What must hold: a fill runs once per
// win, every caller completes exactly once, and the values are the ones filled.
#include "folsom/cache_recipes.hpp"

#include "folsom/blocking_client.hpp"

#include "support/memcached_server.hpp"

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::CacheResult;
using folsom::CacheSource;
using folsom::errc;
using folsom::FillDone;
using folsom::FillOptions;
using folsom::RevalidateOptions;
using folsom::Status;

constexpr int clients = 3;
constexpr int per_client = 8;
constexpr int callers = clients * per_client;

/// Results of concurrent recipe calls; each call must add exactly one.
struct Results {
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::pair<std::error_code, CacheResult>> all;

    auto handler() {
        return [this](std::error_code ec, CacheResult r) {
            std::lock_guard lk(m);
            all.emplace_back(ec, std::move(r));
            cv.notify_all();
        };
    }
    /// Waits (bounded) until `n` results are in; returns how many there are.
    std::size_t wait_for(std::size_t n, std::chrono::seconds limit = 20s) {
        std::unique_lock lk(m);
        cv.wait_for(lk, limit, [&] { return all.size() >= n; });
        return all.size();
    }
    std::size_t count(CacheSource s) {
        std::lock_guard lk(m);
        std::size_t c = 0;
        for (auto& [ec, r] : all)
            c += !ec && r.source == s;
        return c;
    }
};

/// Several meta clients on one io_context run by several threads.
class CacheRecipes : public ::testing::Test {
  protected:
    void SetUp() override {
        folsom::Options o;
        o.servers = {server_.address()};
        o.protocol = folsom::Protocol::meta;
        for (int i = 0; i < clients; ++i)
            clients_.push_back(folsom::Client::connect(io_, o));
        for (int i = 0; i < 3; ++i)
            threads_.emplace_back([this] { io_.run(); });
        direct_ = std::make_unique<folsom::BlockingClient>(o);
    }
    void TearDown() override {
        for (auto& c : clients_)
            c.shutdown();
        clients_.clear();
        work_.reset();
        for (auto& t : threads_)
            t.join();
    }

    /// A callback fill that counts its runs and delivers `value` after `delay` (so that the
    /// other callers find the stub while it runs).
    auto delayed_fill(std::string value, std::chrono::milliseconds delay = 150ms) {
        return [this, value, delay](FillDone done) {
            fills_.fetch_add(1);
            auto t = std::make_shared<asio::steady_timer>(io_, delay);
            t->async_wait([t, done, value](std::error_code) { done({}, value); });
        };
    }

    folsom::test::MemcachedServer server_;
    asio::io_context io_;
    asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
    std::vector<folsom::Client> clients_;
    std::vector<std::thread> threads_;
    std::unique_ptr<folsom::BlockingClient> direct_;  // to look at the server's side
    std::atomic<int> fills_{0};
};

TEST_F(CacheRecipes, ConcurrentMissFillsOnceAndEveryoneGetsTheValue) {
    Results results;
    FillOptions opts;
    opts.ttl = 60s;
    opts.flags = 5;
    opts.wait_timeout = 10s;
    for (int i = 0; i < callers; ++i)
        folsom::get_or_fill(clients_[i % clients], "k", opts, delayed_fill("filled"),
                            results.handler());
    ASSERT_EQ(results.wait_for(callers), static_cast<std::size_t>(callers));
    EXPECT_EQ(fills_.load(), 1);
    for (auto& [ec, r] : results.all) {
        ASSERT_FALSE(ec) << ec.message();
        ASSERT_TRUE(r.value);
        EXPECT_EQ(r.value->data, "filled");
        EXPECT_EQ(r.value->flags, 5u);
    }
    EXPECT_EQ(results.count(CacheSource::filled), 1u);
    EXPECT_EQ(results.count(CacheSource::filled) + results.count(CacheSource::waited) +
                  results.count(CacheSource::hit),
              static_cast<std::size_t>(callers));
    EXPECT_GE(results.count(CacheSource::waited), 1u);  // the fill took 150 ms: some waited
    for (auto& [ec, r] : results.all) {
        if (r.source == CacheSource::filled) {
            EXPECT_TRUE(r.stored);
        }
    }
    // The item is an ordinary one now: no stub flags, the filled value and flags.
    auto g = direct_->meta_get("k");
    EXPECT_EQ(g.value->data, "filled");
    EXPECT_EQ(g.flags, 5u);
    EXPECT_FALSE(g.win || g.win_sent || g.stale);
}

TEST_F(CacheRecipes, NoWaitLosersGetTheMissAtOnce) {
    Results results;
    FillOptions opts;
    opts.wait_for_fill = false;
    // The fill finishes only once every loser has its answer: losers cannot have waited.
    std::mutex m;
    FillDone parked;
    auto fill = [&](FillDone done) {
        fills_.fetch_add(1);
        std::lock_guard lk(m);
        parked = std::move(done);
    };
    for (int i = 0; i < callers; ++i)
        folsom::get_or_fill(clients_[i % clients], "k", opts, fill, results.handler());
    ASSERT_EQ(results.wait_for(callers - 1), static_cast<std::size_t>(callers - 1));
    EXPECT_EQ(results.count(CacheSource::miss), static_cast<std::size_t>(callers - 1));
    for (auto& [ec, r] : results.all)
        EXPECT_FALSE(r.value);
    {
        std::lock_guard lk(m);
        ASSERT_TRUE(parked);
        parked({}, "late");
        parked({}, "twice");  // a second report is ignored
    }
    ASSERT_EQ(results.wait_for(callers), static_cast<std::size_t>(callers));
    EXPECT_EQ(fills_.load(), 1);
    EXPECT_EQ(results.count(CacheSource::filled), 1u);
    EXPECT_EQ(direct_->get("k")->data, "late");
    std::this_thread::sleep_for(50ms);  // a duplicate completion would show up here
    EXPECT_EQ(results.wait_for(callers + 1, 0s), static_cast<std::size_t>(callers));
}

TEST_F(CacheRecipes, FailedFillReleasesTheWinAndAWaiterFillsInstead) {
    Results results;
    FillOptions opts;
    opts.wait_timeout = 10s;
    std::atomic<int> runs{0};
    auto fill = [&](FillDone done) {
        const int n = runs.fetch_add(1);
        auto t = std::make_shared<asio::steady_timer>(io_, 100ms);
        t->async_wait([t, done, n](std::error_code) {
            if (n == 0)
                done(make_error_code(std::errc::io_error), {});
            else
                done({}, "second");
        });
    };
    for (int i = 0; i < callers; ++i)
        folsom::get_or_fill(clients_[i % clients], "k", opts, fill, results.handler());
    ASSERT_EQ(results.wait_for(callers), static_cast<std::size_t>(callers));
    EXPECT_EQ(runs.load(), 2);
    int failed = 0;
    for (auto& [ec, r] : results.all) {
        if (ec) {
            EXPECT_EQ(ec, std::errc::io_error);
            ++failed;
            continue;
        }
        ASSERT_TRUE(r.value);
        EXPECT_EQ(r.value->data, "second");
    }
    EXPECT_EQ(failed, 1);
    EXPECT_EQ(results.count(CacheSource::filled), 1u);
}

TEST_F(CacheRecipes, FailedFillLeavesNoStubBehind) {
    auto fail = [](FillDone done) { done(make_error_code(std::errc::io_error), {}); };
    auto f = folsom::get_or_fill(clients_[0], "k", {}, fail, asio::use_future);
    try {
        f.get();
        ADD_FAILURE() << "no error";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), std::errc::io_error);
    }
    EXPECT_FALSE(direct_->meta_get("k").hit());  // the stub was deleted
    auto ok = folsom::get_or_fill(clients_[0], "k", {}, delayed_fill("v", 1ms), asio::use_future);
    CacheResult r = ok.get();
    EXPECT_EQ(r.source, CacheSource::filled);
    EXPECT_EQ(r.value->data, "v");
}

TEST_F(CacheRecipes, CoroutineFillAndThrowingFills) {
    std::promise<void> finished;
    std::vector<std::string> seen;
    asio::co_spawn(
        io_,
        [&]() -> asio::awaitable<void> {
            auto& c = clients_[0];
            CacheResult r = co_await folsom::get_or_fill(
                c, "co", {},
                [&]() -> asio::awaitable<std::string> {
                    asio::steady_timer t(io_, 10ms);
                    co_await t.async_wait(asio::use_awaitable);
                    co_return "from-coroutine";
                },
                asio::use_awaitable);
            seen.push_back(r.value->data);
            r = co_await folsom::get_or_fill(
                c, "co", {}, []() -> asio::awaitable<std::string> { co_return "unused"; },
                asio::use_awaitable);
            seen.push_back(r.value->data + (r.source == CacheSource::hit ? ":hit" : ":?"));
            try {
                co_await folsom::get_or_fill(
                    c, "thrower", {},
                    []() -> asio::awaitable<std::string> {
                        throw std::runtime_error("backend down");
                        co_return "";
                    },
                    asio::use_awaitable);
            } catch (const std::system_error& e) {
                seen.push_back(e.code() == errc::fill_failed ? "fill_failed" : e.code().message());
            }
            try {
                co_await folsom::get_or_fill(
                    c, "thrower", {},
                    [](FillDone) { throw std::system_error(make_error_code(errc::timeout)); },
                    asio::use_awaitable);
            } catch (const std::system_error& e) {
                seen.push_back(e.code() == errc::timeout ? "timeout" : e.code().message());
            }
            finished.set_value();
        },
        asio::detached);
    ASSERT_EQ(finished.get_future().wait_for(20s), std::future_status::ready);
    EXPECT_EQ(seen, (std::vector<std::string>{"from-coroutine", "from-coroutine:hit", "fill_failed",
                                              "timeout"}));
}

TEST_F(CacheRecipes, WaiterTimesOutWhenTheWinnerNeverFills) {
    // Someone else (a raw client) takes the win and never stores.
    folsom::MetaGetOptions g;
    g.vivify_on_miss = 30s;
    ASSERT_TRUE(direct_->meta_get("k", g).win);
    FillOptions opts;
    opts.wait_timeout = 300ms;
    auto f = folsom::get_or_fill(clients_[0], "k", opts, delayed_fill("never"), asio::use_future);
    try {
        f.get();
        ADD_FAILURE() << "no error";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::timeout);
    }
    EXPECT_EQ(fills_.load(), 0);
}

TEST_F(CacheRecipes, ConnectionLossCompletesEveryCallerOnce) {
    Results results;
    FillOptions opts;
    opts.wait_timeout = 20s;
    std::mutex m;
    FillDone parked;
    auto fill = [&](FillDone done) {
        fills_.fetch_add(1);
        std::lock_guard lk(m);
        parked = std::move(done);
    };
    for (int i = 0; i < callers; ++i)
        folsom::get_or_fill(clients_[i % clients], "k", opts, fill, results.handler());
    // Wait until the winner's fill runs, then take the server away from the waiters.
    for (int i = 0; i < 2000 && fills_.load() == 0; ++i)
        std::this_thread::sleep_for(5ms);
    ASSERT_EQ(fills_.load(), 1);
    server_.kill();
    ASSERT_EQ(results.wait_for(callers - 1), static_cast<std::size_t>(callers - 1));
    for (auto& [ec, r] : results.all)
        EXPECT_TRUE(ec) << "a waiter got a value from nowhere";
    {
        std::lock_guard lk(m);
        parked({}, "filled");
    }
    // The winner still has its value; the store could not be made.
    ASSERT_EQ(results.wait_for(callers), static_cast<std::size_t>(callers));
    std::lock_guard lk(results.m);
    auto& [ec, r] = results.all.back();
    EXPECT_FALSE(ec);
    EXPECT_EQ(r.source, CacheSource::filled);
    EXPECT_FALSE(r.stored);
}

TEST_F(CacheRecipes, AfterInvalidateOneCallerRefreshesAndTheOthersGetStale) {
    ASSERT_EQ(direct_->set("k", "v1", 100s), Status::stored);
    EXPECT_EQ(folsom::invalidate(clients_[0], "k", 30s, asio::use_future).get(), Status::deleted);
    Results results;
    std::promise<std::pair<std::error_code, bool>> refreshed;
    RevalidateOptions opts;
    opts.fill.ttl = 100s;
    opts.on_refreshed = [&](std::error_code ec, bool stored) { refreshed.set_value({ec, stored}); };
    for (int i = 0; i < callers; ++i)
        folsom::get_stale_while_revalidate(clients_[i % clients], "k", opts,
                                           delayed_fill("v2", 200ms), results.handler());
    ASSERT_EQ(results.wait_for(callers), static_cast<std::size_t>(callers));
    // Everyone was served at once: the refresh (200 ms) cannot have been waited for.
    EXPECT_EQ(results.count(CacheSource::stale), static_cast<std::size_t>(callers));
    int refreshing = 0;
    for (auto& [ec, r] : results.all) {
        ASSERT_FALSE(ec);
        EXPECT_EQ(r.value->data, "v1");
        refreshing += r.refreshing;
    }
    EXPECT_EQ(refreshing, 1);
    auto fut = refreshed.get_future();
    ASSERT_EQ(fut.wait_for(20s), std::future_status::ready);
    auto [ec, stored] = fut.get();
    EXPECT_FALSE(ec);
    EXPECT_TRUE(stored);
    EXPECT_EQ(fills_.load(), 1);
    auto g = direct_->meta_get("k");
    EXPECT_EQ(g.value->data, "v2");
    EXPECT_FALSE(g.stale || g.win || g.win_sent);
    // And the next callers get the fresh value as a plain hit, without another fill.
    auto r = folsom::get_stale_while_revalidate(clients_[0], "k", opts, delayed_fill("v3"),
                                                asio::use_future)
                 .get();
    EXPECT_EQ(r.source, CacheSource::hit);
    EXPECT_EQ(r.value->data, "v2");
    EXPECT_EQ(fills_.load(), 1);
}

TEST_F(CacheRecipes, InlineRefreshServesTheWinnerTheFreshValue) {
    ASSERT_EQ(direct_->set("k", "v1", 100s), Status::stored);
    EXPECT_EQ(folsom::invalidate(clients_[0], "k", 0s, asio::use_future).get(), Status::deleted);
    Results results;
    RevalidateOptions opts;
    opts.refresh_in_background = false;
    for (int i = 0; i < callers; ++i)
        folsom::get_stale_while_revalidate(clients_[i % clients], "k", opts,
                                           delayed_fill("v2", 100ms), results.handler());
    ASSERT_EQ(results.wait_for(callers), static_cast<std::size_t>(callers));
    EXPECT_EQ(fills_.load(), 1);
    EXPECT_EQ(results.count(CacheSource::filled), 1u);
    for (auto& [ec, r] : results.all) {
        ASSERT_FALSE(ec);
        if (r.source == CacheSource::filled)
            EXPECT_EQ(r.value->data, "v2");
        else if (r.source == CacheSource::stale)
            EXPECT_EQ(r.value->data, "v1");
        else
            EXPECT_EQ(r.source, CacheSource::hit) << "came after the refresh";
    }
    EXPECT_GE(results.count(CacheSource::stale), 1u);
    EXPECT_EQ(direct_->get("k")->data, "v2");
}

TEST_F(CacheRecipes, RecacheThresholdTriggersOneRefresh) {
    ASSERT_EQ(direct_->set("k", "old", 5s), Status::stored);
    Results results;
    std::promise<void> refreshed;
    RevalidateOptions opts;
    opts.recache_below = 30s;
    opts.fill.ttl = 300s;
    opts.on_refreshed = [&](std::error_code, bool) { refreshed.set_value(); };
    for (int i = 0; i < callers; ++i)
        folsom::get_stale_while_revalidate(clients_[i % clients], "k", opts,
                                           delayed_fill("new", 100ms), results.handler());
    ASSERT_EQ(results.wait_for(callers), static_cast<std::size_t>(callers));
    for (auto& [ec, r] : results.all) {
        ASSERT_FALSE(ec);
        EXPECT_EQ(r.value->data, "old");  // nobody waited for the refresh
    }
    ASSERT_EQ(refreshed.get_future().wait_for(20s), std::future_status::ready);
    EXPECT_EQ(fills_.load(), 1);
    folsom::MetaGetOptions g;
    g.return_ttl = true;
    auto after = direct_->meta_get("k", g);
    EXPECT_EQ(after.value->data, "new");
    EXPECT_GT(*after.ttl, 30);  // refreshed with the fill's ttl
    // Far from expiry now: the threshold hands out no further win.
    auto r = folsom::get_stale_while_revalidate(clients_[0], "k", opts, delayed_fill("x"),
                                                asio::use_future)
                 .get();
    EXPECT_EQ(r.source, CacheSource::hit);
    EXPECT_EQ(fills_.load(), 1);
}

TEST_F(CacheRecipes, FailedRefreshReArmsTheWin) {
    ASSERT_EQ(direct_->set("k", "v1", 100s), Status::stored);
    EXPECT_EQ(folsom::invalidate(clients_[0], "k", 60s, asio::use_future).get(), Status::deleted);
    std::promise<std::error_code> first;
    RevalidateOptions opts;
    opts.on_refreshed = [&](std::error_code ec, bool) { first.set_value(ec); };
    auto fail = [](FillDone done) { done(make_error_code(std::errc::io_error), {}); };
    auto r =
        folsom::get_stale_while_revalidate(clients_[0], "k", opts, fail, asio::use_future).get();
    EXPECT_TRUE(r.refreshing);
    EXPECT_EQ(r.value->data, "v1");
    auto fut = first.get_future();
    ASSERT_EQ(fut.wait_for(20s), std::future_status::ready);
    EXPECT_EQ(fut.get(), std::errc::io_error);
    // Still served stale, and the next caller wins again (the token was given back).
    auto g = direct_->meta_get("k");
    EXPECT_EQ(g.value->data, "v1");
    EXPECT_TRUE(g.stale);
    EXPECT_TRUE(g.win);
    // That raw get took the re-armed win; give it back the same way and let the recipe win.
    folsom::MetaDeleteOptions d;
    d.invalidate = true;
    d.compare_cas = g.cas;
    EXPECT_EQ(direct_->meta_delete("k", d), Status::deleted);
    opts.on_refreshed = nullptr;
    opts.refresh_in_background = false;
    r = folsom::get_stale_while_revalidate(clients_[0], "k", opts, delayed_fill("v2", 1ms),
                                           asio::use_future)
            .get();
    EXPECT_EQ(r.source, CacheSource::filled);
    EXPECT_EQ(r.value->data, "v2");
    EXPECT_EQ(direct_->get("k")->data, "v2");
}

TEST_F(CacheRecipes, MissingItemUnderRevalidateIsFilledOnce) {
    Results results;
    RevalidateOptions opts;
    opts.fill.wait_timeout = 10s;
    for (int i = 0; i < callers; ++i)
        folsom::get_stale_while_revalidate(clients_[i % clients], "k", opts,
                                           delayed_fill("v", 100ms), results.handler());
    ASSERT_EQ(results.wait_for(callers), static_cast<std::size_t>(callers));
    EXPECT_EQ(fills_.load(), 1);
    for (auto& [ec, r] : results.all) {
        ASSERT_FALSE(ec);
        EXPECT_EQ(r.value->data, "v");
    }
}

TEST(CacheRecipesUnsupported, OverAsciiAndBinaryNothingRunsNorIsSent) {
    folsom::test::MemcachedServer server;
    for (auto p : {folsom::Protocol::ascii, folsom::Protocol::binary}) {
        folsom::Options o;
        o.servers = {server.address()};
        o.protocol = p;
        folsom::BlockingClient c(o);
        int fills = 0;
        auto fill = [&](FillDone done) {
            ++fills;
            done({}, "x");
        };
        auto code_of = [](auto&& f) {
            try {
                f.get();
            } catch (const std::system_error& e) {
                return e.code();
            }
            return std::error_code{};
        };
        EXPECT_EQ(code_of(folsom::get_or_fill(c.async(), "k", {}, fill, asio::use_future)),
                  errc::unsupported);
        EXPECT_EQ(
            code_of(folsom::get_stale_while_revalidate(c.async(), "k", {}, fill, asio::use_future)),
            errc::unsupported);
        EXPECT_EQ(code_of(folsom::invalidate(c.async(), "k", 30s, asio::use_future)),
                  errc::unsupported);
        EXPECT_EQ(fills, 0);
        EXPECT_FALSE(c.get("k"));
    }
}

}  // namespace
