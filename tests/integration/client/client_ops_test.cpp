// Every client operation and outcome against a real memcached, over every protocol.
#include "folsom/blocking_client.hpp"
#include "folsom/client.hpp"

#include "support/joined_gets.hpp"
#include "support/memcached_server.hpp"
#include "support/protocols.hpp"

#include <asio/bind_executor.hpp>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <span>
#include <thread>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::Status;

std::error_code code_of(const std::system_error& e) {
    return e.code();
}

// Each protocol over TCP loopback and over a Unix domain socket (memcached -s).
class ClientOps : public ::testing::TestWithParam<folsom::test::ProtocolAndTransport> {
  protected:
    // -I 2m: items up to 2 MiB, so the 1 MiB value test fits with the item header.
    ClientOps() : owned_(start({"-I", "2m"})), server_(*owned_) {}

    bool over_unix_socket() const {
        return std::get<1>(GetParam()) == folsom::test::Transport::unix_socket;
    }
    std::unique_ptr<folsom::test::MemcachedServer> start(std::vector<std::string> args) const {
        return folsom::test::start_memcached(over_unix_socket(), std::move(args));
    }

    folsom::Options options() const {
        folsom::Options o;
        o.servers = {server_.address()};
        o.protocol = std::get<0>(GetParam());
        return o;
    }

    std::unique_ptr<folsom::test::MemcachedServer> owned_;
    folsom::test::MemcachedServer& server_;
};

TEST_P(ClientOps, SetGetAndMiss) {
    folsom::BlockingClient c(options());
    EXPECT_EQ(c.set("greeting", "hello", 60s, 7), Status::stored);
    auto v = c.get("greeting");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "hello");
    EXPECT_EQ(v->flags, 7u);
    EXPECT_FALSE(c.get("no-such-key"));
}

TEST_P(ClientOps, GetsReturnsCasAndCasChecksIt) {
    folsom::BlockingClient c(options());
    ASSERT_EQ(c.set("k", "v1"), Status::stored);
    auto v = c.gets("k");
    ASSERT_TRUE(v);
    ASSERT_NE(v->cas, 0u);
    EXPECT_EQ(c.cas("k", "v2", v->cas), Status::stored);
    EXPECT_EQ(c.cas("k", "v3", v->cas), Status::exists);  // changed since
    EXPECT_EQ(c.get("k")->data, "v2");
    EXPECT_EQ(c.cas("missing", "v", 12345), Status::not_found);
}

TEST_P(ClientOps, AddReplaceAppendPrepend) {
    folsom::BlockingClient c(options());
    using folsom::StoreMode;
    EXPECT_EQ(c.store(StoreMode::add, "k", "mid", 0s), Status::stored);
    EXPECT_EQ(c.store(StoreMode::add, "k", "again", 0s), Status::not_stored);
    EXPECT_EQ(c.store(StoreMode::append, "k", ">>", 0s), Status::stored);
    EXPECT_EQ(c.store(StoreMode::prepend, "k", "<<", 0s), Status::stored);
    EXPECT_EQ(c.get("k")->data, "<<mid>>");
    EXPECT_EQ(c.store(StoreMode::replace, "k", "new", 0s), Status::stored);
    EXPECT_EQ(c.get("k")->data, "new");
    EXPECT_EQ(c.store(StoreMode::replace, "absent", "x", 0s), Status::not_stored);
    EXPECT_EQ(c.store(StoreMode::append, "absent", "x", 0s), Status::not_stored);
    EXPECT_EQ(c.store(StoreMode::prepend, "absent", "x", 0s), Status::not_stored);
}

TEST_P(ClientOps, DeleteTouchIncrDecr) {
    folsom::BlockingClient c(options());
    ASSERT_EQ(c.set("n", "10"), Status::stored);
    EXPECT_EQ(c.incr("n", 5), 15u);
    EXPECT_EQ(c.decr("n", 3), 12u);
    EXPECT_EQ(c.decr("n", 100), 0u);  // memcached floors at zero
    EXPECT_EQ(c.incr("absent", 1), std::nullopt);
    EXPECT_EQ(c.decr("absent", 1), std::nullopt);
    ASSERT_EQ(c.set("big", "18446744073709551615"), Status::stored);
    EXPECT_EQ(c.incr("big", 1), 0u);  // wraps at 2^64, as memcached does
    EXPECT_EQ(c.touch("n", 100s), Status::touched);
    EXPECT_EQ(c.touch("absent", 100s), Status::not_found);
    EXPECT_EQ(c.del("n"), Status::deleted);
    EXPECT_EQ(c.del("n"), Status::not_found);
}

TEST_P(ClientOps, TtlExpiresAndGatRefreshesIt) {
    folsom::BlockingClient c(options());
    ASSERT_EQ(c.set("short", "x", 1s), Status::stored);
    ASSERT_EQ(c.set("kept", "y", 1s), Status::stored);
    auto v = c.gat("kept", 100s);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "y");
    EXPECT_FALSE(c.gat("absent", 100s));
    // memcached's clock ticks once a second; wait until "short" is surely gone.
    std::this_thread::sleep_for(2500ms);
    EXPECT_FALSE(c.get("short"));
    EXPECT_TRUE(c.get("kept"));
    ASSERT_EQ(c.set("gone", "z", folsom::Ttl{-1}), Status::stored);  // already expired
    EXPECT_FALSE(c.get("gone"));
}

TEST_P(ClientOps, FlushStatsVersion) {
    folsom::BlockingClient c(options());
    ASSERT_EQ(c.set("k", "v"), Status::stored);
    auto flushed = c.flush_all();
    ASSERT_EQ(flushed.size(), 1u);
    EXPECT_FALSE(flushed[0].error);
    EXPECT_EQ(flushed[0].value, Status::ok);
    EXPECT_FALSE(c.get("k"));

    auto stats = c.stats();
    ASSERT_EQ(stats.size(), 1u);
    EXPECT_EQ(stats[0].server, server_.address());
    bool saw_pid = false;
    for (auto& [name, value] : stats[0].value)
        if (name == "pid") saw_pid = value == std::to_string(server_.pid());
    EXPECT_TRUE(saw_pid);
    auto settings = c.stats("settings");
    ASSERT_EQ(settings.size(), 1u);
    EXPECT_FALSE(settings[0].value.empty());

    auto versions = c.version();
    ASSERT_EQ(versions.size(), 1u);
    EXPECT_FALSE(versions[0].value.empty());
    EXPECT_EQ(versions[0].value.find('\r'), std::string::npos);
}

TEST_P(ClientOps, MultiGetOfManySizesKeepsKeyOrder) {
    auto o = options();
    o.max_outstanding_requests = 20000;  // the preload below has every set in flight at once
    folsom::BlockingClient c(o);
    for (std::size_t n : {1u, 16u, 100u, 10000u}) {
        std::vector<std::string> keys;
        for (std::size_t i = 0; i < n; ++i)
            keys.push_back("m" + std::to_string(n) + ":" + std::to_string(i));
        // Every third key is a miss.
        std::vector<std::future<Status>> sets;
        for (std::size_t i = 0; i < n; ++i)
            if (i % 3 != 1)
                sets.push_back(
                    c.async().set(keys[i], "v" + std::to_string(i), 0s, asio::use_future));
        for (auto& f : sets)
            ASSERT_EQ(f.get(), Status::stored);
        std::vector<std::string_view> views(keys.begin(), keys.end());
        auto r = c.get_multi(views);
        ASSERT_EQ(r.values.size(), n);
        EXPECT_TRUE(r.complete());
        for (std::size_t i = 0; i < n; ++i) {
            if (i % 3 == 1) {
                EXPECT_FALSE(r.values[i]) << keys[i];
            } else {
                ASSERT_TRUE(r.values[i]) << keys[i];
                EXPECT_EQ(r.values[i]->data, "v" + std::to_string(i));
            }
        }
        auto m = r.to_map(views);
        EXPECT_EQ(m.size(), n - n / 3 - (n % 3 == 2 ? 1 : 0));
    }
}

TEST_P(ClientOps, MultiGetWithDuplicateKeysAndCas) {
    folsom::BlockingClient c(options());
    ASSERT_EQ(c.set("a", "1"), Status::stored);
    std::vector<std::string_view> keys = {"a", "b", "a"};
    auto r = c.async().gets_multi(keys, asio::use_future).get();
    ASSERT_EQ(r.values.size(), 3u);
    ASSERT_TRUE(r.values[0]);
    EXPECT_FALSE(r.values[1]);
    ASSERT_TRUE(r.values[2]);
    EXPECT_NE(r.values[0]->cas, 0u);
    EXPECT_EQ(r.values[0]->cas, r.values[2]->cas);
    auto empty = c.get_multi({});
    EXPECT_TRUE(empty.values.empty());
}

/// What a get_multi_view delivered: each hit's copy by key index, and how often each index
/// was reported (the callback must report a key once).
struct ViewHits {
    std::vector<std::optional<folsom::Value>> values;
    std::vector<int> calls;
    folsom::MultiGetViewResult result;
};

ViewHits get_multi_view(folsom::Client& c, std::span<const std::string_view> keys) {
    ViewHits h;
    h.values.resize(keys.size());
    h.calls.resize(keys.size());
    // One server, so one connection calls on_hit, always before the completion.
    h.result = c.get_multi_view(
                    keys,
                    [&h](std::size_t i, const folsom::ValueView& v) {
                        ++h.calls.at(i);
                        h.values.at(i) = v.to_value();
                    },
                    asio::use_future)
                   .get();
    return h;
}

// The zero-copy multi-get: every hit is handed over once, by its index in the caller's list,
// with its flags and bytes (binary-safe, framing look-alikes included); misses get no call;
// the completion counts the hits. 1 to 10,000 keys, duplicates, none, and a bad key.
TEST_P(ClientOps, MultiGetViewHandsEachHitOverOnceByIndex) {
    auto o = options();
    o.max_outstanding_requests = 20000;
    folsom::BlockingClient c(o);
    std::string odd;
    for (int b = 0; b < 256; ++b)
        odd.push_back(static_cast<char>(b));
    odd += "\r\nEND\r\nVALUE x 0 1\r\n";
    for (std::size_t n : {1u, 16u, 100u, 10000u}) {
        std::vector<std::string> keys;
        for (std::size_t i = 0; i < n; ++i)
            keys.push_back("v" + std::to_string(n) + ":" + std::to_string(i));
        auto value_of = [&](std::size_t i) { return i % 7 == 0 ? odd : "v" + std::to_string(i); };
        std::vector<std::future<Status>> sets;
        for (std::size_t i = 0; i < n; ++i)
            if (i % 3 != 1)  // every third key is a miss
                sets.push_back(c.async().set(keys[i], value_of(i), 0s,
                                             static_cast<std::uint32_t>(i), asio::use_future));
        for (auto& f : sets)
            ASSERT_EQ(f.get(), Status::stored);
        const std::vector<std::string_view> views(keys.begin(), keys.end());
        const ViewHits h = get_multi_view(c.async(), views);
        EXPECT_TRUE(h.result.complete());
        std::size_t hits = 0;
        for (std::size_t i = 0; i < n; ++i) {
            if (i % 3 == 1) {
                EXPECT_EQ(h.calls[i], 0) << keys[i];
                continue;
            }
            ++hits;
            ASSERT_EQ(h.calls[i], 1) << keys[i];
            EXPECT_EQ(h.values[i]->data, value_of(i)) << keys[i];
            EXPECT_EQ(h.values[i]->flags, i) << keys[i];
        }
        EXPECT_EQ(h.result.hits, hits);
    }

    ASSERT_EQ(c.set("a", "1"), Status::stored);
    const std::vector<std::string_view> dup = {"a", "b", "a"};
    const ViewHits d = get_multi_view(c.async(), dup);
    EXPECT_EQ(d.calls, (std::vector<int>{1, 0, 1}));
    EXPECT_EQ(d.result.hits, 2u);

    const ViewHits none = get_multi_view(c.async(), {});
    EXPECT_EQ(none.result.hits, 0u);
    EXPECT_TRUE(none.result.complete());

    // A bad key fails the request before anything is sent; no hit is reported.
    const std::vector<std::string_view> bad = {"a", "has space"};
    int calls = 0;
    auto f = c.async().get_multi_view(
        bad, [&](std::size_t, const folsom::ValueView&) { ++calls; }, asio::use_future);
    try {
        f.get();
        ADD_FAILURE() << "a bad key was accepted";
    } catch (const std::system_error& e) {
        EXPECT_EQ(code_of(e), errc::invalid_key);
    }
    EXPECT_EQ(calls, 0);
    EXPECT_EQ(c.get("a")->data, "1");  // the connection is still in step
}

TEST_P(ClientOps, ValueSizesAndBinarySafety) {
    folsom::BlockingClient c(options());
    std::string all_bytes;
    for (int b = 0; b < 256; ++b)
        all_bytes.push_back(static_cast<char>(b));
    all_bytes += "\r\nEND\r\nVALUE x 0 1\r\n";  // framing look-alikes inside the value
    const std::string sizes[] = {std::string(), std::string(1, 'x'), std::string(100 * 1024, 'y'),
                                 std::string(1024 * 1024, 'z'), all_bytes};
    int i = 0;
    for (const auto& value : sizes) {
        const std::string key = "size" + std::to_string(i++);
        ASSERT_EQ(c.set(key, value), Status::stored) << value.size();
        auto v = c.get(key);
        ASSERT_TRUE(v) << value.size();
        EXPECT_EQ(v->data, value) << value.size();
    }
    // A moved-in large value is written from the caller's string (scatter-gather).
    std::string big(512 * 1024, 'q');
    ASSERT_EQ(c.set("moved", std::move(big)), Status::stored);
    EXPECT_EQ(c.get("moved")->data.size(), 512u * 1024u);
}

TEST_P(ClientOps, BadInputIsRefusedBeforeSendingAndTheConnectionStaysHealthy) {
    folsom::BlockingClient c(options());
    ASSERT_EQ(c.set("ok", "1"), Status::stored);
    const auto before = folsom::test::raw_request(server_, "stats\r\n", "END\r\n");
    const std::string bad_keys[] = {"",         std::string(251, 'k'), "has space",
                                    "cr\rlf",   "new\nline",           std::string("nul\0byte", 8),
                                    "tab\tkey", "inject\r\nflush_all"};
    for (const auto& k : bad_keys) {
        try {
            c.set(k, "v");
            ADD_FAILURE() << "accepted key of size " << k.size();
        } catch (const std::system_error& e) {
            EXPECT_EQ(code_of(e), errc::invalid_key);
        }
        try {
            c.get(k);
            ADD_FAILURE() << "accepted key of size " << k.size();
        } catch (const std::system_error& e) {
            EXPECT_EQ(code_of(e), errc::invalid_key);
        }
    }
    try {
        c.set("big", std::string(1024 * 1024 + 1, 'x'));
        ADD_FAILURE() << "accepted an over-large value";
    } catch (const std::system_error& e) {
        EXPECT_EQ(code_of(e), errc::value_too_large);
    }
    const auto after = folsom::test::raw_request(server_, "stats\r\n", "END\r\n");
    EXPECT_EQ(folsom::test::stat_value(before, "cmd_set"),
              folsom::test::stat_value(after, "cmd_set"));
    EXPECT_EQ(folsom::test::stat_value(before, "cmd_get"),
              folsom::test::stat_value(after, "cmd_get"));
    EXPECT_EQ(c.get("ok")->data, "1");
    EXPECT_EQ(c.async().outstanding(), 0u);
}

TEST_P(ClientOps, ServerSideTooLargeIsAStatus) {
    const auto small = start({"-I", "1m"});
    auto o = options();
    o.servers = {small->address()};
    o.max_value_size = 4 * 1024 * 1024;
    folsom::BlockingClient c(o);
    EXPECT_EQ(c.set("huge", std::string(3 * 1024 * 1024, 'h')), Status::value_too_large);
    EXPECT_EQ(c.set("after", "fine"), Status::stored);  // the stream is still in step
    EXPECT_EQ(c.get("after")->data, "fine");
}

TEST_P(ClientOps, ThreeCompletionForms) {
    asio::io_context io;
    auto client = folsom::Client::connect(io, options());
    std::atomic<int> callbacks{0};
    client.set("k", "v", 60s, [&](std::error_code ec, Status s) {
        EXPECT_FALSE(ec);
        EXPECT_EQ(s, Status::stored);
        ++callbacks;
    });
    std::optional<folsom::Value> from_coroutine;
    std::promise<void> coroutine_done;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            co_await client.set("co", "routine", 60s, asio::use_awaitable);
            from_coroutine = co_await client.get("co", asio::use_awaitable);
            // Errors arrive as exceptions in coroutines.
            try {
                co_await client.get("bad key", asio::use_awaitable);
                ADD_FAILURE() << "no error";
            } catch (const std::system_error& e) {
                EXPECT_EQ(e.code(), errc::invalid_key);
            }
            coroutine_done.set_value();
        },
        asio::detached);
    std::thread runner([&] { io.run_for(5s); });
    auto f = client.del("k", asio::use_future);
    // The delete is queued after the set on the same connection, so it sees the key.
    EXPECT_EQ(f.get(), Status::deleted);
    ASSERT_EQ(coroutine_done.get_future().wait_for(5s), std::future_status::ready);
    client.shutdown();
    runner.join();
    EXPECT_EQ(callbacks.load(), 1);
    ASSERT_TRUE(from_coroutine);
    EXPECT_EQ(from_coroutine->data, "routine");
}

TEST_P(ClientOps, ReplyExecutorRunsCompletionsOffTheIoThread) {
    asio::io_context io, replies;
    auto io_work = asio::make_work_guard(io);
    auto reply_work = asio::make_work_guard(replies);
    std::thread io_thread([&] { io.run(); });
    std::thread reply_thread([&] { replies.run(); });
    auto client = folsom::Client::connect(io.get_executor(), options(), replies.get_executor());
    std::promise<std::thread::id> ran_on;
    client.set("k", "v", 0s, [&](std::error_code ec, Status s) {
        EXPECT_FALSE(ec);
        EXPECT_EQ(s, Status::stored);
        ran_on.set_value(std::this_thread::get_id());
    });
    EXPECT_EQ(ran_on.get_future().get(), reply_thread.get_id());
    // A handler bound to its own executor keeps it.
    std::promise<std::thread::id> bound;
    client.get("k", asio::bind_executor(io, [&](std::error_code, std::optional<folsom::Value>) {
                   bound.set_value(std::this_thread::get_id());
               }));
    EXPECT_EQ(bound.get_future().get(), io_thread.get_id());
    client.shutdown();
    io_work.reset();
    reply_work.reset();
    io_thread.join();
    reply_thread.join();
}

TEST_P(ClientOps, ZeroCopyViewGet) {
    folsom::BlockingClient c(options());
    ASSERT_EQ(c.set("view", "in the read buffer", 0s, 3), Status::stored);
    std::promise<std::string> hit;
    c.async().get_view("view", [&](std::error_code ec, const folsom::ValueView* v) {
        EXPECT_FALSE(ec);
        ASSERT_NE(v, nullptr);
        EXPECT_EQ(v->flags, 3u);
        hit.set_value(std::string(v->data));
    });
    EXPECT_EQ(hit.get_future().get(), "in the read buffer");
    std::promise<bool> miss;
    c.async().get_view("absent", [&](std::error_code ec, const folsom::ValueView* v) {
        miss.set_value(!ec && v == nullptr);
    });
    EXPECT_TRUE(miss.get_future().get());
    std::promise<std::error_code> bad;
    c.async().get_view("bad key",
                       [&](std::error_code ec, const folsom::ValueView*) { bad.set_value(ec); });
    EXPECT_EQ(bad.get_future().get(), errc::invalid_key);
}

TEST_P(ClientOps, PipelinesThousandsOfMixedRequestsInOrder) {
    folsom::Options o = options();
    o.max_outstanding_requests = 100000;
    folsom::BlockingClient c(o);
    constexpr int n = 6000;
    std::atomic<int> done{0}, wrong{0};
    std::promise<void> all;
    auto finish = [&] {
        if (++done == n) all.set_value();
    };
    auto& a = c.async();
    for (int i = 0; i < n / 3; ++i) {
        const std::string key = "p" + std::to_string(i);
        const std::string value = "value-" + std::to_string(i);
        a.set(key, value, 0s, [&, finish](std::error_code ec, Status s) {
            if (ec || s != Status::stored) ++wrong;
            finish();
        });
        a.get(key, [&, value, finish](std::error_code ec, std::optional<folsom::Value> v) {
            if (ec || !v || v->data != value) ++wrong;
            finish();
        });
        a.incr(key, 1, [&, finish](std::error_code ec, std::optional<std::uint64_t>) {
            // "value-N" is not a number: the server answers CLIENT_ERROR for this one.
            if (ec != errc::client_error) ++wrong;
            finish();
        });
    }
    ASSERT_EQ(all.get_future().wait_for(30s), std::future_status::ready);
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(a.outstanding(), 0u);
}

// Requests made before the connection is up go out together in its first write. Here every
// value is its own segment of that write (owned, above the scatter threshold), so the batch
// has more segments than one sendmsg takes (IOV_MAX, 1024): the rest must follow, in order.
TEST_P(ClientOps, AWriteOfMoreSegmentsThanOneSyscallTakesGoesOutWhole) {
    folsom::Options o = options();
    o.scatter_threshold = 64;
    o.max_outstanding_requests = 10000;
    asio::io_context io;
    auto client = folsom::Client::connect(io, o);
    constexpr int n = 1500;
    int stored = 0, done = 0;
    for (int i = 0; i < n; ++i) {
        std::string value(100 + i % 50, static_cast<char>('a' + i % 26));
        client.set("seg" + std::to_string(i), std::move(value), 0s,
                   [&](std::error_code ec, Status s) {
                       if (!ec && s == Status::stored) ++stored;
                       if (++done == n) io.stop();
                   });
    }
    io.run_for(10s);
    ASSERT_EQ(done, n);
    EXPECT_EQ(stored, n);
    io.restart();
    int right = 0;
    done = 0;
    for (int i = 0; i < n; ++i) {
        client.get("seg" + std::to_string(i),
                   [&, i](std::error_code ec, std::optional<folsom::Value> v) {
                       const std::string want(100 + i % 50, static_cast<char>('a' + i % 26));
                       if (!ec && v && v->data == want) ++right;
                       if (++done == n) io.stop();
                   });
    }
    io.run_for(10s);
    EXPECT_EQ(done, n);
    EXPECT_EQ(right, n);
    client.shutdown();
}

// Gets made before the connection is up go out together; over the text protocol they are
// joined into "get k1 k2 ..." lines of up to 16 KiB of keys (protocol::max_retrieval_key_bytes).
// memcached must answer every get of them, hits and misses, each with its own value (see
// joined_gets.hpp).
TEST_P(ClientOps, GetsJoinedIntoFullLinesEachGetTheirOwnAnswer) {
    EXPECT_EQ(folsom::test::joined_gets_answered(options(), 1200), 2400);
}

INSTANTIATE_TEST_SUITE_P(Protocols, ClientOps, folsom::test::all_protocols_and_transports,
                         folsom::test::protocol_and_transport_name);

}  // namespace
