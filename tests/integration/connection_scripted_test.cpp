// The connection against a scripted peer: replies split at every byte, and a server that
// misbehaves in every way a stream can (garbage, wrong framing, a 2 GiB VALUE header, a reply
// to a request never sent, a half reply then silence, one byte per 50 ms, a close mid-value,
// a reset). Each time the affected requests fail with the right error, exactly once, and the
// client reconnects by itself.
#include "folsom/blocking_client.hpp"

#include "support/fake_server.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <sys/resource.h>

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
            if (line.rfind("get ", 0) == 0)
                c.write("VALUE " + line.substr(4) + " 0 2\r\nok\r\nEND\r\n");
            else
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
    std::this_thread::sleep_for(50ms);
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
    std::this_thread::sleep_for(50ms);
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
    std::this_thread::sleep_for(50ms);
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
    EXPECT_LT(std::chrono::steady_clock::now() - start, 400ms);  // not a timeout
    rusage after{};
    ::getrusage(RUSAGE_SELF, &after);
    EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 * 1024);  // KiB: far below 2 GiB
    std::this_thread::sleep_for(50ms);
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
    EXPECT_LT(took, 1s);
    std::this_thread::sleep_for(50ms);
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
    std::this_thread::sleep_for(50ms);
    EXPECT_TRUE(client.get("k"));
    EXPECT_EQ(client.async().outstanding(), 0u);
}

TEST(ConnectionScripted, ManyInFlightRequestsAllFailOnceWhenTheStreamBreaks) {
    FakeServer server(first_then_good([](FakeConnection& c) {
        // Answer two of many pipelined gets, then break the stream.
        c.read_request();
        c.read_request();
        c.write("VALUE a 0 1\r\nx\r\nEND\r\nEND\r\nGARBAGE\r\n");
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

}  // namespace
