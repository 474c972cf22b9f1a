// Metrics and tracing against real memcached processes: the client's per-server counts agree
// with each server's own `stats`, every request is counted once (also when it is retried or
// fails before being sent), connection events follow a kill and a restart, and the tracer sees
// one span per request with its outcome.
#include "folsom/blocking_client.hpp"
#include "folsom/client.hpp"
#include "folsom/metrics_registry.hpp"
#include "folsom/tracing.hpp"

#include "support/cluster_support.hpp"
#include "support/memcached_server.hpp"
#include "support/protocols.hpp"

#include <asio/use_future.hpp>
#include <gtest/gtest.h>

#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::MetricOp;
using folsom::MetricsRegistry;
using folsom::Outcome;
using folsom::Status;
using folsom::test::MemcachedServer;
using folsom::test::wait_for;

// ---- a tracer that records every span -----------------------------------------------------

struct SpanRecord {
    std::string operation, key, server;
    std::size_t key_count = 0;
    Outcome outcome = Outcome::ok;
    std::error_code error;
    std::size_t hits = 0;
    int ends = 0;
};

class RecordingTracer final : public folsom::Tracer {
  public:
    std::unique_ptr<folsom::Span> start_span(const folsom::SpanStart& s) override {
        auto r = std::make_shared<SpanRecord>();
        r->operation = s.operation;
        r->key = s.key;
        r->server = s.server;
        r->key_count = s.key_count;
        std::lock_guard lk(mu_);
        spans_.push_back(r);
        return std::make_unique<RecordingSpan>(std::move(r), mu_);
    }
    /// A copy of every span so far.
    std::vector<SpanRecord> spans() const {
        std::lock_guard lk(mu_);
        std::vector<SpanRecord> out;
        for (const auto& s : spans_)
            out.push_back(*s);
        return out;
    }

  private:
    class RecordingSpan final : public folsom::Span {
      public:
        RecordingSpan(std::shared_ptr<SpanRecord> r, std::mutex& mu) : r_(std::move(r)), mu_(mu) {}
        void end(const folsom::SpanEnd& e) noexcept override {
            std::lock_guard lk(mu_);
            r_->outcome = e.outcome;
            r_->error = e.error;
            r_->hits = e.hits;
            ++r_->ends;
        }

      private:
        std::shared_ptr<SpanRecord> r_;
        std::mutex& mu_;
    };
    mutable std::mutex mu_;
    std::vector<std::shared_ptr<SpanRecord>> spans_;
};

/// The server's counters, read over a connection of its own.
std::map<std::string, long long> server_stats(const MemcachedServer& s) {
    const std::string reply = folsom::test::raw_request(s.port(), "stats\r\n", "END\r\n");
    std::map<std::string, long long> out;
    for (const char* name :
         {"cmd_get", "get_hits", "get_misses", "cmd_set", "delete_hits", "delete_misses",
          "incr_hits", "incr_misses", "cmd_touch", "touch_hits", "touch_misses"})
        out[name] = folsom::test::stat_value(reply, name);
    return out;
}

std::uint64_t outcome(const folsom::ServerSnapshot& s, MetricOp op, Outcome o) {
    const auto* e = s.find(op);
    return e ? e->count(o) : 0;
}
std::uint64_t requests(const folsom::ServerSnapshot& s, MetricOp op) {
    const auto* e = s.find(op);
    return e ? e->requests() : 0;
}
std::uint64_t errors(const folsom::ServerSnapshot& s, MetricOp op, errc ec) {
    const auto* e = s.find(op);
    return e ? e->errors[static_cast<std::size_t>(ec)] : 0;
}

class Observability : public ::testing::TestWithParam<folsom::Protocol> {};

TEST_P(Observability, PerServerCountsMatchEachServersOwnStats) {
    MemcachedServer s1, s2, s3;
    const std::vector<const MemcachedServer*> servers = {&s1, &s2, &s3};
    auto registry = std::make_shared<MetricsRegistry>();
    folsom::Options o;
    o.servers = {s1.address(), s2.address(), s3.address()};
    o.protocol = GetParam();
    o.metrics = registry;
    folsom::BlockingClient c(o);
    ASSERT_NO_THROW(c.async().wait_connected(10s, asio::use_future).get());

    std::map<std::string, std::map<std::string, long long>> before;
    for (const auto* s : servers)
        before[s->address()] = server_stats(*s);

    // A mixed workload; the counts per outcome are known in total, their split over the
    // servers is whatever the ring says.
    for (int i = 0; i < 120; ++i)
        ASSERT_EQ(c.set("k" + std::to_string(i), "v" + std::to_string(i)), Status::stored);
    for (int i = 0; i < 30; ++i)
        ASSERT_EQ(c.store(folsom::StoreMode::add, "k" + std::to_string(i), "again", 0s),
                  Status::not_stored);
    int hits = 0;
    for (int i = 0; i < 160; ++i)  // 120 hits, 40 misses
        hits += c.get("k" + std::to_string(i)).has_value();
    ASSERT_EQ(hits, 120);
    std::vector<std::string> keys;
    for (int i = 100; i < 140; ++i)  // 20 hits, 20 misses, over every server
        keys.push_back("k" + std::to_string(i));
    const std::vector<std::string_view> views(keys.begin(), keys.end());
    for (int round = 0; round < 3; ++round)
        ASSERT_EQ(c.get_multi(views).to_map(views).size(), 20u);
    for (int i = 0; i < 25; ++i)
        ASSERT_EQ(c.del("k" + std::to_string(i)), Status::deleted);
    for (int i = 0; i < 10; ++i)
        ASSERT_EQ(c.del("gone" + std::to_string(i)), Status::not_found);
    for (int i = 0; i < 10; ++i) {
        ASSERT_EQ(c.set("n" + std::to_string(i), "5"), Status::stored);
        ASSERT_EQ(c.incr("n" + std::to_string(i), 2), 7u);
        ASSERT_EQ(c.incr("none" + std::to_string(i), 2), std::nullopt);
    }
    for (int i = 50; i < 60; ++i)
        ASSERT_EQ(c.touch("k" + std::to_string(i), 100s), Status::touched);

    const auto snap = registry->snapshot();
    ASSERT_EQ(snap.servers.size(), 3u);
    std::uint64_t total_get_keys = 0;
    for (const auto* s : servers) {
        SCOPED_TRACE(s->address());
        const auto after = server_stats(*s);
        auto delta = [&](const char* name) {
            return static_cast<std::uint64_t>(after.at(name) - before[s->address()].at(name));
        };
        const auto* m = snap.find(s->address());
        ASSERT_NE(m, nullptr);
        const auto* get = m->find(MetricOp::get);
        ASSERT_NE(get, nullptr);
        total_get_keys += get->keys;
        EXPECT_EQ(m->errors, 0u);
        EXPECT_EQ(m->outstanding, 0);
        EXPECT_EQ(get->keys, delta("cmd_get"));
        EXPECT_EQ(m->hits, delta("get_hits"));
        EXPECT_EQ(m->misses, delta("get_misses"));
        EXPECT_EQ(requests(*m, MetricOp::set) + requests(*m, MetricOp::add), delta("cmd_set"));
        EXPECT_EQ(outcome(*m, MetricOp::del, Outcome::deleted), delta("delete_hits"));
        EXPECT_EQ(outcome(*m, MetricOp::del, Outcome::not_found), delta("delete_misses"));
        EXPECT_EQ(outcome(*m, MetricOp::incr, Outcome::ok), delta("incr_hits"));
        EXPECT_EQ(outcome(*m, MetricOp::incr, Outcome::not_found), delta("incr_misses"));
        EXPECT_EQ(outcome(*m, MetricOp::touch, Outcome::touched), delta("touch_hits"));
        EXPECT_EQ(requests(*m, MetricOp::touch), delta("cmd_touch"));
        EXPECT_GT(m->bytes_sent, 0u);
        EXPECT_GT(m->bytes_received, 0u);
        EXPECT_EQ(m->connects, 1u);
        EXPECT_EQ(m->latency.count, m->requests);
    }
    EXPECT_EQ(total_get_keys, 160u + 3 * 40u);
    EXPECT_EQ(snap.totals.hits, 120u + 3 * 20u);
    EXPECT_EQ(snap.totals.misses, 40u + 3 * 20u);
    EXPECT_EQ(outcome(snap.totals, MetricOp::set, Outcome::stored), 130u);
    EXPECT_EQ(outcome(snap.totals, MetricOp::add, Outcome::not_stored), 30u);
    EXPECT_EQ(snap.unrouted.requests, 0u);
}

TEST_P(Observability, ConnectionEventsFollowAKillAndARestart) {
    MemcachedServer server;
    auto registry = std::make_shared<MetricsRegistry>();
    folsom::Options o;
    o.servers = {server.address()};
    o.protocol = GetParam();
    o.metrics = registry;
    o.reconnect_initial_delay = 5ms;
    o.reconnect_max_delay = 50ms;
    folsom::BlockingClient c(o);
    ASSERT_NO_THROW(c.async().wait_connected(10s, asio::use_future).get());
    auto snap = [&] { return registry->snapshot().servers.at(0); };
    EXPECT_EQ(snap().connects, 1u);
    EXPECT_EQ(snap().disconnects, 0u);
    EXPECT_EQ(snap().reconnect_attempts, 0u);

    server.kill();
    // The pending read sees the close; then reconnects are attempted and refused.
    ASSERT_TRUE(wait_for([&] { return snap().disconnects == 1; }, 20s));
    ASSERT_TRUE(wait_for([&] { return snap().connect_failures >= 2; }, 20s));
    EXPECT_GE(snap().reconnect_attempts, 2u);
    server.restart();
    ASSERT_TRUE(wait_for([&] { return snap().connects == 2; }, 20s));
    EXPECT_EQ(c.set("back", "again"), Status::stored);
    const auto s = snap();
    EXPECT_EQ(s.disconnects, 1u);
    // Every attempt after the loss is a reconnect; each one failed but the last.
    EXPECT_EQ(s.reconnect_attempts, s.connect_failures + 1);
    EXPECT_EQ(s.outstanding, 0);
}

TEST_P(Observability, EveryRequestIsCountedAndTracedOnceWhileAServerDies) {
    MemcachedServer server;
    auto registry = std::make_shared<MetricsRegistry>();
    auto tracer = std::make_shared<RecordingTracer>();
    folsom::Options o;
    o.servers = {server.address()};
    o.protocol = GetParam();
    o.metrics = registry;
    o.tracer = tracer;
    o.connections_per_server = 2;  // a lost request's retry has another connection to go to
    o.reconnect_initial_delay = 5ms;
    o.reconnect_max_delay = 20ms;
    o.max_outstanding_requests = 100000;
    folsom::BlockingClient c(o);
    ASSERT_NO_THROW(c.async().wait_connected(10s, asio::use_future).get());
    ASSERT_EQ(c.set("k", "v"), Status::stored);

    constexpr int rounds = 6;
    constexpr int per_round = 300;
    std::atomic<int> completed{0};
    for (int r = 0; r < rounds; ++r) {
        for (int i = 0; i < per_round; ++i) {
            // Gets are retried when lost; sets are not.
            if (i % 3 == 0)
                c.async().set("k", "v", 0s, [&](std::error_code, Status) { ++completed; });
            else
                c.async().get("k",
                              [&](std::error_code, std::optional<folsom::Value>) { ++completed; });
        }
        if (r == 2) server.kill();  // with requests in flight
        if (r == 4) server.restart();
    }
    constexpr int issued = 1 + rounds * per_round;
    ASSERT_TRUE(wait_for([&] { return completed.load() == issued - 1; }, 60s));
    const auto snap = registry->snapshot();
    EXPECT_EQ(snap.totals.requests, static_cast<std::uint64_t>(issued));
    EXPECT_EQ(snap.totals.outstanding, 0);
    const auto spans = tracer->spans();
    ASSERT_EQ(spans.size(), static_cast<std::size_t>(issued));
    for (const auto& s : spans)
        ASSERT_EQ(s.ends, 1) << s.operation;
    // Per outcome, the spans and the metrics agree (a retried request counts as what its
    // retry ended with, but a retry whose second connection is gone reports the first loss).
    std::uint64_t span_errors = 0;
    for (const auto& s : spans)
        span_errors += s.outcome == Outcome::error;
    EXPECT_EQ(span_errors, snap.totals.errors);
    EXPECT_GT(snap.totals.errors, 0u) << "the kill hit no request";
}

TEST_P(Observability, TheTracerSeesOneSpanPerRequestWithItsOutcome) {
    MemcachedServer server;
    auto tracer = std::make_shared<RecordingTracer>();
    auto registry = std::make_shared<MetricsRegistry>();
    folsom::Options o;
    o.servers = {server.address()};
    o.protocol = GetParam();
    o.tracer = tracer;
    o.metrics = registry;
    o.reconnect_initial_delay = 60s;  // once the server is gone, it stays "not connected"
    o.reconnect_max_delay = 60s;
    folsom::BlockingClient c(o);
    ASSERT_NO_THROW(c.async().wait_connected(10s, asio::use_future).get());

    EXPECT_EQ(c.set("t1", "v"), Status::stored);
    EXPECT_TRUE(c.get("t1"));
    EXPECT_FALSE(c.get("t2"));
    EXPECT_EQ(c.store(folsom::StoreMode::add, "t1", "v", 0s), Status::not_stored);
    EXPECT_EQ(c.del("t1"), Status::deleted);
    EXPECT_EQ(c.del("t1"), Status::not_found);
    EXPECT_EQ(c.incr("t3", 1), std::nullopt);
    EXPECT_EQ(c.set("t3", "1"), Status::stored);
    const std::vector<std::string_view> keys = {"t3", "t4", "t5"};
    EXPECT_EQ(c.get_multi(keys).to_map(keys).size(), 1u);
    EXPECT_EQ(c.stats().size(), 1u);
    EXPECT_THROW(c.get("bad key"), std::system_error);
    std::promise<bool> viewed;
    c.async().get_view(
        "t3", [&](std::error_code ec, const folsom::ValueView* v) { viewed.set_value(!ec && v); });
    EXPECT_TRUE(viewed.get_future().get());

    server.kill();
    ASSERT_TRUE(wait_for([&] { return registry->snapshot().servers.at(0).disconnects == 1; }, 20s));
    try {
        c.get("t3");
        ADD_FAILURE() << "a get succeeded with the server gone";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::not_connected);
    }

    struct Want {
        const char* operation;
        const char* key;
        Outcome outcome;
        errc error;
    };
    const std::vector<Want> want = {
        {"set", "t1", Outcome::stored, {}},
        {"get", "t1", Outcome::hit, {}},
        {"get", "t2", Outcome::miss, {}},
        {"add", "t1", Outcome::not_stored, {}},
        {"delete", "t1", Outcome::deleted, {}},
        {"delete", "t1", Outcome::not_found, {}},
        {"incr", "t3", Outcome::not_found, {}},
        {"set", "t3", Outcome::stored, {}},
        {"get_multi", "t3", Outcome::hit, {}},
        {"stats", "", Outcome::ok, {}},
        {"get", "bad key", Outcome::error, errc::invalid_key},
        {"get", "t3", Outcome::hit, {}},  // get_view
        {"get", "t3", Outcome::error, errc::not_connected},
    };
    const auto spans = tracer->spans();
    ASSERT_EQ(spans.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(spans[i].operation, want[i].operation);
        EXPECT_EQ(spans[i].key, want[i].key);
        EXPECT_EQ(spans[i].outcome, want[i].outcome);
        EXPECT_EQ(spans[i].ends, 1);
        if (want[i].outcome == Outcome::error)
            EXPECT_EQ(spans[i].error, want[i].error);
        else
            EXPECT_FALSE(spans[i].error);
        // Single-key operations name the server; the others span the cluster.
        const bool single = std::string(want[i].operation) != "get_multi" &&
                            std::string(want[i].operation) != "stats";
        EXPECT_EQ(spans[i].server, single ? server.address() : "");
    }
    EXPECT_EQ(spans[8].key_count, 3u);
    EXPECT_EQ(spans[8].hits, 1u);

    // The metrics saw the same errors, on the server they were routed to, unsent.
    const auto m = registry->snapshot().servers.at(0);
    EXPECT_EQ(errors(m, MetricOp::get, errc::invalid_key), 1u);
    EXPECT_EQ(errors(m, MetricOp::get, errc::not_connected), 1u);
    EXPECT_EQ(m.requests, want.size());
}

TEST_P(Observability, RequestsRefusedForBackpressureAreUnrouted) {
    MemcachedServer server;
    auto tracer = std::make_shared<RecordingTracer>();
    auto registry = std::make_shared<MetricsRegistry>();
    folsom::Options o;
    o.servers = {server.address()};
    o.protocol = GetParam();
    o.tracer = tracer;
    o.metrics = registry;
    o.max_outstanding_requests = 0;  // every request is one too many
    folsom::BlockingClient c(o);
    EXPECT_THROW(c.get("a"), std::system_error);
    EXPECT_THROW(c.set("a", "b"), std::system_error);
    const std::vector<std::string_view> keys = {"a", "b"};
    EXPECT_THROW(c.get_multi(keys), std::system_error);
    std::promise<std::error_code> viewed;
    c.async().get_view("a",
                       [&](std::error_code ec, const folsom::ValueView*) { viewed.set_value(ec); });
    EXPECT_EQ(viewed.get_future().get(), errc::overloaded);

    const auto spans = tracer->spans();
    ASSERT_EQ(spans.size(), 4u);
    for (const auto& s : spans) {
        EXPECT_EQ(s.outcome, Outcome::error);
        EXPECT_EQ(s.error, errc::overloaded);
        EXPECT_EQ(s.ends, 1);
    }
    const auto snap = registry->snapshot();
    EXPECT_EQ(snap.unrouted.requests, 4u);
    EXPECT_EQ(errors(snap.unrouted, MetricOp::get, errc::overloaded), 3u);
    EXPECT_EQ(snap.servers.at(0).requests, 0u);
}

TEST_P(Observability, ConcurrentCallersLoseNoCount) {
    MemcachedServer s1, s2;
    auto registry = std::make_shared<MetricsRegistry>();
    auto tracer = std::make_shared<RecordingTracer>();
    folsom::Options o;
    o.servers = {s1.address(), s2.address()};
    o.protocol = GetParam();
    o.metrics = registry;
    o.tracer = tracer;
    folsom::BlockingClient c(o);
    ASSERT_NO_THROW(c.async().wait_connected(10s, asio::use_future).get());
    constexpr int threads = 4;
    constexpr int per_thread = 500;
    std::vector<std::thread> pool;
    std::atomic<int> failures{0};
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            for (int i = 0; i < per_thread; ++i) {
                const std::string key = "c" + std::to_string(t) + "_" + std::to_string(i % 50);
                try {
                    if (i % 2)
                        c.set(key, "x");
                    else
                        (void)c.get(key);
                } catch (const std::exception&) {
                    ++failures;
                }
            }
        });
    for (auto& t : pool)
        t.join();
    EXPECT_EQ(failures.load(), 0);
    const auto snap = registry->snapshot();
    constexpr std::uint64_t total = threads * per_thread;
    EXPECT_EQ(snap.totals.requests, total);
    EXPECT_EQ(snap.servers.at(0).requests + snap.servers.at(1).requests, total);
    EXPECT_EQ(snap.totals.hits + snap.totals.misses, total / 2);
    EXPECT_EQ(snap.totals.latency.count, total);
    EXPECT_EQ(snap.totals.outstanding, 0);
    EXPECT_EQ(tracer->spans().size(), total);
}

INSTANTIATE_TEST_SUITE_P(Protocols, Observability, folsom::test::all_protocols,
                         folsom::test::protocol_name);

}  // namespace
