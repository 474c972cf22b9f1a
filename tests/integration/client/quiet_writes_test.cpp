// Quiet (noreply) writes and multi-key writes against real memcached, over every protocol:
// each completes exactly once, with its true outcome where the protocol reports one (meta,
// binary) and Status::sent where it cannot (ascii noreply); failures the server reports are
// matched to their own request; a killed server fails only what it had not answered.
#include "folsom/client.hpp"
#include "folsom/quiet_client.hpp"

#include "support/io_runner.hpp"
#include "support/memcached_server.hpp"
#include "support/protocols.hpp"

#include <asio/io_context.hpp>
#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::Protocol;
using folsom::Status;
using folsom::test::MemcachedServer;
using folsom::test::raw_request;

/// What the server itself holds for `key` ("" when absent), over a connection of its own.
std::string server_value(const MemcachedServer& s, const std::string& key) {
    const std::string reply = raw_request(s.port(), "get " + key + "\r\n", "END\r\n");
    const auto header_end = reply.find("\r\n");
    if (reply.rfind("VALUE ", 0) != 0 || header_end == std::string::npos) return "";
    const auto data_end = reply.find("\r\n", header_end + 2);
    return reply.substr(header_end + 2, data_end - header_end - 2);
}

/// A quiet write's expected outcome: the true one over meta and binary, sent over ascii.
Status expected(Protocol p, Status truth) {
    return p == Protocol::ascii ? Status::sent : truth;
}

class QuietWrites : public ::testing::TestWithParam<Protocol> {
  protected:
    // -I 1m (the default, said outright): the value-too-large test sends more.
    QuietWrites() : server_({"-I", "1m"}) {}

    folsom::Options options() const {
        folsom::Options o;
        o.servers = {server_.address()};
        o.protocol = GetParam();
        o.max_value_size = 4u << 20;          // let the server be the one that refuses
        o.max_outstanding_requests = 100000;  // the batches below are all in flight at once
        return o;
    }
    Status wait(std::future<Status> f) { return f.get(); }

    MemcachedServer server_;
    folsom::test::IoRunner runner_;
};

TEST_P(QuietWrites, SuccessesCompleteWithTheirOutcome) {
    auto client = folsom::Client::connect(runner_.io(), options());
    folsom::QuietClient q = client.quiet();
    const Protocol p = GetParam();
    EXPECT_EQ(q.set("k", "v1", 0s, asio::use_future).get(), expected(p, Status::stored));
    EXPECT_EQ(q.set("f", "flagged", 0s, 42, asio::use_future).get(), expected(p, Status::stored));
    EXPECT_EQ(q.add("a", "added", 0s, asio::use_future).get(), expected(p, Status::stored));
    EXPECT_EQ(q.replace("k", "v2", 0s, asio::use_future).get(), expected(p, Status::stored));
    EXPECT_EQ(q.append("k", ">", asio::use_future).get(), expected(p, Status::stored));
    EXPECT_EQ(q.prepend("k", "<", asio::use_future).get(), expected(p, Status::stored));
    // An acknowledged request after quiet ones: it is answered in order, after them.
    auto v = client.get("k", asio::use_future).get();
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "<v2>");
    auto g = client.gets("k", asio::use_future).get();
    ASSERT_TRUE(g);
    EXPECT_EQ(q.cas("k", "v3", g->cas, 0s, asio::use_future).get(), expected(p, Status::stored));
    EXPECT_EQ(q.touch("k", 100s, asio::use_future).get(), expected(p, Status::touched));
    ASSERT_EQ(client.set("n", "10", 0s, asio::use_future).get(), Status::stored);
    EXPECT_EQ(q.incr("n", 5, asio::use_future).get(), expected(p, Status::ok));
    EXPECT_EQ(q.decr("n", 2, asio::use_future).get(), expected(p, Status::ok));
    EXPECT_EQ(q.del("a", asio::use_future).get(), expected(p, Status::deleted));
    // What the server holds says every write was applied.
    EXPECT_EQ(client.get("k", asio::use_future).get()->data, "v3");
    EXPECT_EQ(client.get("f", asio::use_future).get()->flags, 42u);
    EXPECT_EQ(server_value(server_, "n"), "13");
    EXPECT_EQ(server_value(server_, "a"), "");
}

TEST_P(QuietWrites, EachFailureIsReportedToItsOwnWrite) {
    auto client = folsom::Client::connect(runner_.io(), options());
    folsom::QuietClient q = client.quiet();
    const Protocol p = GetParam();
    ASSERT_EQ(client.set("present", "x", 0s, asio::use_future).get(), Status::stored);
    ASSERT_EQ(client.set("word", "not-a-number", 0s, asio::use_future).get(), Status::stored);
    const std::string big(1500 * 1024, 'b');  // over the server's -I 1m

    // All in flight at once, failures between successes, so each must find its own request.
    auto ok1 = q.set("s1", "v", 0s, asio::use_future);
    auto add_existing = q.add("present", "y", 0s, asio::use_future);
    auto ok2 = q.set("s2", "v", 0s, asio::use_future);
    auto replace_missing = q.replace("absent", "y", 0s, asio::use_future);
    auto cas_mismatch = q.cas("present", "y", 987654321, 0s, asio::use_future);
    auto ok3 = q.set("s3", "v", 0s, asio::use_future);
    auto incr_word = q.incr("word", 1, asio::use_future);
    auto too_large = q.set("big", big, 0s, asio::use_future);
    auto del_missing = q.del("absent", asio::use_future);
    auto touch_missing = q.touch("absent", 10s, asio::use_future);
    auto incr_missing = q.incr("absent", 1, asio::use_future);
    auto ok4 = q.set("s4", "v", 0s, asio::use_future);

    EXPECT_EQ(ok1.get(), expected(p, Status::stored));
    EXPECT_EQ(add_existing.get(), expected(p, Status::not_stored));
    EXPECT_EQ(ok2.get(), expected(p, Status::stored));
    EXPECT_EQ(replace_missing.get(), expected(p, Status::not_stored));
    EXPECT_EQ(cas_mismatch.get(), expected(p, Status::exists));
    EXPECT_EQ(ok3.get(), expected(p, Status::stored));
    if (p == Protocol::ascii) {
        EXPECT_EQ(incr_word.get(), Status::sent);
    } else {
        try {
            incr_word.get();
            ADD_FAILURE() << "incr of a non-number succeeded";
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), errc::client_error) << e.code().message();
        }
    }
    EXPECT_EQ(too_large.get(), expected(p, Status::value_too_large));
    EXPECT_EQ(del_missing.get(), expected(p, Status::not_found));
    EXPECT_EQ(touch_missing.get(), expected(p, Status::not_found));
    EXPECT_EQ(incr_missing.get(), expected(p, Status::not_found));
    EXPECT_EQ(ok4.get(), expected(p, Status::stored));
    // The server agrees, whatever the protocol could tell.
    EXPECT_EQ(server_value(server_, "present"), "x");
    for (const char* k : {"s1", "s2", "s3", "s4"})
        EXPECT_EQ(server_value(server_, k), "v") << k;
    EXPECT_EQ(server_value(server_, "big"), "");
}

TEST_P(QuietWrites, ClientSideRefusalsAreReportedAndNothingIsSent) {
    folsom::Options o = options();
    o.max_value_size = 1024;
    auto client = folsom::Client::connect(runner_.io(), o);
    folsom::QuietClient q = client.quiet();
    try {
        q.set("bad key", "v", 0s, asio::use_future).get();
        ADD_FAILURE() << "an invalid key was accepted";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::invalid_key);
    }
    try {
        q.set("k", std::string(2048, 'x'), 0s, asio::use_future).get();
        ADD_FAILURE() << "a value over max_value_size was accepted";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::value_too_large);
    }
    EXPECT_EQ(client.get("k", asio::use_future).get(), std::nullopt);
}

// Many quiet writes in flight, interleaved with acknowledged gets and with failures: each
// completes exactly once, with the outcome the server gave it.
TEST_P(QuietWrites, ABatchInterleavedWithOrdinaryRequestsCompletesEachWriteOnce) {
    auto client = folsom::Client::connect(runner_.io(), options());
    folsom::QuietClient q = client.quiet();
    const Protocol p = GetParam();
    constexpr int n = 2000;
    for (int i = 0; i < n; i += 2)  // the even keys exist: their add fails
        ASSERT_EQ(client.set("key" + std::to_string(i), "old", 0s, asio::use_future).get(),
                  Status::stored);
    std::vector<std::atomic<int>> calls(n);
    std::vector<Status> outcome(n);
    std::atomic<int> gets_done{0}, gets_wrong{0};
    std::atomic<int> done{0};
    std::vector<std::string> keys;
    for (int i = 0; i < n; ++i)
        keys.push_back("key" + std::to_string(i));
    for (int i = 0; i < n; ++i) {
        q.add(keys[i], "new", 0s, [&, i](std::error_code ec, Status s) {
            EXPECT_FALSE(ec) << ec.message();
            outcome[i] = s;
            calls[i].fetch_add(1);
            done.fetch_add(1);
        });
        if (i % 7 == 0)
            client.get(keys[i], [&, i](std::error_code ec, std::optional<folsom::Value> v) {
                // Answered after the add before it: the even keys hold "old", the odd "new".
                if (ec || !v || v->data != (i % 2 == 0 ? "old" : "new")) gets_wrong.fetch_add(1);
                gets_done.fetch_add(1);
            });
    }
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (done.load() < n && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(5ms);
    std::this_thread::sleep_for(50ms);  // a second completion would show up meanwhile
    for (int i = 0; i < n; ++i) {
        ASSERT_EQ(calls[i].load(), 1) << i;
        EXPECT_EQ(outcome[i], expected(p, i % 2 == 0 ? Status::not_stored : Status::stored)) << i;
    }
    EXPECT_EQ(gets_done.load(), (n + 6) / 7);
    EXPECT_EQ(gets_wrong.load(), 0);
}

// A server killed in the middle of a quiet batch: every write completes exactly once, with
// the outcome the server had given it, or with the connection's error, never "stored" for a
// write no reply passed over.
TEST_P(QuietWrites, AServerKilledMidBatchCompletesEveryWriteOnceNeverFalselyStored) {
    folsom::Options o = options();
    auto client = folsom::Client::connect(runner_.io(), o);
    folsom::QuietClient q = client.quiet();
    ASSERT_EQ(client.set("warm", "up", 0s, asio::use_future).get(), Status::stored);
    constexpr int n = 20000;
    std::vector<std::atomic<int>> calls(n);
    std::atomic<int> done{0}, errors{0}, other{0};
    std::mutex mu;
    std::map<std::string, int> unexpected;  // what the "other" completions were
    const std::string value(200, 'v');
    for (int i = 0; i < n; ++i) {
        if (i == n / 4) server_.kill();
        q.set("k" + std::to_string(i), value, 0s, [&, i](std::error_code ec, Status s) {
            calls[i].fetch_add(1);
            if (ec) {
                if (ec != errc::connection_lost && ec != errc::not_connected &&
                    ec != errc::connect_failed) {
                    other.fetch_add(1);
                    std::lock_guard lk(mu);
                    ++unexpected[ec.message()];
                }
                errors.fetch_add(1);
            } else if (s != Status::stored && s != Status::sent) {
                other.fetch_add(1);
                std::lock_guard lk(mu);
                ++unexpected[std::string(folsom::to_string(s))];
            }
            done.fetch_add(1);
        });
    }
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (done.load() < n && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(5ms);
    std::this_thread::sleep_for(50ms);
    for (int i = 0; i < n; ++i)
        ASSERT_EQ(calls[i].load(), 1) << i;
    std::string seen;
    for (const auto& [what, count] : unexpected)
        seen += what + " x" + std::to_string(count) + "; ";
    EXPECT_EQ(other.load(), 0) << seen;
    EXPECT_GE(errors.load(), n - n / 4);  // everything after the kill failed
}

INSTANTIATE_TEST_SUITE_P(Protocols, QuietWrites, folsom::test::all_protocols,
                         folsom::test::protocol_name);

// ---- multi-key writes ------------------------------------------------------------------------

class MultiWrites : public ::testing::TestWithParam<Protocol> {
  protected:
    folsom::Options options(const std::vector<std::unique_ptr<MemcachedServer>>& servers) const {
        folsom::Options o;
        for (const auto& s : servers)
            o.servers.push_back(s->address());
        o.protocol = GetParam();
        return o;
    }
    static std::vector<std::unique_ptr<MemcachedServer>> start(int n) {
        std::vector<std::unique_ptr<MemcachedServer>> v;
        for (int i = 0; i < n; ++i)
            v.push_back(std::make_unique<MemcachedServer>());
        return v;
    }
    folsom::test::IoRunner runner_;
};

TEST_P(MultiWrites, SetDeleteTouchOfOneHundredAndTenThousandKeysOverOneAndThreeServers) {
    for (int server_count : {1, 3}) {
        auto servers = start(server_count);
        auto client = folsom::Client::connect(runner_.io(), options(servers));
        client.wait_connected(5s, asio::use_future).get();
        for (std::size_t n : {std::size_t{1}, std::size_t{100}, std::size_t{10000}}) {
            SCOPED_TRACE(std::to_string(server_count) + " servers, " + std::to_string(n) + " keys");
            std::vector<std::string> key_text, value_text;
            for (std::size_t i = 0; i < n; ++i) {
                key_text.push_back("m" + std::to_string(n) + "-" + std::to_string(i));
                value_text.push_back("value-" + std::to_string(i));
            }
            std::vector<folsom::KeyValue> items;
            std::vector<std::string_view> keys;
            for (std::size_t i = 0; i < n; ++i) {
                items.push_back({key_text[i], value_text[i], static_cast<std::uint32_t>(i)});
                keys.push_back(key_text[i]);
            }
            auto set = client.set_multi(items, 0s, asio::use_future).get();
            ASSERT_EQ(set.results.size(), n);
            EXPECT_TRUE(set.complete());
            for (std::size_t i = 0; i < n; ++i)
                ASSERT_EQ(set.results[i].status, Status::stored) << i;
            // On the servers themselves, each where the client placed it.
            for (std::size_t i = 0; i < n; i += (n > 100 ? 97 : 1)) {
                const std::size_t owner = client.server_for(keys[i]);
                ASSERT_LT(owner, servers.size()) << keys[i];
                EXPECT_EQ(server_value(*servers[owner], key_text[i]), value_text[i]);
            }
            auto got = client.get_multi(keys, asio::use_future).get();
            for (std::size_t i = 0; i < n; ++i) {
                ASSERT_TRUE(got.values[i]) << i;
                EXPECT_EQ(got.values[i]->flags, i);
            }
            // Every other key is gone: delete_multi of all says deleted, then not_found.
            std::vector<std::string_view> half;
            for (std::size_t i = 0; i < n; i += 2)
                half.push_back(keys[i]);
            auto del1 = client.delete_multi(half, asio::use_future).get();
            for (const auto& r : del1.results)
                ASSERT_EQ(r, (folsom::WriteResult{{}, Status::deleted}));
            auto touched = client.touch_multi(keys, 100s, asio::use_future).get();
            for (std::size_t i = 0; i < n; ++i)
                ASSERT_EQ(touched.results[i].status,
                          i % 2 == 0 ? Status::not_found : Status::touched)
                    << i;
            auto del2 = client.delete_multi(half, asio::use_future).get();
            for (const auto& r : del2.results)
                ASSERT_EQ(r.status, Status::not_found);
            const auto map = touched.to_map(keys);
            EXPECT_EQ(map.size(), n);
            EXPECT_EQ(map.at(key_text[0]).status, Status::not_found);
        }
    }
}

TEST_P(MultiWrites, ADeadServerFailsOnlyItsOwnKeys) {
    auto servers = start(3);
    auto client = folsom::Client::connect(runner_.io(), options(servers));
    // Connected to all three first, so the dead one is known dead rather than connecting.
    client.wait_connected(5s, asio::use_future).get();
    servers[1]->kill();
    std::vector<std::string> key_text;
    for (int i = 0; i < 300; ++i)
        key_text.push_back("d" + std::to_string(i));
    std::vector<folsom::KeyValue> items;
    for (const auto& k : key_text)
        items.push_back({k, "v"});
    // The first write may meet the dying connection (connection_lost); then it is known down.
    (void)client.set_multi(items, 0s, asio::use_future).get();
    auto r = client.set_multi(items, 0s, asio::use_future).get();
    std::size_t dead_keys = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const std::size_t owner = client.server_for(key_text[i]);
        if (owner == 1) {
            ++dead_keys;
            // Known down (not_connected), or waiting on a reconnect attempt that then failed
            // (connect_failed: the backoff is short, and a loaded host ran into one).
            EXPECT_TRUE(r.results[i].error == errc::not_connected ||
                        r.results[i].error == errc::connect_failed)
                << i << " " << r.results[i].error.message();
        } else {
            EXPECT_FALSE(r.results[i].error) << i << " " << r.results[i].error.message();
            EXPECT_EQ(r.results[i].status, Status::stored);
            EXPECT_EQ(server_value(*servers[owner], key_text[i]), "v");
        }
    }
    EXPECT_GT(dead_keys, 0u);
    EXPECT_LT(dead_keys, items.size());
    EXPECT_EQ(r.errors(), dead_keys);
}

TEST_P(MultiWrites, AnInvalidKeyFailsAloneAndIsNeverSent) {
    auto servers = start(1);
    folsom::Options o = options(servers);
    o.max_value_size = 100;
    auto client = folsom::Client::connect(runner_.io(), o);
    const std::string long_key(300, 'k');
    const std::string big(200, 'b');
    std::vector<folsom::KeyValue> items = {
        {"good1", "v"}, {"bad key", "v"}, {long_key, "v"}, {"good2", big}, {"good3", "v"}};
    auto r = client.set_multi(items, 0s, asio::use_future).get();
    ASSERT_EQ(r.results.size(), 5u);
    EXPECT_EQ(r.results[0], (folsom::WriteResult{{}, Status::stored}));
    EXPECT_EQ(r.results[1].error, errc::invalid_key);
    EXPECT_EQ(r.results[2].error, errc::invalid_key);
    EXPECT_EQ(r.results[3].error, errc::value_too_large);
    EXPECT_EQ(r.results[4], (folsom::WriteResult{{}, Status::stored}));
    EXPECT_EQ(r.errors(), 3u);
    EXPECT_EQ(server_value(*servers[0], "good2"), "");
    EXPECT_EQ(folsom::test::stat_value(raw_request(servers[0]->port(), "stats\r\n", "END\r\n"),
                                       "cmd_set"),
              2);
    // No keys: an empty result, at once.
    auto none = client.delete_multi({}, asio::use_future).get();
    EXPECT_TRUE(none.results.empty());
}

INSTANTIATE_TEST_SUITE_P(Protocols, MultiWrites, folsom::test::all_protocols,
                         folsom::test::protocol_name);

}  // namespace
