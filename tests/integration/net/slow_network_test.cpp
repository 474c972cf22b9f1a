// The client on a slow, lossy or high-latency network: inside a network namespace the test
// creates (only its `lo` is used; the host's network is never touched), a real memcached, and
// the link shaped three ways:
//   * bandwidth: a tbf qdisc on lo (this kernel has no netem qdisc: see docs/reliability.md);
//   * loss: nftables rules that drop a random share of the server's packets (netem's "loss");
//   * latency: a userspace DelayProxy in front of the server (netem's "delay").
// Each asserts that small requests keep succeeding with the configured timeouts, that requests
// whose reply cannot arrive within Options::request_timeout complete with errc::timeout (and
// no other code), exactly once, and that the client recovers once the shaping is removed.
#include "folsom/blocking_client.hpp"
#include "folsom/client.hpp"

#include "support/child_process.hpp"
#include "support/delay_proxy.hpp"
#include "support/memcached_server.hpp"
#include "support/private_network.hpp"
#include "support/wait_for.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::Status;
using folsom::test::run_command;
using folsom::test::tc;

bool wait_for(const std::function<bool()>& pred, std::chrono::milliseconds limit) {
    return folsom::test::wait_for(pred, limit, 10ms);
}

/// The outcomes of a batch of requests issued at once (so they are pipelined on the
/// connection): how many ended "ok" and how many with each error, and how many completions
/// each request got. Shared with the handlers, so a late second completion is still counted.
struct Batch {
    explicit Batch(std::size_t n) : completions(n) {}
    std::mutex mu;
    std::map<std::string, int> outcomes;  // "ok" or the error's message
    std::vector<std::atomic<int>> completions;

    void complete(std::size_t id, std::error_code ec) {
        completions[id].fetch_add(1);
        std::lock_guard lk(mu);
        ++outcomes[ec ? ec.message() : "ok"];
    }
    std::size_t never() const {
        std::size_t k = 0;
        for (auto& c : completions)
            k += c.load() == 0;
        return k;
    }
    std::size_t twice() const {
        std::size_t k = 0;
        for (auto& c : completions)
            k += c.load() > 1;
        return k;
    }
    std::map<std::string, int> snapshot() {
        std::lock_guard lk(mu);
        return outcomes;
    }
};

/// Issues `n` requests at once -- gets of `key`, and every fourth a set of a small key -- and
/// waits (bounded by `limit`) until each has completed. Returns the batch to check.
std::shared_ptr<Batch> pipelined(folsom::Client& client, const std::string& key, std::size_t n,
                                 std::chrono::milliseconds limit) {
    auto batch = std::make_shared<Batch>(n);
    for (std::size_t i = 0; i < n; ++i) {
        if (i % 4 == 3)
            client.set("p" + std::to_string(i), "v", 0s,
                       [batch, i](std::error_code ec, Status) { batch->complete(i, ec); });
        else
            client.get(key, [batch, i](std::error_code ec, std::optional<folsom::Value>) {
                batch->complete(i, ec);
            });
    }
    wait_for([&] { return batch->never() == 0; }, limit);
    std::this_thread::sleep_for(100ms);  // room for a (wrong) second completion to show
    return batch;
}

std::map<std::string, int> only(errc e, int n) {
    return {{make_error_code(e).message(), n}};
}

/// Small sets and gets, one at a time, each checked; returns how many went wrong.
int small_requests(folsom::BlockingClient& c, int n, const std::string& prefix) {
    int wrong = 0;
    for (int i = 0; i < n; ++i) {
        const std::string key = prefix + std::to_string(i % 20);
        const std::string value = "value-" + std::to_string(i);
        try {
            if (c.set(key, value) != Status::stored) ++wrong;
            auto v = c.get(key);
            if (!v || v->data != value) ++wrong;
        } catch (const std::system_error& e) {
            ADD_FAILURE() << "request " << i << " failed: " << e.code().message();
            ++wrong;
        }
    }
    return wrong;
}

/// True once `c` answers a get of `key` with `expected` again.
bool recovers(folsom::BlockingClient& c, const std::string& key, const std::string& expected,
              std::chrono::milliseconds limit) {
    return wait_for(
        [&] {
            try {
                auto v = c.get(key);
                return v && v->data == expected;
            } catch (const std::system_error&) {
                return false;
            }
        },
        limit);
}

/// A number from `tc -s qdisc show dev lo` ("overlimits", "dropped", ...), or -1.
long long qdisc_counter(const std::string& name) {
    auto r = run_command({"tc", "-s", "qdisc", "show", "dev", "lo"});
    std::smatch m;
    if (!std::regex_search(r.output, m, std::regex(name + " ([0-9]+)"))) return -1;
    return std::stoll(m[1]);
}

/// A value that is not one repeated byte, so a misplaced chunk would show.
std::string patterned(std::size_t n) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i)
        s[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
    return s;
}

class SlowNetwork : public ::testing::Test {
  protected:
    void SetUp() override {
        const auto why = folsom::test::private_network_unavailable();
        if (!why.empty()) GTEST_SKIP() << why;
    }

    /// Runs `body` in a network namespace of the test's own; skips when it cannot be made.
    void in_private_network(const std::function<void()>& body) {
        const auto why = folsom::test::run_in_private_network(body);
        if (!why.empty()) GTEST_SKIP() << "no private network namespace: " << why;
    }

    static folsom::Options options(const std::string& address,
                                   std::chrono::milliseconds request_timeout) {
        folsom::Options o;
        o.servers = {address};
        o.request_timeout = request_timeout;
        o.connect_timeout = request_timeout;
        o.reconnect_initial_delay = 10ms;
        o.reconnect_max_delay = 200ms;
        return o;
    }
};

TEST_F(SlowNetwork, ThrottledBandwidthKeepsRequestsWorkingAndStarvedRepliesTimeOut) {
    in_private_network([] {
        folsom::test::MemcachedServer server;
        folsom::BlockingClient c(options(server.address(), 1s));
        const std::string big = patterned(256 * 1024);
        ASSERT_EQ(c.set("big", big), Status::stored);

        // 1 Mbit/s (125 kB/s) through lo, both directions.
        ASSERT_EQ(tc({"qdisc", "add", "dev", "lo", "root", "tbf", "rate", "1mbit", "burst", "16kb",
                      "limit", "4mb"}),
                  "");
        EXPECT_EQ(small_requests(c, 100, "small"), 0);
        // 256 KiB at 125 kB/s takes about 2 s, twice the request timeout -- but bytes keep
        // arriving, and the timeout is about silence, not about the length of a transfer.
        const auto start = std::chrono::steady_clock::now();
        auto v = c.get("big");
        const auto took = std::chrono::steady_clock::now() - start;
        ASSERT_TRUE(v);
        EXPECT_TRUE(v->data == big);
        EXPECT_GE(took, 1s) << "the link was not throttled";
        EXPECT_GT(qdisc_counter("overlimits"), 0);

        // Starved: 4 kbit/s is 500 B/s, so every further 1500-byte packet of the big reply waits
        // 3 s for tokens -- three times the request timeout. The get and everything pipelined
        // behind it on the connection must fail with timeout, each exactly once.
        ASSERT_EQ(tc({"qdisc", "replace", "dev", "lo", "root", "tbf", "rate", "4kbit", "burst",
                      "1600", "limit", "4mb"}),
                  "");
        auto batch = pipelined(c.async(), "big", 24, 20s);
        EXPECT_EQ(batch->never(), 0u);
        EXPECT_EQ(batch->twice(), 0u);
        EXPECT_EQ(batch->snapshot(), only(errc::timeout, 24));

        // Unshaped again: the client reconnects by itself and the big value comes whole.
        ASSERT_EQ(tc({"qdisc", "del", "dev", "lo", "root"}), "");
        EXPECT_TRUE(recovers(c, "big", big, 15s));
        EXPECT_EQ(small_requests(c, 20, "after"), 0);
        EXPECT_EQ(c.async().outstanding(), 0u);
    });
}

TEST_F(SlowNetwork, PacketLossIsRiddenOutAndABlackholeTimesOut) {
    if (!folsom::test::have_program("nft")) GTEST_SKIP() << "`nft` (nftables) is not installed";
    in_private_network([] {
        folsom::test::MemcachedServer server;
        // Generous: each retransmission of a lost segment waits longer (200 ms, 400 ms, ...);
        // four losses of one segment in a row (p = 0.02^4) would be needed to reach 3 s.
        folsom::BlockingClient c(options(server.address(), 5s));
        ASSERT_EQ(c.set("k", "v"), Status::stored);  // connected before the loss starts

        const std::string port = std::to_string(server.port());
        auto nft = [](std::vector<std::string> args) {
            args.insert(args.begin(), "nft");
            auto r = run_command(args);
            return r.exit_code == 0 ? std::string() : "nft failed: " + r.output;
        };
        ASSERT_EQ(nft({"add", "table", "inet", "folsom_test"}), "");
        ASSERT_EQ(nft({"add", "chain", "inet", "folsom_test", "out",
                       "{ type filter hook output priority 0; policy accept; }"}),
                  "");
        // 2% of the packets to and from the server, at random.
        for (const char* dir : {"sport", "dport"})
            ASSERT_EQ(nft({"add", "rule", "inet", "folsom_test", "out", "tcp", dir, port, "numgen",
                           "random", "mod", "100", "<", "2", "counter", "drop"}),
                      "");
        EXPECT_EQ(small_requests(c, 300, "lossy"), 0);
        auto lossy = pipelined(c.async(), "k", 200, 60s);
        EXPECT_EQ(lossy->never(), 0u);
        EXPECT_EQ(lossy->twice(), 0u);
        EXPECT_EQ(lossy->snapshot(), (std::map<std::string, int>{{"ok", 200}}));
        // The loss was real: about 2% of well over a thousand packets.
        auto listing = run_command({"nft", "list", "chain", "inet", "folsom_test", "out"});
        long long dropped = 0;
        const std::regex counter("counter packets ([0-9]+)");
        for (std::sregex_iterator it(listing.output.begin(), listing.output.end(), counter), end;
             it != end; ++it)
            dropped += std::stoll((*it)[1]);
        EXPECT_GT(dropped, 0) << listing.output;

        // A blackhole: nothing comes back from the server. Every request in flight times out.
        ASSERT_EQ(nft({"flush", "chain", "inet", "folsom_test", "out"}), "");
        ASSERT_EQ(nft({"add", "rule", "inet", "folsom_test", "out", "tcp", "sport", port, "drop"}),
                  "");
        auto lost = pipelined(c.async(), "k", 40, 30s);
        EXPECT_EQ(lost->never(), 0u);
        EXPECT_EQ(lost->twice(), 0u);
        EXPECT_EQ(lost->snapshot(), only(errc::timeout, 40));

        ASSERT_EQ(nft({"delete", "table", "inet", "folsom_test"}), "");
        EXPECT_TRUE(recovers(c, "k", "v", 20s));
        EXPECT_EQ(small_requests(c, 20, "after"), 0);
        EXPECT_EQ(c.async().outstanding(), 0u);
    });
}

TEST_F(SlowNetwork, LatencyBelowTheTimeoutIsToleratedAndAboveItTimesOut) {
    in_private_network([] {
        folsom::test::MemcachedServer server;
        folsom::test::DelayProxy proxy(server.port());
        folsom::BlockingClient c(options(proxy.address(), 1s));
        ASSERT_EQ(c.set("k", "v"), Status::stored);

        // 150 ms each way: a round trip of 300 ms, under the 1 s request timeout.
        proxy.set_delay(150ms);
        const auto start = std::chrono::steady_clock::now();
        auto v = c.get("k");
        EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms) << "no latency was added";
        ASSERT_TRUE(v);
        EXPECT_EQ(v->data, "v");
        EXPECT_EQ(small_requests(c, 10, "slow"), 0);
        auto slow = pipelined(c.async(), "k", 200, 30s);
        EXPECT_EQ(slow->never(), 0u);
        EXPECT_EQ(slow->twice(), 0u);
        EXPECT_EQ(slow->snapshot(), (std::map<std::string, int>{{"ok", 200}}));

        // 2 s each way: no reply can come within the timeout.
        proxy.set_delay(2s);
        auto late = pipelined(c.async(), "k", 40, 30s);
        EXPECT_EQ(late->never(), 0u);
        EXPECT_EQ(late->twice(), 0u);
        EXPECT_EQ(late->snapshot(), only(errc::timeout, 40));

        proxy.set_delay(0ms);
        EXPECT_TRUE(recovers(c, "k", "v", 15s));
        EXPECT_EQ(small_requests(c, 20, "after"), 0);
        EXPECT_EQ(c.async().outstanding(), 0u);
        EXPECT_GE(proxy.accepted(), 2u);  // the timeout closed the first connection
    });
}

}  // namespace
