// folsom::SendBatch against real memcached processes: requests started inside a batch are held
// (nothing is written) until the outermost batch ends, then go out in one write per
// connection; each still completes exactly once. send_held() and BlockingClient send without
// ending the batch, and a client destroyed inside a batch leaves the batch nothing to send.
#include "folsom/send_batch.hpp"

#include "folsom/blocking_client.hpp"
#include "folsom/client.hpp"
#include "folsom/detail/write_here.hpp"

#include "support/io_runner.hpp"
#include "support/memcached_server.hpp"
#include "support/protocols.hpp"
#include "support/wait_for.hpp"

#include <asio/post.hpp>
#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::Protocol;
using folsom::SendBatch;
using folsom::Status;
using folsom::test::MemcachedServer;

/// Counts the writes (bytes_sent calls) each server's connections make.
class WriteCounter final : public folsom::Metrics {
  public:
    std::uint32_t add_server(std::string_view) override { return next_++; }
    void request_sent(std::uint32_t, folsom::MetricOp) noexcept override {}
    void request_completed(const folsom::RequestRecord&) noexcept override {}
    void bytes_sent(std::uint32_t server, std::size_t) noexcept override {
        if (server < writes_.size()) writes_[server].fetch_add(1);
    }
    void bytes_received(std::uint32_t, std::size_t) noexcept override {}
    void connection_event(std::uint32_t, folsom::ConnectionEvent) noexcept override {}

    std::size_t writes(std::uint32_t server) const { return writes_[server].load(); }
    std::size_t total() const {
        std::size_t n = 0;
        for (const auto& w : writes_)
            n += w.load();
        return n;
    }
    void reset() {
        for (auto& w : writes_)
            w.store(0);
    }

  private:
    std::uint32_t next_ = 0;
    std::array<std::atomic<std::size_t>, 8> writes_{};
};

bool wait_for(const std::function<bool()>& pred, std::chrono::milliseconds limit) {
    return folsom::test::wait_for(pred, limit, 2ms);
}

/// How often each of n requests completed, and with what.
struct Completions {
    explicit Completions(std::size_t n) : times(n), hits(n) {}
    std::vector<std::atomic<int>> times;
    std::vector<std::atomic<bool>> hits;
    std::atomic<std::size_t> total{0};
};

class SendBatchTest : public ::testing::TestWithParam<Protocol> {
  protected:
    folsom::Options options(const std::vector<std::string>& servers) {
        folsom::Options o;
        o.servers = servers;
        o.protocol = GetParam();
        o.metrics = counter_;
        return o;
    }
    /// Starts n gets of k0..k(n-1) that record their completion in `c`.
    static void start_gets(folsom::Client& client, std::size_t n, Completions& c) {
        for (std::size_t i = 0; i < n; ++i)
            client.get("k" + std::to_string(i),
                       [&c, i](std::error_code ec, std::optional<folsom::Value> v) {
                           c.hits[i] = !ec && v && v->data == "v" + std::to_string(i);
                           c.times[i].fetch_add(1);
                           c.total.fetch_add(1);
                       });
    }
    static void store_keys(folsom::Client& client, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i)
            ASSERT_EQ(
                client.set("k" + std::to_string(i), "v" + std::to_string(i), 0s, asio::use_future)
                    .get(),
                Status::stored);
    }
    /// Zeroes the write counts once the writes before now have all been counted: a write's
    /// bytes_sent may be reported after its reply was delivered (the read and the write
    /// complete in the same turn of the I/O thread, in either order).
    void reset_writes_when_settled() {
        std::size_t before = counter_->total();
        for (int i = 0; i < 100; ++i) {  // at most 2 s
            std::this_thread::sleep_for(20ms);
            const std::size_t now = counter_->total();
            if (now == before) break;
            before = now;
        }
        counter_->reset();
    }
    static void expect_each_once_and_hit(const Completions& c) {
        for (std::size_t i = 0; i < c.times.size(); ++i) {
            EXPECT_EQ(c.times[i].load(), 1) << "request " << i;
            EXPECT_TRUE(c.hits[i].load()) << "request " << i;
        }
    }

    std::shared_ptr<WriteCounter> counter_ = std::make_shared<WriteCounter>();
    folsom::test::IoRunner runner_;
};

TEST_P(SendBatchTest, RequestsAreHeldUntilTheBatchEndsThenGoOutInOneWrite) {
    MemcachedServer server;
    auto client = folsom::Client::connect(runner_.io(), options({server.address()}));
    constexpr std::size_t n = 200;
    store_keys(client, n);
    reset_writes_when_settled();
    Completions c(n);
    {
        SendBatch batch;
        EXPECT_TRUE(SendBatch::active());
        start_gets(client, n, c);
        // Held: the I/O thread was never asked to write, so nothing goes out however long
        // it is given.
        std::this_thread::sleep_for(50ms);
        EXPECT_EQ(counter_->total(), 0u);
        EXPECT_EQ(c.total.load(), 0u);
    }
    EXPECT_FALSE(SendBatch::active());
    ASSERT_TRUE(wait_for([&] { return c.total.load() == n; }, 10s));
    expect_each_once_and_hit(c);
    // 200 gets (under 3 KiB) fit the socket's send buffer: one write carries them all.
    EXPECT_EQ(counter_->total(), 1u);
}

TEST_P(SendBatchTest, EveryConnectionWritesOnceForTheWholeBatch) {
    MemcachedServer a, b, s3;
    auto client =
        folsom::Client::connect(runner_.io(), options({a.address(), b.address(), s3.address()}));
    constexpr std::size_t n = 300;
    store_keys(client, n);
    reset_writes_when_settled();
    Completions c(n);
    {
        SendBatch batch;
        start_gets(client, n, c);
    }
    ASSERT_TRUE(wait_for([&] { return c.total.load() == n; }, 10s));
    expect_each_once_and_hit(c);
    for (std::uint32_t s = 0; s < 3; ++s)
        EXPECT_EQ(counter_->writes(s), 1u) << "server " << s;  // 300 keys reach all three
}

TEST_P(SendBatchTest, OnlyTheOutermostBatchSends) {
    MemcachedServer server;
    auto client = folsom::Client::connect(runner_.io(), options({server.address()}));
    store_keys(client, 10);
    reset_writes_when_settled();
    Completions c(10);
    {
        SendBatch outer;
        {
            SendBatch inner;
            start_gets(client, 10, c);
        }
        std::this_thread::sleep_for(30ms);
        EXPECT_EQ(counter_->total(), 0u);  // the inner batch's end sent nothing
        EXPECT_TRUE(SendBatch::active());
    }
    ASSERT_TRUE(wait_for([&] { return c.total.load() == 10; }, 10s));
    expect_each_once_and_hit(c);
}

TEST_P(SendBatchTest, SendHeldSendsAndKeepsTheBatchOpen) {
    MemcachedServer server;
    auto client = folsom::Client::connect(runner_.io(), options({server.address()}));
    store_keys(client, 1);
    SendBatch batch;
    auto f = client.get("k0", asio::use_future);
    SendBatch::send_held();
    ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
    EXPECT_EQ(f.get()->data, "v0");
    EXPECT_TRUE(SendBatch::active());
    // And the batch holds what comes after.
    reset_writes_when_settled();
    Completions c(1);
    start_gets(client, 1, c);
    std::this_thread::sleep_for(30ms);
    EXPECT_EQ(counter_->total(), 0u);
    SendBatch::send_held();
    ASSERT_TRUE(wait_for([&] { return c.total.load() == 1; }, 10s));
    expect_each_once_and_hit(c);
}

TEST_P(SendBatchTest, BlockingClientCallsInsideABatchDoNotWaitForIt) {
    MemcachedServer server;
    folsom::BlockingClient bc(options({server.address()}));
    SendBatch batch;
    EXPECT_EQ(bc.set("k", "v", 0s), Status::stored);  // would never return if it were held
    EXPECT_EQ(bc.get("k")->data, "v");
}

TEST_P(SendBatchTest, AClientGoneBeforeTheBatchEndsCompletesItsRequestsOnce) {
    MemcachedServer server;
    Completions c(5);
    auto own = std::make_unique<folsom::test::IoRunner>();
    auto client = std::make_unique<folsom::Client>(
        folsom::Client::connect(own->io(), options({server.address()})));
    store_keys(*client, 1);  // connected
    // The I/O thread may still be in the turn that delivered the set's reply, whose end
    // flushes what completions queued: a request queued meanwhile, held or not, would go out
    // with it (and hit). Wait until that turn is over.
    std::promise<void> idle;
    asio::post(own->io(), [&idle] { idle.set_value(); });
    idle.get_future().wait();
    {
        SendBatch batch;
        start_gets(*client, 5, c);
        client->shutdown();  // the held requests fail with closed, on the I/O thread
        ASSERT_TRUE(wait_for([&] { return c.total.load() == 5; }, 10s));
        client.reset();
        own.reset();  // the client, its connections and its io_context are gone
    }                 // and the batch's end finds nothing left to flush (ASan: no use of them)
    for (std::size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(c.times[i].load(), 1) << "request " << i;
        EXPECT_FALSE(c.hits[i].load()) << "request " << i;
    }
}

TEST_P(SendBatchTest, WriteHereWritesOnTheThreadThatStartsTheRequest) {
    // A caller-driven io_context: nothing runs it but this thread.
    MemcachedServer server;
    asio::io_context io;
    auto client = folsom::Client::connect(io, options({server.address()}));
    auto run_until = [&](const std::function<bool()>& done) {
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (!done() && std::chrono::steady_clock::now() < deadline)
            io.run_one_for(10ms);
        return done();
    };
    int stored = 0;
    client.set("k0", "v0", 0s, [&](std::error_code ec, Status s) {
        EXPECT_FALSE(ec);
        EXPECT_EQ(s, Status::stored);
        ++stored;
    });
    ASSERT_TRUE(run_until([&] { return stored == 1; }));
    counter_->reset();

    Completions plain(1), here(1);
    start_gets(client, 1, plain);
    EXPECT_EQ(counter_->total(), 0u);  // a flush was posted: the loop has not run
    ASSERT_TRUE(run_until([&] { return plain.total.load() == 1; }));
    expect_each_once_and_hit(plain);
    counter_->reset();
    {
        folsom::WriteHere write_here;
        EXPECT_TRUE(folsom::detail::this_thread_writes_here());
        start_gets(client, 1, here);
        EXPECT_EQ(counter_->total(), 1u);  // written before the loop ran
        EXPECT_EQ(here.total.load(), 0u);  // (its reply is read by the loop)
        {
            SendBatch batch;  // a batch still holds
            Completions held(1);
            start_gets(client, 1, held);
            EXPECT_EQ(counter_->total(), 1u);
            batch.send_held();
            ASSERT_TRUE(run_until([&] { return held.total.load() == 1; }));
            expect_each_once_and_hit(held);
        }
    }
    EXPECT_FALSE(folsom::detail::this_thread_writes_here());
    ASSERT_TRUE(run_until([&] { return here.total.load() == 1; }));
    expect_each_once_and_hit(here);
    {
        folsom::WriteHere off(false);  // an unmarked guard does nothing
        EXPECT_FALSE(folsom::detail::this_thread_writes_here());
    }
}

INSTANTIATE_TEST_SUITE_P(Protocols, SendBatchTest, folsom::test::all_protocols,
                         folsom::test::protocol_name);

}  // namespace
