// MetricsRegistry without a network: what the hooks record, the latency histogram's quantiles,
// recording from many threads at once, and the Prometheus text format, line by line.
#include "folsom/metrics_registry.hpp"

#include "observe/latency_histogram.hpp"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::ConnectionEvent;
using folsom::errc;
using folsom::MetricOp;
using folsom::MetricsRegistry;
using folsom::Outcome;
using folsom::RequestRecord;
using folsom::detail::LatencyHistogram;

RequestRecord record(std::uint32_t server, MetricOp op, Outcome outcome,
                     std::chrono::nanoseconds latency = 1000ns) {
    RequestRecord r;
    r.server = server;
    r.op = op;
    r.outcome = outcome;
    r.sent = true;
    r.latency = latency;
    return r;
}

/// Sends and completes one request, as a connection does.
void complete(MetricsRegistry& m, const RequestRecord& r) {
    if (r.sent) m.request_sent(r.server, r.op);
    m.request_completed(r);
}

// ---- the latency histogram ------------------------------------------------------------------

TEST(LatencyHistogram, EveryValueFallsInABucketWhoseBoundHoldsIt) {
    std::uint64_t previous_bound = 0;
    for (std::size_t i = 0; i < LatencyHistogram::bucket_count; ++i) {
        const std::uint64_t bound = LatencyHistogram::upper_bound(i);
        if (i > 0) {
            EXPECT_GT(bound, previous_bound) << i;
        }
        EXPECT_EQ(LatencyHistogram::bucket_of(bound), i) << i;
        previous_bound = bound;
    }
    for (std::uint64_t v : {0ull, 1ull, 15ull, 16ull, 17ull, 1000ull, 123456789ull, 1ull << 39}) {
        const std::size_t b = LatencyHistogram::bucket_of(v);
        EXPECT_GE(LatencyHistogram::upper_bound(b), v) << v;
        // At most 12.5% above the value.
        EXPECT_LE(static_cast<double>(LatencyHistogram::upper_bound(b)),
                  static_cast<double>(v) * 1.125 + 1)
            << v;
    }
    // Beyond the range: the last bucket.
    EXPECT_EQ(LatencyHistogram::bucket_of(~0ull), LatencyHistogram::bucket_count - 1);
}

TEST(LatencyHistogram, QuantilesOfAKnownDistribution) {
    LatencyHistogram h;
    // 1000 values: 1..1000 µs.
    for (std::uint64_t i = 1; i <= 1000; ++i)
        h.record(i * 1000);
    const auto c = h.read();
    EXPECT_EQ(c.count, 1000u);
    EXPECT_EQ(c.sum_ns, 500500u * 1000u);
    auto near = [](std::uint64_t got, double want) {
        return static_cast<double>(got) >= want && static_cast<double>(got) <= want * 1.125 + 1;
    };
    EXPECT_TRUE(near(c.quantile(0.5), 500e3)) << c.quantile(0.5);
    EXPECT_TRUE(near(c.quantile(0.99), 990e3)) << c.quantile(0.99);
    EXPECT_TRUE(near(c.quantile(0.999), 999e3)) << c.quantile(0.999);
    EXPECT_TRUE(near(c.quantile(1.0), 1000e3)) << c.quantile(1.0);
    EXPECT_EQ(LatencyHistogram().read().quantile(0.5), 0u);
}

// ---- recording ------------------------------------------------------------------------------

TEST(MetricsRegistry, CountsPerServerOperationAndOutcome) {
    MetricsRegistry m;
    const auto a = m.add_server("10.0.0.1:11211");
    const auto b = m.add_server("10.0.0.2:11211");
    EXPECT_NE(a, b);
    EXPECT_EQ(m.add_server("10.0.0.1:11211"), a);  // one id per name

    auto get = record(a, MetricOp::get, Outcome::hit);
    get.keys = 1;
    get.hits = 1;
    complete(m, get);
    get.outcome = Outcome::miss;
    get.hits = 0;
    complete(m, get);
    auto multi = record(b, MetricOp::get, Outcome::hit);
    multi.keys = 10;
    multi.hits = 7;
    complete(m, multi);
    complete(m, record(b, MetricOp::set, Outcome::stored));
    auto lost = record(b, MetricOp::get, Outcome::error);
    lost.error = make_error_code(errc::connection_lost);
    lost.retried = true;
    complete(m, lost);
    auto timeout = record(b, MetricOp::set, Outcome::error);
    timeout.error = make_error_code(errc::timeout);
    complete(m, timeout);
    RequestRecord refused;  // never queued: no latency, not outstanding
    refused.server = a;
    refused.op = MetricOp::del;
    refused.outcome = Outcome::error;
    refused.error = make_error_code(errc::invalid_key);
    complete(m, refused);
    RequestRecord overloaded = refused;
    overloaded.server = folsom::Metrics::no_server;
    overloaded.error = make_error_code(errc::overloaded);
    complete(m, overloaded);
    m.request_sent(a, MetricOp::get);  // still outstanding
    m.bytes_sent(a, 100);
    m.bytes_received(a, 250);
    m.connection_event(b, ConnectionEvent::connected);
    m.connection_event(b, ConnectionEvent::disconnected);
    m.connection_event(b, ConnectionEvent::reconnect_attempt);
    m.connection_event(b, ConnectionEvent::reconnect_attempt);
    m.connection_event(b, ConnectionEvent::connect_failed);

    const auto s = m.snapshot();
    ASSERT_EQ(s.servers.size(), 2u);
    const auto* sa = s.find("10.0.0.1:11211");
    const auto* sb = s.find("10.0.0.2:11211");
    ASSERT_TRUE(sa && sb);
    EXPECT_EQ(sa->requests, 3u);
    EXPECT_EQ(sa->hits, 1u);
    EXPECT_EQ(sa->misses, 1u);
    EXPECT_EQ(sa->errors, 1u);
    EXPECT_EQ(sa->outstanding, 1);
    EXPECT_EQ(sa->bytes_sent, 100u);
    EXPECT_EQ(sa->bytes_received, 250u);
    EXPECT_EQ(sa->latency.count, 2u);  // the refused request has no latency
    const auto* del = sa->find(MetricOp::del);
    ASSERT_TRUE(del);
    EXPECT_EQ(del->errors[static_cast<int>(errc::invalid_key)], 1u);

    EXPECT_EQ(sb->requests, 3u);  // the retried request is a retry, not a request
    EXPECT_EQ(sb->retries, 1u);
    EXPECT_EQ(sb->hits, 7u);
    EXPECT_EQ(sb->misses, 3u);
    EXPECT_EQ(sb->errors, 1u);
    EXPECT_EQ(sb->outstanding, 0);
    EXPECT_EQ(sb->connects, 1u);
    EXPECT_EQ(sb->disconnects, 1u);
    EXPECT_EQ(sb->reconnect_attempts, 2u);
    EXPECT_EQ(sb->connect_failures, 1u);
    const auto* set = sb->find(MetricOp::set);
    ASSERT_TRUE(set);
    EXPECT_EQ(set->count(Outcome::stored), 1u);
    EXPECT_EQ(set->errors[static_cast<int>(errc::timeout)], 1u);

    EXPECT_EQ(s.unrouted.requests, 1u);
    EXPECT_EQ(s.unrouted.errors, 1u);
    EXPECT_EQ(s.totals.requests, 7u);
    EXPECT_EQ(s.totals.hits, 8u);
    EXPECT_EQ(s.totals.misses, 4u);
    EXPECT_EQ(s.totals.errors, 3u);
    EXPECT_EQ(s.totals.retries, 1u);
    EXPECT_EQ(s.totals.outstanding, 1);
    const auto* total_get = s.totals.find(MetricOp::get);
    ASSERT_TRUE(total_get);
    EXPECT_EQ(total_get->requests(), 3u);
    EXPECT_EQ(total_get->keys, 12u);
}

TEST(MetricsRegistry, LatencyQuantilesPerOperationAndMerged) {
    MetricsRegistry m;
    const auto a = m.add_server("a:1");
    for (int i = 0; i < 98; ++i)
        complete(m, record(a, MetricOp::get, Outcome::miss, 100us));
    complete(m, record(a, MetricOp::get, Outcome::miss, 50ms));
    complete(m, record(a, MetricOp::set, Outcome::stored, 2s));
    const auto s = m.snapshot();
    const auto* get = s.servers.at(0).find(MetricOp::get);
    ASSERT_TRUE(get);
    EXPECT_EQ(get->latency.count, 99u);
    EXPECT_GE(get->latency.p50, 100e-6);
    EXPECT_LE(get->latency.p50, 100e-6 * 1.125);
    EXPECT_GE(get->latency.p999, 50e-3);
    EXPECT_LE(get->latency.p999, 50e-3 * 1.125);
    // Merged over operations: the slow set is the 100th of 100.
    EXPECT_EQ(s.servers[0].latency.count, 100u);
    EXPECT_GE(s.servers[0].latency.p999, 2.0);
    EXPECT_GE(s.totals.latency.p999, 2.0);
    EXPECT_NEAR(s.servers[0].latency.sum, 98 * 100e-6 + 50e-3 + 2.0, 1e-6);
}

TEST(MetricsRegistry, ResetZeroesCountersButKeepsServersAndOutstanding) {
    MetricsRegistry m;
    const auto a = m.add_server("a:1");
    complete(m, record(a, MetricOp::get, Outcome::miss));
    m.request_sent(a, MetricOp::get);
    m.bytes_sent(a, 10);
    m.connection_event(a, ConnectionEvent::connected);
    m.reset();
    auto s = m.snapshot();
    ASSERT_EQ(s.servers.size(), 1u);
    EXPECT_EQ(s.servers[0].requests, 0u);
    EXPECT_EQ(s.servers[0].latency.count, 0u);
    EXPECT_EQ(s.servers[0].bytes_sent, 0u);
    EXPECT_EQ(s.servers[0].connects, 0u);
    EXPECT_EQ(s.servers[0].outstanding, 1);
    m.request_completed(record(a, MetricOp::get, Outcome::hit));
    s = m.snapshot();
    EXPECT_EQ(s.servers[0].requests, 1u);
    EXPECT_EQ(s.servers[0].outstanding, 0);
}

TEST(MetricsRegistry, ServersPastTheLimitShareOneSeries) {
    MetricsRegistry m(2);
    const auto a = m.add_server("a:1");
    const auto b = m.add_server("b:1");
    const auto c = m.add_server("c:1");
    const auto d = m.add_server("d:1");
    EXPECT_NE(a, b);
    EXPECT_EQ(c, d);
    EXPECT_NE(c, a);
    complete(m, record(c, MetricOp::get, Outcome::miss));
    complete(m, record(d, MetricOp::get, Outcome::miss));
    const auto s = m.snapshot();
    ASSERT_EQ(s.servers.size(), 3u);
    ASSERT_TRUE(s.find("other"));
    EXPECT_EQ(s.find("other")->requests, 2u);
}

TEST(MetricsRegistry, ConcurrentRecordingLosesNothing) {
    MetricsRegistry m;
    const auto a = m.add_server("a:1");
    const auto b = m.add_server("b:1");
    constexpr int threads = 4;
    constexpr int per_thread = 20000;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            for (int i = 0; i < per_thread; ++i) {
                auto r = record(i % 2 ? a : b, MetricOp::get, Outcome::hit,
                                std::chrono::nanoseconds(1000 + i));
                r.keys = 2;
                r.hits = 1;
                complete(m, r);
                m.bytes_sent(r.server, 3);
                if (i % 100 == 0) {
                    m.connection_event(r.server, ConnectionEvent::reconnect_attempt);
                    // A server joining while others record (another client, discovery).
                    m.add_server("joiner:" + std::to_string(t));
                    (void)m.snapshot().totals.requests;  // readers race the writers too
                }
            }
        });
    for (auto& t : pool)
        t.join();
    const auto s = m.snapshot();
    constexpr std::uint64_t total = std::uint64_t{threads} * per_thread;
    EXPECT_EQ(s.totals.requests, total);
    EXPECT_EQ(s.totals.hits, total);
    EXPECT_EQ(s.totals.misses, total);
    EXPECT_EQ(s.totals.outstanding, 0);
    EXPECT_EQ(s.totals.bytes_sent, 3 * total);
    EXPECT_EQ(s.totals.latency.count, total);
    EXPECT_EQ(s.totals.reconnect_attempts, std::uint64_t{threads} * (per_thread / 100));
    EXPECT_EQ(s.find("a:1")->requests, total / 2);
    EXPECT_EQ(s.servers.size(), 2u + threads);
}

// ---- Prometheus text ------------------------------------------------------------------------

/// Checks every line of a text exposition; returns the samples as "name{labels}" -> value,
/// with label values unescaped and labels in the order written.
std::map<std::string, double> parse_exposition(const std::string& text) {
    static const std::regex help(R"(^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$)");
    static const std::regex type(
        R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|summary|histogram|untyped)$)");
    static const std::regex sample(
        R"re(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\\\|\\"|\\n)*")(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\\\|\\"|\\n)*")*\})? ([-+]?(?:[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?|NaN|Inf))$)re");
    static const std::regex label(R"re(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\\\|\\"|\\n)*)")re");
    std::map<std::string, double> out;
    std::map<std::string, std::string> types;  // family -> type
    std::set<std::string> helped;
    EXPECT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n') << "the exposition ends with a line feed";
    std::istringstream in(text);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        ++n;
        std::smatch m;
        if (std::regex_match(line, m, help)) {
            EXPECT_TRUE(helped.insert(m[1]).second) << "second HELP for " << m[1];
            continue;
        }
        if (std::regex_match(line, m, type)) {
            EXPECT_TRUE(helped.count(m[1])) << "TYPE before HELP: " << line;
            EXPECT_TRUE(types.emplace(m[1], m[2]).second) << "second TYPE for " << m[1];
            continue;
        }
        if (!std::regex_match(line, m, sample)) {
            ADD_FAILURE() << "malformed line " << n << ": " << line;
            continue;
        }
        // A sample belongs to the family declared last (summaries add _sum and _count).
        std::string name = m[1];
        std::string family = name;
        for (const char* suffix : {"_sum", "_count"}) {
            const std::string s(suffix);
            if (!types.count(family) && family.size() > s.size() &&
                family.compare(family.size() - s.size(), s.size(), s) == 0)
                family.resize(family.size() - s.size());
        }
        EXPECT_TRUE(types.count(family)) << "sample without TYPE: " << line;
        std::string key = name + "{";
        const std::string labels = m[2];
        for (auto it = std::sregex_iterator(labels.begin(), labels.end(), label);
             it != std::sregex_iterator(); ++it) {
            std::string value;
            const std::string raw = (*it)[2];
            for (std::size_t i = 0; i < raw.size(); ++i) {
                if (raw[i] == '\\') {
                    ++i;
                    value += raw[i] == 'n' ? '\n' : raw[i];
                } else {
                    value += raw[i];
                }
            }
            key += (*it)[1].str() + "=" + value + ";";
        }
        key += "}";
        EXPECT_TRUE(out.emplace(key, std::stod(m[m.size() - 1])).second) << "repeated: " << line;
    }
    return out;
}

TEST(Prometheus, EveryLineIsWellFormedAndLabelsAreEscaped) {
    MetricsRegistry m;
    const std::string odd = "we\"ird\\host\nname:1";
    const auto a = m.add_server("127.0.0.1:11211");
    const auto b = m.add_server(odd);
    auto hit = record(a, MetricOp::get, Outcome::hit, 250us);
    hit.keys = 3;
    hit.hits = 2;
    for (int i = 0; i < 12; ++i)
        complete(m, hit);
    complete(m, record(b, MetricOp::set, Outcome::stored));
    auto err = record(b, MetricOp::del, Outcome::error);
    err.error = make_error_code(errc::timeout);
    complete(m, err);
    auto lost = record(b, MetricOp::get, Outcome::error);
    lost.error = make_error_code(errc::connection_lost);
    lost.retried = true;
    complete(m, lost);
    RequestRecord over;
    over.server = folsom::Metrics::no_server;
    over.op = MetricOp::get;
    over.outcome = Outcome::error;
    over.error = make_error_code(errc::overloaded);
    complete(m, over);
    m.connection_event(a, ConnectionEvent::connected);
    m.bytes_received(b, 42);

    const std::string text = m.prometheus_text();
    const auto samples = parse_exposition(text);
    auto at = [&](const std::string& key) {
        auto it = samples.find(key);
        EXPECT_NE(it, samples.end()) << key << "\n" << text;
        return it == samples.end() ? -1.0 : it->second;
    };
    EXPECT_EQ(at("folsom_requests_total{server=127.0.0.1:11211;op=get;outcome=hit;}"), 12);
    EXPECT_EQ(at("folsom_requests_total{server=" + odd + ";op=set;outcome=stored;}"), 1);
    EXPECT_EQ(at("folsom_requests_total{server=" + odd + ";op=delete;outcome=timeout;}"), 1);
    EXPECT_EQ(at("folsom_retrieval_keys_total{server=127.0.0.1:11211;op=get;result=hit;}"), 24);
    EXPECT_EQ(at("folsom_retrieval_keys_total{server=127.0.0.1:11211;op=get;result=miss;}"), 12);
    EXPECT_EQ(at("folsom_retries_total{server=" + odd + ";op=get;}"), 1);
    EXPECT_EQ(at("folsom_request_duration_seconds_count{server=127.0.0.1:11211;op=get;}"), 12);
    const double p50 =
        at("folsom_request_duration_seconds{server=127.0.0.1:11211;op=get;quantile=0.5;}");
    EXPECT_GE(p50, 250e-6);
    EXPECT_LE(p50, 250e-6 * 1.125);
    EXPECT_NEAR(at("folsom_request_duration_seconds_sum{server=127.0.0.1:11211;op=get;}"),
                12 * 250e-6, 1e-9);
    EXPECT_EQ(at("folsom_outstanding_requests{server=127.0.0.1:11211;}"), 0);
    EXPECT_EQ(at("folsom_connects_total{server=127.0.0.1:11211;}"), 1);
    EXPECT_EQ(at("folsom_received_bytes_total{server=" + odd + ";}"), 42);
    EXPECT_EQ(at("folsom_unrouted_requests_total{op=get;outcome=overloaded;}"), 1);
    // The raw text carries the escapes.
    EXPECT_NE(text.find(R"(server="we\"ird\\host\nname:1")"), std::string::npos) << text;
}

TEST(Prometheus, AnEmptyRegistryStillDeclaresItsFamilies) {
    MetricsRegistry m;
    const std::string text = m.prometheus_text();
    EXPECT_TRUE(parse_exposition(text).empty());
    EXPECT_NE(text.find("# TYPE folsom_requests_total counter\n"), std::string::npos);
    EXPECT_NE(text.find("# TYPE folsom_request_duration_seconds summary\n"), std::string::npos);
}

}  // namespace
