// folsom::WriteHere reading replies on the spot, against real memcached processes: on the
// thread that drives its io_context itself, a request's reply that is already in the socket
// when its write returns is read inside the call that wrote it (one recv, no Asio read), its
// handler posted -- or run there, when the thread allows it (Handlers::may_run_inline). Every
// request still completes exactly once: sequential gets, multi-gets over three servers, values
// larger than one read, writes, requests started from inline handlers, a server killed while
// the connection is idle (and so has no read pending).
//
// "Already in the socket" is made the usual case rather than luck: the client runs on a
// thread pinned to one CPU, with its memcached servers pinned to the same CPU, and once set
// up drops to SCHED_IDLE, so that the server woken by a write preempts the client at once and
// answers before the write returns (a normal task always preempts an idle-policy one when it
// wakes).
#include "folsom/client.hpp"
#include "folsom/metrics.hpp"
#include "folsom/send_batch.hpp"

#include "support/memcached_server.hpp"
#include "support/protocols.hpp"

#include <asio/io_context.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <pthread.h>
#include <sched.h>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::Protocol;
using folsom::Status;
using folsom::WriteHere;
using folsom::test::MemcachedServer;
using Handlers = folsom::WriteHere::Handlers;
using Servers = std::vector<std::unique_ptr<MemcachedServer>>;

/// Counts the bytes read from the servers: a reply read inside the call that wrote it shows as
/// bytes counted before that call returns.
class ReadCounter final : public folsom::Metrics {
  public:
    std::uint32_t add_server(std::string_view) override { return next_++; }
    void request_sent(std::uint32_t, folsom::MetricOp) noexcept override {}
    void request_completed(const folsom::RequestRecord&) noexcept override {}
    void bytes_sent(std::uint32_t, std::size_t) noexcept override {}
    void bytes_received(std::uint32_t, std::size_t n) noexcept override { received_ += n; }
    void connection_event(std::uint32_t, folsom::ConnectionEvent) noexcept override {}
    std::size_t received() const noexcept { return received_.load(); }

  private:
    std::uint32_t next_ = 0;
    std::atomic<std::size_t> received_{0};
};

/// Thrown by become_idle() when the system refuses SCHED_IDLE: the test is skipped.
struct IdleRefused {};

/// Drops the calling thread to SCHED_IDLE, so that a server it wakes on its CPU answers before
/// the thread runs on. Only for the part of a test that looks at that: an idle-policy thread
/// gets almost no CPU on a busy machine, and it cannot come back without privileges.
void become_idle() {
    sched_param none{};
    if (::pthread_setschedparam(::pthread_self(), SCHED_IDLE, &none) != 0) throw IdleRefused{};
}

/// Runs `body` on a thread of its own pinned to one CPU, after starting `servers` memcached
/// processes there (forked from that thread: pinned to the same CPU).
void on_pinned_thread_with_servers(std::size_t servers, const std::function<void(Servers&)>& body) {
    std::exception_ptr failure;
    std::string skipped;
    std::thread t([&] {
        try {
            cpu_set_t mine;
            CPU_ZERO(&mine);
            if (::sched_getaffinity(0, sizeof mine, &mine) != 0) {
                skipped = "sched_getaffinity failed";
                return;
            }
            int cpu = 0;
            while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &mine))
                ++cpu;
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            if (::sched_setaffinity(0, sizeof one, &one) != 0) {
                skipped = "sched_setaffinity failed";
                return;
            }
            Servers started;
            for (std::size_t i = 0; i < servers; ++i)
                started.push_back(std::make_unique<MemcachedServer>());
            body(started);
        } catch (const IdleRefused&) {
            skipped = "SCHED_IDLE refused";
        } catch (...) {
            failure = std::current_exception();
        }
    });
    t.join();
    if (!skipped.empty()) GTEST_SKIP() << skipped;
    if (failure) std::rethrow_exception(failure);
}

/// Runs the caller-driven io_context until `done` (bounded: 10 s).
bool drive(asio::io_context& io, const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!done() && std::chrono::steady_clock::now() < deadline)
        io.run_one_for(10ms);
    return done();
}

class WriteHereTest : public ::testing::TestWithParam<Protocol> {
  protected:
    folsom::Options options(const Servers& servers) {
        folsom::Options o;
        for (const auto& s : servers)
            o.servers.push_back(s->address());
        o.protocol = GetParam();
        o.metrics = counter_;
        return o;
    }
    static void store(asio::io_context& io, folsom::Client& client, const std::string& k,
                      const std::string& v) {
        bool done = false;
        client.set(k, v, 0s, [&](std::error_code ec, Status s) {
            EXPECT_FALSE(ec) << ec.message();
            EXPECT_EQ(s, Status::stored);
            done = true;
        });
        ASSERT_TRUE(drive(io, [&] { return done; }));
    }

    std::shared_ptr<ReadCounter> counter_ = std::make_shared<ReadCounter>();
};

TEST_P(WriteHereTest, AReplyAlreadyThereIsReadInTheCallThatWroteAndItsHandlerPosted) {
    on_pinned_thread_with_servers(1, [&](Servers& servers) {
        asio::io_context io;
        auto client = folsom::Client::connect(io, options(servers));
        store(io, client, "k", "v");
        constexpr int gets = 200;
        int read_in_call = 0, ran_in_call = 0, completed = 0, hits = 0;
        bool in_call = false;
        become_idle();
        WriteHere here;  // handlers never inline (the default)
        for (int i = 0; i < gets; ++i) {
            const std::size_t before = counter_->received();
            int times = 0;
            in_call = true;
            client.get("k", [&](std::error_code ec, std::optional<folsom::Value> v) {
                ran_in_call += in_call ? 1 : 0;
                hits += !ec && v && v->data == "v" ? 1 : 0;
                ++times;
                ++completed;
            });
            in_call = false;
            read_in_call += counter_->received() > before ? 1 : 0;
            ASSERT_TRUE(drive(io, [&] { return times > 0; })) << "get " << i;
            ASSERT_EQ(times, 1);
        }
        EXPECT_EQ(completed, gets);
        EXPECT_EQ(hits, gets);
        EXPECT_EQ(ran_in_call, 0);  // Asio's promise holds without may_run_inline
        // The first get after the connect is read by the read armed at connect; from then on
        // the connection is idle between gets and each write reads its own reply when it is
        // there (all but a few, here; fewer on a busy machine, where the server may have to
        // wait for the CPU: any at all shows the path, none would say it is gone).
        EXPECT_GT(read_in_call, 0) << "of " << gets;
    });
}

TEST_P(WriteHereTest, WithoutWriteHereNoReplyIsReadInTheCall) {
    on_pinned_thread_with_servers(1, [&](Servers& servers) {
        asio::io_context io;
        auto client = folsom::Client::connect(io, options(servers));
        store(io, client, "k", "v");
        become_idle();  // as above: the reply is there when the write returns
        int read_in_call = 0;
        for (int i = 0; i < 50; ++i) {
            const std::size_t before = counter_->received();
            bool done = false;
            client.get("k", [&](std::error_code ec, std::optional<folsom::Value> v) {
                EXPECT_FALSE(ec);
                EXPECT_TRUE(v);
                done = true;
            });
            read_in_call += counter_->received() > before ? 1 : 0;
            ASSERT_TRUE(drive(io, [&] { return done; }));
        }
        EXPECT_EQ(read_in_call, 0);
    });
}

TEST_P(WriteHereTest, HandlersMayRunInTheCallWhenTheThreadAllowsIt) {
    on_pinned_thread_with_servers(1, [&](Servers& servers) {
        asio::io_context io;
        auto client = folsom::Client::connect(io, options(servers));
        store(io, client, "k", "v");
        constexpr int requests = 200;
        int ran_in_call = 0, wrong = 0;
        bool in_call = false;
        become_idle();
        WriteHere here(true, Handlers::may_run_inline);
        for (int i = 0; i < requests; ++i) {
            int times = 0;
            in_call = true;
            if (i % 2 == 0) {
                client.get("k", [&](std::error_code ec, std::optional<folsom::Value> v) {
                    ran_in_call += in_call ? 1 : 0;
                    wrong += !ec && v && v->data == "v" ? 0 : 1;
                    ++times;
                });
            } else {
                client.set("w" + std::to_string(i), "x", 0s, [&](std::error_code ec, Status s) {
                    ran_in_call += in_call ? 1 : 0;
                    wrong += !ec && s == Status::stored ? 0 : 1;
                    ++times;
                });
            }
            in_call = false;
            ASSERT_TRUE(drive(io, [&] { return times > 0; })) << "request " << i;
            ASSERT_EQ(times, 1) << "request " << i;
        }
        EXPECT_EQ(wrong, 0);
        EXPECT_GT(ran_in_call, 0) << "of " << requests;
    });
}

TEST_P(WriteHereTest, AGetViewMissMayCompleteInTheCallOnlyWhenTheThreadAllowsIt) {
    // A get_view hit reaches its callback from the read itself; a miss read in the call that
    // started it completes there only under may_run_inline (else it is posted, as Asio
    // promises). Each completes exactly once either way.
    on_pinned_thread_with_servers(1, [&](Servers& servers) {
        asio::io_context io;
        auto client = folsom::Client::connect(io, options(servers));
        store(io, client, "k", "v");
        constexpr int requests = 100;
        int miss_in_call[2] = {0, 0}, wrong = 0;
        bool in_call = false;
        become_idle();
        for (const bool allow : {false, true}) {
            WriteHere here(true, allow ? Handlers::may_run_inline : Handlers::never_inline);
            for (int i = 0; i < requests; ++i) {
                const bool hit = i % 2 == 0;
                int times = 0;
                in_call = true;
                client.get_view(hit ? "k" : "absent",
                                [&](std::error_code ec, const folsom::ValueView* v) {
                                    if (!hit && in_call) ++miss_in_call[allow];
                                    wrong += !ec && (hit ? v && v->data == "v" : !v) ? 0 : 1;
                                    ++times;
                                });
                in_call = false;
                ASSERT_TRUE(drive(io, [&] { return times > 0; })) << "request " << i;
                ASSERT_EQ(times, 1) << "request " << i;
            }
        }
        EXPECT_EQ(wrong, 0);
        EXPECT_EQ(miss_in_call[false], 0);  // Asio's promise holds without may_run_inline
        EXPECT_GT(miss_in_call[true], 0) << "of " << requests / 2;
    });
}

TEST_P(WriteHereTest, AMultiGetOverThreeServersReadsEveryPartInTheCall) {
    on_pinned_thread_with_servers(3, [&](Servers& servers) {
        asio::io_context io;
        auto client = folsom::Client::connect(io, options(servers));
        std::vector<std::string> keys;
        for (int i = 0; i < 100; ++i) {
            keys.push_back("key:" + std::to_string(i));
            store(io, client, keys.back(), "value:" + std::to_string(i));
        }
        const std::vector<std::string_view> views(keys.begin(), keys.end());
        // Whether a call finds all three replies already there depends on when the servers
        // run: on a busy machine most calls may not. So the calls go on until one has read
        // everything in the call, up to a bound in count and time that a loaded machine meets
        // (every call, in the call or not, must still complete once with every value).
        constexpr int min_calls = 50;
        constexpr int max_calls = 5000;
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        int calls = 0;
        int ran_in_call = 0;
        bool in_call = false;
        become_idle();
        WriteHere here(true, Handlers::may_run_inline);
        for (int c = 0; c < max_calls && (c < min_calls || ran_in_call == 0) &&
                        std::chrono::steady_clock::now() < give_up;
             ++c) {
            ++calls;
            int times = 0;
            in_call = true;
            client.get_multi(views, [&](std::error_code ec, folsom::MultiGetResult r) {
                ran_in_call += in_call ? 1 : 0;
                ++times;
                ASSERT_FALSE(ec);
                ASSERT_TRUE(r.complete());
                ASSERT_EQ(r.values.size(), keys.size());
                for (std::size_t i = 0; i < keys.size(); ++i) {
                    ASSERT_TRUE(r.values[i]) << keys[i];
                    EXPECT_EQ(r.values[i]->data, "value:" + std::to_string(i));
                }
            });
            in_call = false;
            ASSERT_TRUE(drive(io, [&] { return times > 0; })) << "call " << c;
            ASSERT_EQ(times, 1);
        }
        EXPECT_GT(ran_in_call, 0) << "of " << calls;
    });
}

TEST_P(WriteHereTest, AValueLargerThanOneReadIsReadHereAndThroughTheLoop) {
    on_pinned_thread_with_servers(1, [&](Servers& servers) {
        asio::io_context io;
        auto client = folsom::Client::connect(io, options(servers));
        std::string big(700 * 1024, 'b');
        for (std::size_t i = 0; i < big.size(); i += 4096)
            big[i] = static_cast<char>('a' + (i / 4096) % 26);
        store(io, client, "big", big);
        store(io, client, "small", "s");
        become_idle();
        WriteHere here(true, Handlers::may_run_inline);
        for (int round = 0; round < 5; ++round) {
            int times = 0;
            client.get("big", [&](std::error_code ec, std::optional<folsom::Value> v) {
                ++times;
                ASSERT_FALSE(ec);
                ASSERT_TRUE(v);
                EXPECT_TRUE(v->data == big);
            });
            ASSERT_TRUE(drive(io, [&] { return times > 0; }));
            EXPECT_EQ(times, 1);
            int small = 0;  // and the connection is in step afterwards
            client.get("small", [&](std::error_code ec, std::optional<folsom::Value> v) {
                ++small;
                EXPECT_FALSE(ec);
                EXPECT_TRUE(v && v->data == "s");
            });
            ASSERT_TRUE(drive(io, [&] { return small > 0; }));
            EXPECT_EQ(small, 1);
        }
    });
}

TEST_P(WriteHereTest, ARequestStartedFromAnInlineHandlerGoesOutAndCompletesOnce) {
    on_pinned_thread_with_servers(1, [&](Servers& servers) {
        asio::io_context io;
        auto client = folsom::Client::connect(io, options(servers));
        store(io, client, "a", "1");
        store(io, client, "b", "2");
        become_idle();
        WriteHere here(true, Handlers::may_run_inline);
        for (int round = 0; round < 50; ++round) {
            int first = 0, second = 0;
            client.get("a", [&](std::error_code ec, std::optional<folsom::Value> v) {
                ++first;
                EXPECT_FALSE(ec);
                EXPECT_TRUE(v && v->data == "1");
                // A chain, as a read-through or a retry makes: a request from a handler.
                client.get("b", [&](std::error_code ec2, std::optional<folsom::Value> v2) {
                    ++second;
                    EXPECT_FALSE(ec2);
                    EXPECT_TRUE(v2 && v2->data == "2");
                });
            });
            ASSERT_TRUE(drive(io, [&] { return first > 0 && second > 0; })) << round;
            EXPECT_EQ(first, 1);
            EXPECT_EQ(second, 1);
        }
    });
}

TEST_P(WriteHereTest, QuietWritesThenAGetOnTheSameConnection) {
    on_pinned_thread_with_servers(1, [&](Servers& servers) {
        asio::io_context io;
        auto client = folsom::Client::connect(io, options(servers));
        store(io, client, "warm", "up");
        become_idle();
        WriteHere here(true, Handlers::may_run_inline);
        auto quiet = client.quiet();
        for (int round = 0; round < 20; ++round) {
            int written = 0;
            for (int i = 0; i < 10; ++i)
                quiet.set("q" + std::to_string(i), "r" + std::to_string(round), 0s,
                          [&](std::error_code ec, Status) {
                              EXPECT_FALSE(ec);
                              ++written;
                          });
            int got = 0;
            client.get("q9", [&](std::error_code ec, std::optional<folsom::Value> v) {
                ++got;
                EXPECT_FALSE(ec);
                EXPECT_TRUE(v && v->data == "r" + std::to_string(round));
            });
            ASSERT_TRUE(drive(io, [&] { return written == 10 && got == 1; })) << round;
            EXPECT_EQ(written, 10);
            EXPECT_EQ(got, 1);
        }
    });
}

TEST_P(WriteHereTest, AServerKilledWhileTheConnectionIsIdleFailsTheNextRequestOnce) {
    on_pinned_thread_with_servers(1, [&](Servers& servers) {
        folsom::Options o = options(servers);
        o.retry_idempotent = false;  // the failure itself is what is looked at
        asio::io_context io;
        auto client = folsom::Client::connect(io, o);
        store(io, client, "k", "v");
        become_idle();
        WriteHere here(true, Handlers::may_run_inline);
        int ok = 0;
        client.get("k", [&](std::error_code ec, std::optional<folsom::Value>) {
            EXPECT_FALSE(ec);
            ++ok;
        });
        ASSERT_TRUE(drive(io, [&] { return ok == 1; }));
        // Idle now, with no read pending: nothing notices the server going.
        servers[0]->kill();
        int times = 0;
        std::error_code failed;
        client.get("k", [&](std::error_code ec, std::optional<folsom::Value>) {
            failed = ec;
            ++times;
        });
        ASSERT_TRUE(drive(io, [&] { return times > 0; }));
        EXPECT_EQ(times, 1);
        EXPECT_TRUE(failed == folsom::errc::connection_lost ||
                    failed == folsom::errc::not_connected)
            << failed.message();
        // The connection is down now (backoff, or connecting): the next request completes
        // once too, with whatever the connection says, and nothing waits forever.
        int next = 0;
        client.get("k", [&](std::error_code, std::optional<folsom::Value>) { ++next; });
        ASSERT_TRUE(drive(io, [&] { return next > 0; }));
        EXPECT_EQ(next, 1);
    });
}

INSTANTIATE_TEST_SUITE_P(Protocols, WriteHereTest, folsom::test::all_protocols,
                         folsom::test::protocol_name);

}  // namespace
