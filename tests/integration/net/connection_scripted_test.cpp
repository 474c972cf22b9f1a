// The connection against a scripted peer: replies split at every byte, and a server that
// misbehaves in every way a stream can (garbage, wrong framing, a 2 GiB VALUE header, a reply
// to a request never sent, a half reply then silence, one byte per 50 ms, a close mid-value,
// a reset). Each time the affected requests fail with the right error, exactly once, and the
// client reconnects by itself.
#include "folsom/blocking_client.hpp"

#include "support/fake_server.hpp"

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <string>
#include <string_view>
#include <sys/resource.h>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::Status;
using folsom::test::FakeConnection;
using folsom::test::FakeServer;

folsom::Options options_for(const FakeServer& s) {
    folsom::Options o;
    o.servers = {s.address()};
    o.request_timeout = 500ms;
    o.reconnect_initial_delay = 5ms;
    o.reconnect_max_delay = 20ms;
    return o;
}

std::error_code error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::system_error& e) {
        return e.code();
    }
    return {};
}

/// Waits (bounded) until the client has a connection again after the one it had failed; a
/// fixed sleep is not enough on a loaded machine.
void await_reconnect(folsom::BlockingClient& client) {
    client.async().wait_connected(5s, asio::use_future).get();
}

/// The keys of a "get k1 k2 ...\r\n" line (pipelined gets travel as one such line).
std::vector<std::string> keys_of(std::string_view line) {
    std::vector<std::string> keys;
    if (line.size() >= 2 && line.substr(line.size() - 2) == "\r\n") line.remove_suffix(2);
    std::size_t at = line.find(' ');
    while (at != std::string_view::npos) {
        const std::size_t next = line.find(' ', at + 1);
        keys.emplace_back(
            line.substr(at + 1, next == std::string_view::npos ? next : next - at - 1));
        at = next;
    }
    return keys;
}

/// Serves "get <key>" with `reply` from connection index 1 on, after `first` misbehaves on
/// connection 0.
FakeServer::Script first_then_good(std::function<void(FakeConnection&)> first) {
    return [first](FakeConnection& c) {
        if (c.index() == 0) {
            first(c);
            c.wait_for_close();
            return;
        }
        for (;;) {
            const std::string line = c.read_request();
            if (line.empty()) return;
            if (line.rfind("get ", 0) == 0) {
                std::string reply;
                for (const auto& key : keys_of(line))
                    reply += "VALUE " + key + " 0 2\r\nok\r\n";
                c.write(reply + "END\r\n");
            } else
                c.write("STORED\r\n");
        }
    };
}

TEST(ConnectionScripted, ReplySplitAtEveryByte) {
    const std::string reply = "VALUE key 3 5\r\nhello\r\nEND\r\n";
    std::atomic<std::size_t> split{0};
    FakeServer server([&](FakeConnection& c) {
        for (;;) {
            if (c.read_request().empty()) return;
            const std::size_t at = split.fetch_add(1) % (reply.size() + 1);
            c.write(std::string_view(reply).substr(0, at));
            std::this_thread::sleep_for(2ms);  // the client reads the first part alone
            c.write(std::string_view(reply).substr(at));
        }
    });
    folsom::BlockingClient client(options_for(server));
    for (std::size_t i = 0; i <= reply.size(); ++i) {
        auto v = client.get("key");
        ASSERT_TRUE(v) << "split at " << i;
        EXPECT_EQ(v->data, "hello");
        EXPECT_EQ(v->flags, 3u);
    }
    EXPECT_EQ(server.accepted(), 1u);  // never needed to reconnect
}

TEST(ConnectionScripted, StatsSplitAtEveryByte) {
    const std::string reply = "STAT pid 42\r\nSTAT name caf\xc3\xa9\r\nEND\r\n";
    std::atomic<std::size_t> split{0};
    FakeServer server([&](FakeConnection& c) {
        for (;;) {
            if (c.read_request().empty()) return;
            const std::size_t at = split.fetch_add(1) % (reply.size() + 1);
            c.write(std::string_view(reply).substr(0, at));
            std::this_thread::sleep_for(2ms);
            c.write(std::string_view(reply).substr(at));
        }
    });
    folsom::BlockingClient client(options_for(server));
    for (std::size_t i = 0; i <= reply.size(); ++i) {
        auto stats = client.stats();
        ASSERT_EQ(stats.size(), 1u);
        ASSERT_EQ(stats[0].value.size(), 2u) << "split at " << i;
        EXPECT_EQ(stats[0].value[1].second, "caf\xc3\xa9");
    }
}

TEST(ConnectionScripted, CloseMidValueFailsTheRequestAndReconnects) {
    FakeServer server(first_then_good([](FakeConnection& c) {
        c.read_request();
        c.write("VALUE k 0 10\r\nhel");
        c.close();
    }));
    folsom::BlockingClient client(options_for(server));
    EXPECT_EQ(error_of([&] { client.get("k"); }), errc::connection_lost);
    await_reconnect(client);
    auto v = client.get("k");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "ok");
    EXPECT_EQ(client.async().outstanding(), 0u);
}

TEST(ConnectionScripted, GarbageIsAProtocolError) {
    FakeServer server(first_then_good([](FakeConnection& c) {
        c.read_request();
        c.write("HTTP/1.1 400 Bad Request\r\n\r\n");
    }));
    folsom::BlockingClient client(options_for(server));
    EXPECT_EQ(error_of([&] { client.get("k"); }), errc::protocol_error);
    await_reconnect(client);
    EXPECT_TRUE(client.get("k"));
}

TEST(ConnectionScripted, WrongFramingIsAProtocolError) {
    // The data block is longer than its header says: no "\r\n" where one must be.
    FakeServer server(first_then_good([](FakeConnection& c) {
        c.read_request();
        c.write("VALUE k 0 2\r\nabcdef\r\nEND\r\n");
    }));
    folsom::BlockingClient client(options_for(server));
    EXPECT_EQ(error_of([&] { client.get("k"); }), errc::protocol_error);
    await_reconnect(client);
    EXPECT_TRUE(client.get("k"));
}

TEST(ConnectionScripted, AHugeValueHeaderIsRefusedWithoutAllocating) {
    rusage before{};
    ::getrusage(RUSAGE_SELF, &before);
    FakeServer server(first_then_good([](FakeConnection& c) {
        c.read_request();
        c.write("VALUE k 0 2147483648\r\n");
        // Keep sending: the client must not wait for (or buffer) the announced 2 GiB.
        for (int i = 0; i < 64; ++i)
            c.write(std::string(64 * 1024, 'x'));
    }));
    folsom::BlockingClient client(options_for(server));
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(error_of([&] { client.get("k"); }), errc::protocol_error);
    // Refused at the header, not after waiting for the data or the 500 ms request timeout
    // (the bound is loose: a loaded machine can stall the test this long by itself).
    EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
    rusage after{};
    ::getrusage(RUSAGE_SELF, &after);
    EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 * 1024);  // KiB: far below 2 GiB
    await_reconnect(client);
    EXPECT_TRUE(client.get("k"));
}

TEST(ConnectionScripted, AReplyToARequestNeverSentIsAProtocolError) {
    std::atomic<int> sets_answered{0};
    FakeServer server([&](FakeConnection& c) {
        for (;;) {
            const std::string line = c.read_request();
            if (line.empty()) return;
            if (line.rfind("set ", 0) == 0) {
                // One request, two replies: the second answers nothing.
                c.write(c.index() == 0 ? "STORED\r\nSTORED\r\n" : "STORED\r\n");
                ++sets_answered;
            } else {
                c.write("END\r\n");
            }
        }
    });
    folsom::BlockingClient client(options_for(server));
    EXPECT_EQ(client.set("k", "v"), Status::stored);  // the first reply is its own
    // The extra reply broke the stream: the connection was dropped and comes back.
    bool recovered = false;
    for (int i = 0; i < 100 && !recovered; ++i) {
        std::this_thread::sleep_for(10ms);
        recovered = !error_of([&] { client.get("k"); });
    }
    EXPECT_TRUE(recovered);
    EXPECT_GE(server.accepted(), 2u);
}

TEST(ConnectionScripted, HalfAReplyThenSilenceTimesOut) {
    FakeServer server(first_then_good([](FakeConnection& c) {
        c.read_request();
        c.write("VALUE k 0 10\r\nhel");
    }));
    auto o = options_for(server);
    o.request_timeout = 200ms;
    folsom::BlockingClient client(o);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(error_of([&] { client.get("k"); }), errc::timeout);
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_GE(took, 200ms);
    EXPECT_LT(took, 5s);  // the timeout, not a hang (loose: loaded machines stall)
    await_reconnect(client);
    EXPECT_TRUE(client.get("k"));
}

TEST(ConnectionScripted, OneBytePer50msIsSlowButAlive) {
    FakeServer server([](FakeConnection& c) {
        for (;;) {
            if (c.read_request().empty()) return;
            c.write_slowly("VALUE k 0 4\r\nslow\r\nEND\r\n", 50ms);
        }
    });
    auto o = options_for(server);
    o.request_timeout = 300ms;  // much longer than a gap, much shorter than the whole reply
    folsom::BlockingClient client(o);
    auto v = client.get("k");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "slow");
}

TEST(ConnectionScripted, AResetFailsInFlightRequestsAndReconnects) {
    FakeServer server(first_then_good([](FakeConnection& c) {
        c.read_request();
        c.reset();
    }));
    folsom::BlockingClient client(options_for(server));
    EXPECT_EQ(error_of([&] { client.get("k"); }), errc::connection_lost);
    await_reconnect(client);
    EXPECT_TRUE(client.get("k"));
    EXPECT_EQ(client.async().outstanding(), 0u);
}

TEST(ConnectionScripted, ManyInFlightRequestsAllFailOnceWhenTheStreamBreaks) {
    FakeServer server(first_then_good([](FakeConnection& c) {
        // Answer two of many pipelined gets, then break the stream. The 50 gets travel as
        // one or more "get a a ..." lines (adjacent gets join): answer the first two keys,
        // closing a line with END where it ends.
        std::vector<std::size_t> keys_per_line;
        for (std::size_t total = 0; total < 50;) {
            const std::string line = c.read_line();
            if (line.empty()) return;
            keys_per_line.push_back(keys_of(line).size());
            total += keys_per_line.back();
        }
        std::string reply;
        int answered = 0;
        for (const std::size_t n : keys_per_line) {
            for (std::size_t k = 0; k < n && answered < 2; ++k, ++answered)
                reply += "VALUE a 0 1\r\nx\r\n";
            if (answered == 2) break;
            reply += "END\r\n";
        }
        c.write(reply + "GARBAGE\r\n");
    }));
    folsom::BlockingClient client(options_for(server));
    std::vector<std::future<std::optional<folsom::Value>>> fs;
    for (int i = 0; i < 50; ++i)
        fs.push_back(client.async().get("a", asio::use_future));
    int ok = 0, protocol = 0;
    for (auto& f : fs) {
        try {
            f.get();
            ++ok;
        } catch (const std::system_error& e) {
            protocol += e.code() == errc::protocol_error;
        }
    }
    EXPECT_EQ(ok, 2);
    EXPECT_EQ(protocol, 48);
    EXPECT_EQ(client.async().outstanding(), 0u);
}

// Adjacent single-key gets are sent as one "get k1 k2 ..." line, and memcached answers only
// the hits. Every get still gets exactly its own answer: hits by key, skipped keys as misses,
// duplicates in order. The server here answers whatever lines arrive, hitting keys that start
// with 'h'.
TEST(ConnectionScripted, JoinedGetsEachGetTheirOwnAnswer) {
    std::atomic<int> lines{0}, keys{0};
    FakeServer server([&](FakeConnection& c) {
        for (;;) {
            const std::string line = c.read_line();
            if (line.empty()) return;
            ++lines;
            std::string reply;
            for (const auto& key : keys_of(line)) {
                ++keys;
                if (key[0] == 'h')
                    reply +=
                        "VALUE " + key + " 7 " + std::to_string(key.size()) + "\r\n" + key + "\r\n";
            }
            c.write(reply + "END\r\n");
        }
    });
    folsom::BlockingClient client(options_for(server));
    const std::vector<std::string> names = {"h1", "m1", "h2", "h2", "m2", "m2", "h3", "m3"};
    std::vector<std::future<std::optional<folsom::Value>>> fs;
    for (int round = 0; round < 40; ++round)
        for (const auto& k : names)
            fs.push_back(client.async().get(k, asio::use_future));
    std::size_t i = 0;
    for (auto& f : fs) {
        const std::string& k = names[i++ % names.size()];
        auto v = f.get();
        if (k[0] == 'h') {
            ASSERT_TRUE(v) << k;
            EXPECT_EQ(v->data, k);
            EXPECT_EQ(v->flags, 7u);
        } else {
            EXPECT_FALSE(v) << k;
        }
    }
    EXPECT_EQ(keys.load(), 320);
    EXPECT_LT(lines.load(), 320) << "no get was joined to another";
    EXPECT_EQ(client.async().outstanding(), 0u);
}

// A VALUE for a key the joined line did not ask for puts the stream out of step: every get on
// it fails once with protocol_error (and the connection is replaced).
TEST(ConnectionScripted, AJoinedGetAnsweredWithAForeignKeyIsAProtocolError) {
    FakeServer server(first_then_good([](FakeConnection& c) {
        std::size_t total = 0;
        while (total < 10) {
            const std::string line = c.read_line();
            if (line.empty()) return;
            total += keys_of(line).size();
        }
        c.write("VALUE stranger 0 1\r\nx\r\nEND\r\n");
    }));
    folsom::BlockingClient client(options_for(server));
    std::vector<std::future<std::optional<folsom::Value>>> fs;
    for (int i = 0; i < 10; ++i)
        fs.push_back(client.async().get("k" + std::to_string(i), asio::use_future));
    for (auto& f : fs)
        EXPECT_EQ(error_of([&] { f.get(); }), errc::protocol_error);
    await_reconnect(client);
    EXPECT_EQ(client.get("k")->data, "ok");
    EXPECT_EQ(client.async().outstanding(), 0u);
}

// A refusal ends the wire command: the gets it still owed fail with the server's error, the
// ones answered before it keep their values, and the stream stays usable.
TEST(ConnectionScripted, ARefusalInsideJoinedGetsFailsOnlyTheUnansweredOnes) {
    std::atomic<int> refused_keys{-1};  // keys the refused line still owed
    FakeServer server([&](FakeConnection& c) {
        for (;;) {
            const std::string line = c.read_line();
            if (line.empty()) return;
            const auto ks = keys_of(line);
            if (refused_keys.load() < 0 && ks.size() >= 2) {
                refused_keys = static_cast<int>(ks.size()) - 1;
                c.write("VALUE " + ks[0] + " 0 1\r\nx\r\nSERVER_ERROR out of memory\r\n");
            } else {
                std::string reply;
                for (const auto& k : ks)
                    reply += "VALUE " + k + " 0 1\r\ny\r\n";
                c.write(reply + "END\r\n");
            }
        }
    });
    folsom::BlockingClient client(options_for(server));
    std::vector<std::future<std::optional<folsom::Value>>> fs;
    for (int i = 0; i < 20; ++i)
        fs.push_back(client.async().get("k" + std::to_string(i), asio::use_future));
    int x = 0, y = 0, server_errors = 0;
    for (auto& f : fs) {
        try {
            auto v = f.get();
            ASSERT_TRUE(v);
            (v->data == "x" ? x : y)++;
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), errc::server_error);
            ++server_errors;
        }
    }
    ASSERT_GE(refused_keys.load(), 1) << "twenty back-to-back gets never shared a line";
    EXPECT_EQ(x, 1);
    EXPECT_EQ(server_errors, refused_keys.load());
    EXPECT_EQ(x + y + server_errors, 20);
    EXPECT_EQ(client.get("z")->data, "y");  // same connection, still in step
    EXPECT_EQ(client.async().outstanding(), 0u);
}

// A get issued from the previous get's completion goes out at once, and its reply is read
// without waiting on the reactor whenever it is already there (Connection::read_now). Such a
// read can be the one that finds the stream closed: the server here answers 20 gets on its
// first connection and then closes. Every get still completes exactly once, the one the
// close caught with connection_lost (or, until the client has reconnected, not_connected),
// and the chain carries on over the new connection.
TEST(ConnectionScripted, ChainedGetsCompleteOnceWhenTheServerClosesRightAfterAReply) {
    FakeServer server([](FakeConnection& c) {
        for (int answered = 0;; ++answered) {
            if (c.index() == 0 && answered == 20) {
                c.close();
                return;
            }
            const std::string line = c.read_line();
            if (line.empty()) return;
            std::string reply;
            for (const auto& key : keys_of(line))
                reply +=
                    "VALUE " + key + " 0 " + std::to_string(key.size()) + "\r\n" + key + "\r\n";
            c.write(reply + "END\r\n");
        }
    });
    asio::io_context io;
    auto client = folsom::Client::connect(io, options_for(server));
    constexpr int total = 100;
    std::vector<int> completions(total, 0);
    int ok = 0, lost = 0, other = 0, issued = 0;
    asio::steady_timer pause(io);
    std::function<void()> next = [&] {
        if (issued == total) return;
        const int i = issued++;
        const std::string key = "key" + std::to_string(i);
        client.get(key, [&, i, key](std::error_code ec, std::optional<folsom::Value> v) {
            ++completions[static_cast<std::size_t>(i)];
            if (!ec) {
                EXPECT_TRUE(v && v->data == key);
                ++ok;
                next();
                return;
            }
            if (ec == errc::connection_lost || ec == errc::not_connected)
                ++lost;
            else
                ++other;
            pause.expires_after(10ms);  // let the client reconnect
            pause.async_wait([&](std::error_code) { next(); });
        });
    };
    next();
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (ok + lost + other < total && std::chrono::steady_clock::now() < deadline)
        io.run_one_for(100ms);
    for (int i = 0; i < total; ++i)
        EXPECT_EQ(completions[static_cast<std::size_t>(i)], 1) << "get " << i;
    EXPECT_GE(ok, 20);
    EXPECT_GE(lost, 1);
    EXPECT_EQ(other, 0);
    EXPECT_GE(server.accepted(), 2u);
    EXPECT_EQ(client.outstanding(), 0u);
    client.shutdown();
}

}  // namespace
