// Client::meta_get / meta_set / meta_delete against a real memcached: the win tokens (W), stale
// items (X) and "win already sent" (Z) as memcached hands them out, the return flags, the
// three completion-token forms, and errc::unsupported (with nothing sent) over ascii/binary.
#include "folsom/blocking_client.hpp"

#include "support/memcached_server.hpp"

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <future>
#include <string>
#include <thread>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::MetaDeleteOptions;
using folsom::MetaGetOptions;
using folsom::MetaGetResult;
using folsom::MetaSetMode;
using folsom::MetaSetOptions;
using folsom::Status;

class MetaOps : public ::testing::Test {
  protected:
    folsom::Options options(folsom::Protocol p = folsom::Protocol::meta) const {
        folsom::Options o;
        o.servers = {server_.address()};
        o.protocol = p;
        return o;
    }
    folsom::test::MemcachedServer server_;
};

MetaGetOptions vivify(std::chrono::seconds ttl) {
    MetaGetOptions g;
    g.vivify_on_miss = ttl;
    return g;
}

TEST_F(MetaOps, PlainMetaGetIsValueCasAndFlags) {
    folsom::BlockingClient c(options());
    EXPECT_EQ(c.set("k", "hello", 60s, 7), Status::stored);
    MetaGetResult r = c.meta_get("k");
    ASSERT_TRUE(r.hit());
    EXPECT_EQ(r.value->data, "hello");
    EXPECT_EQ(r.value->flags, 7u);
    EXPECT_EQ(r.flags, 7u);
    EXPECT_NE(r.cas, 0u);
    EXPECT_EQ(r.value->cas, r.cas);
    EXPECT_FALSE(r.win || r.stale || r.win_sent);
    EXPECT_FALSE(r.ttl);  // not asked for

    MetaGetResult miss = c.meta_get("absent");
    EXPECT_FALSE(miss.hit());
    EXPECT_EQ(miss.cas, 0u);
    EXPECT_FALSE(miss.win || miss.stale || miss.win_sent);
}

TEST_F(MetaOps, VivifyOnMissHandsTheWinToTheFirstCallerOnly) {
    folsom::BlockingClient c(options());
    MetaGetResult first = c.meta_get("k", vivify(30s));
    ASSERT_TRUE(first.hit());  // the stub
    EXPECT_EQ(first.value->data, "");
    EXPECT_TRUE(first.win);
    EXPECT_FALSE(first.win_sent);
    EXPECT_NE(first.cas, 0u);
    for (int i = 0; i < 3; ++i) {
        MetaGetResult later = c.meta_get("k", vivify(30s));
        ASSERT_TRUE(later.hit());
        EXPECT_FALSE(later.win);
        EXPECT_TRUE(later.win_sent);
        EXPECT_EQ(later.cas, first.cas);
    }
    // The winner stores over its stub with the stub's cas; the item is then an ordinary one.
    MetaSetOptions s;
    s.compare_cas = first.cas;
    s.flags = 3;
    EXPECT_EQ(c.meta_set("k", "filled", 60s, s), Status::stored);
    MetaGetResult after = c.meta_get("k", vivify(30s));
    ASSERT_TRUE(after.hit());
    EXPECT_EQ(after.value->data, "filled");
    EXPECT_EQ(after.flags, 3u);
    EXPECT_FALSE(after.win || after.win_sent || after.stale);
}

TEST_F(MetaOps, InvalidateServesStaleAndHandsOutOneWin) {
    folsom::BlockingClient c(options());
    EXPECT_EQ(c.set("k", "v1", 100s), Status::stored);
    const std::uint64_t before = c.meta_get("k").cas;
    MetaDeleteOptions d;
    d.invalidate = true;
    d.stale_ttl = 30s;
    EXPECT_EQ(c.meta_delete("k", d), Status::deleted);

    MetaGetOptions g;
    g.return_ttl = true;
    MetaGetResult winner = c.meta_get("k", g);
    ASSERT_TRUE(winner.hit());
    EXPECT_EQ(winner.value->data, "v1");
    EXPECT_TRUE(winner.stale);
    EXPECT_TRUE(winner.win);
    EXPECT_FALSE(winner.win_sent);
    EXPECT_NE(winner.cas, before);  // md I bumps the cas
    ASSERT_TRUE(winner.ttl);
    EXPECT_LE(*winner.ttl, 30);
    EXPECT_GT(*winner.ttl, 0);
    for (int i = 0; i < 3; ++i) {
        MetaGetResult other = c.meta_get("k");
        ASSERT_TRUE(other.hit());
        EXPECT_EQ(other.value->data, "v1");
        EXPECT_TRUE(other.stale);
        EXPECT_TRUE(other.win_sent);
        EXPECT_FALSE(other.win);
    }
    MetaSetOptions s;
    s.compare_cas = before;  // an old cas no longer matches
    EXPECT_EQ(c.meta_set("k", "v2", 60s, s), Status::exists);
    s.compare_cas = winner.cas;
    EXPECT_EQ(c.meta_set("k", "v2", 60s, s), Status::stored);
    MetaGetResult fresh = c.meta_get("k");
    EXPECT_EQ(fresh.value->data, "v2");
    EXPECT_FALSE(fresh.stale || fresh.win || fresh.win_sent);
}

TEST_F(MetaOps, RecacheBelowWinsOnceWhenTheTtlRunsLow) {
    folsom::BlockingClient c(options());
    EXPECT_EQ(c.set("k", "v", 10s), Status::stored);
    MetaGetOptions high;
    high.recache_below = 5s;  // 10 s left: not yet
    EXPECT_FALSE(c.meta_get("k", high).win);
    MetaGetOptions low;
    low.recache_below = 20s;
    MetaGetResult w = c.meta_get("k", low);
    EXPECT_TRUE(w.win);
    EXPECT_FALSE(w.stale);
    EXPECT_EQ(w.value->data, "v");
    MetaGetResult z = c.meta_get("k", low);
    EXPECT_FALSE(z.win);
    EXPECT_TRUE(z.win_sent);
    EXPECT_EQ(z.value->data, "v");
}

TEST_F(MetaOps, ReturnFlagsTouchAndNoBump) {
    folsom::BlockingClient c(options());
    EXPECT_EQ(c.set("k", "v", 0s), Status::stored);
    MetaGetOptions g;
    g.return_ttl = true;
    g.return_hit_before = true;
    g.return_last_access = true;
    g.no_bump = true;
    MetaGetResult r = c.meta_get("k", g);
    ASSERT_TRUE(r.ttl && r.hit_before && r.last_access);
    EXPECT_EQ(*r.ttl, -1);  // no expiry
    EXPECT_FALSE(*r.hit_before);
    // u does not mark the item fetched; a normal get does.
    EXPECT_FALSE(*c.meta_get("k", g).hit_before);
    c.meta_get("k");
    EXPECT_TRUE(*c.meta_get("k", g).hit_before);

    MetaGetOptions t;
    t.touch = 50s;
    EXPECT_TRUE(c.meta_get("k", t).hit());
    auto ttl = c.meta_get("k", g).ttl;
    ASSERT_TRUE(ttl);
    EXPECT_GT(*ttl, 0);
    EXPECT_LE(*ttl, 50);
}

TEST_F(MetaOps, MetaSetModesCasAndInvalidate) {
    folsom::BlockingClient c(options());
    MetaSetOptions add;
    add.mode = MetaSetMode::add;
    EXPECT_EQ(c.meta_set("k", "a", 60s, add), Status::stored);
    EXPECT_EQ(c.meta_set("k", "b", 60s, add), Status::not_stored);
    MetaSetOptions replace;
    replace.mode = MetaSetMode::replace;
    EXPECT_EQ(c.meta_set("absent", "x", 60s, replace), Status::not_stored);
    MetaSetOptions append;
    append.mode = MetaSetMode::append;
    EXPECT_EQ(c.meta_set("k", "+", 0s, append), Status::stored);
    MetaSetOptions prepend;
    prepend.mode = MetaSetMode::prepend;
    EXPECT_EQ(c.meta_set("k", "-", 0s, prepend), Status::stored);
    EXPECT_EQ(c.get("k")->data, "-a+");

    MetaSetOptions cas;
    cas.compare_cas = 1;
    EXPECT_EQ(c.meta_set("absent", "x", 60s, cas), Status::not_found);

    // I with an older cas still stores, but the item is stale: the next get wins a refresh.
    const std::uint64_t old = c.meta_get("k").cas;
    EXPECT_EQ(c.meta_set("k", "newer", 60s), Status::stored);
    MetaSetOptions inv;
    inv.compare_cas = old;
    inv.invalidate = true;
    EXPECT_EQ(c.meta_set("k", "late", 60s, inv), Status::stored);
    MetaGetResult r = c.meta_get("k");
    EXPECT_EQ(r.value->data, "late");
    EXPECT_TRUE(r.stale);
    EXPECT_TRUE(r.win);
}

TEST_F(MetaOps, MetaDeleteWithCas) {
    folsom::BlockingClient c(options());
    EXPECT_EQ(c.set("k", "v", 60s), Status::stored);
    const std::uint64_t cas = c.meta_get("k").cas;
    MetaDeleteOptions wrong;
    wrong.compare_cas = cas + 1000;
    EXPECT_EQ(c.meta_delete("k", wrong), Status::exists);
    MetaDeleteOptions right;
    right.compare_cas = cas;
    EXPECT_EQ(c.meta_delete("k", right), Status::deleted);
    EXPECT_EQ(c.meta_delete("k"), Status::not_found);
    MetaDeleteOptions inv;
    inv.invalidate = true;
    EXPECT_EQ(c.meta_delete("k", inv), Status::not_found);
}

TEST_F(MetaOps, CompletionTokens) {
    asio::io_context io;
    auto work = asio::make_work_guard(io);
    std::thread io_thread([&] { io.run(); });
    auto client = folsom::Client::connect(io, options());

    std::promise<std::pair<std::error_code, Status>> set_done;
    client.meta_set("k", std::string("v"), 60s, MetaSetOptions{},
                    [&](std::error_code ec, Status s) {
                        set_done.set_value({ec, s});
                    });
    auto [set_ec, set_status] = set_done.get_future().get();
    EXPECT_FALSE(set_ec);
    EXPECT_EQ(set_status, Status::stored);

    std::future<MetaGetResult> f = client.meta_get("k", asio::use_future);
    EXPECT_EQ(f.get().value->data, "v");

    std::promise<std::string> co_done;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            MetaGetResult r = co_await client.meta_get("k", vivify(30s), asio::use_awaitable);
            Status d = co_await client.meta_delete("k", MetaDeleteOptions{}, asio::use_awaitable);
            co_done.set_value(r.value->data + ":" + std::string(folsom::to_string(d)));
        },
        asio::detached);
    auto fut = co_done.get_future();
    ASSERT_EQ(fut.wait_for(20s), std::future_status::ready);
    EXPECT_EQ(fut.get(), "v:DELETED");
    client.shutdown();
    work.reset();
    io_thread.join();
}

TEST_F(MetaOps, UnsupportedOverAsciiAndBinaryAndNothingIsSent) {
    for (auto p : {folsom::Protocol::ascii, folsom::Protocol::binary}) {
        folsom::BlockingClient c(options(p));
        c.set("k", "v", 60s);  // connected, and the counters below move only for us
        const std::string before =
            folsom::test::raw_request(server_.port(), "stats\r\n", "END\r\n");
        auto code_of = [](auto&& f) {
            try {
                f();
            } catch (const std::system_error& e) {
                return e.code();
            }
            return std::error_code{};
        };
        EXPECT_EQ(code_of([&] { c.meta_get("k", vivify(30s)); }), errc::unsupported);
        EXPECT_EQ(code_of([&] { c.meta_set("k", "x", 60s); }), errc::unsupported);
        EXPECT_EQ(code_of([&] { c.meta_delete("k"); }), errc::unsupported);
        // The connection stays usable, and the server saw none of it.
        EXPECT_EQ(c.get("k")->data, "v");
        const std::string after = folsom::test::raw_request(server_.port(), "stats\r\n", "END\r\n");
        EXPECT_EQ(folsom::test::stat_value(after, "cmd_get"),
                  folsom::test::stat_value(before, "cmd_get") + 1);
        EXPECT_EQ(folsom::test::stat_value(after, "cmd_set"),
                  folsom::test::stat_value(before, "cmd_set"));
        EXPECT_EQ(folsom::test::stat_value(after, "delete_misses") +
                      folsom::test::stat_value(after, "delete_hits"),
                  folsom::test::stat_value(before, "delete_misses") +
                      folsom::test::stat_value(before, "delete_hits"));
        EXPECT_EQ(c.get("k")->data, "v");  // and the item was not touched
    }
}

TEST_F(MetaOps, InvalidKeyIsRefusedBeforeSending) {
    folsom::BlockingClient c(options());
    try {
        c.meta_get("bad key");
        ADD_FAILURE() << "no error";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::invalid_key);
    }
    EXPECT_EQ(c.set("k", "v", 60s), Status::stored);
}

}  // namespace
