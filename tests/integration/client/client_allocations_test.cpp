// Heap allocations per request, end to end against a real memcached: every operator new of
// this executable is counted. Once warm, a get_view makes none and an owning get only its
// Value, whether requests come one at a time from completions on the I/O thread or a
// thousand at once from another thread than the one that completes them; and a
// get_multi_view made on one thread and completed on another makes none either, and an owning
// get_multi at most two a call (its table of values and the one buffer of their bytes) at any
// key count: one, the table, when the buffer is of a size the request memory recycles.
#include "folsom/blocking_client.hpp"
#include "folsom/client.hpp"
#include "folsom/quiet_client.hpp"

#include "support/counting_operator_new.hpp"
#include "support/delay_proxy.hpp"
#include "support/memcached_server.hpp"

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <future>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

using folsom::test::heap_allocations;

class ClientAllocations : public ::testing::Test {
  protected:
    static constexpr int keys = 1000;
    static constexpr int rounds = 5;
    /// What the measured bursts may allocate that is not a request's: each burst's own three
    /// (its promise, the promise's state, the post to the issuer thread), and a few incidental
    /// ones that do not grow with the requests (a health-timer tick, a buffer or queue reaching
    /// a new peak), which a slow run (ASan on a loaded CI host) met 4 times in one of six runs.
    static constexpr std::size_t burst_overhead = 3u * rounds + 10;
    static constexpr std::size_t keys_per_multi_get = 50;

    ClientAllocations() {
        folsom::BlockingClient setter(options());
        for (int i = 0; i < keys; ++i)
            EXPECT_EQ(setter.set(key(i), std::string(64, 'v'), 0s), folsom::Status::stored);
        names_.reserve(keys);
        for (int i = 0; i < keys; ++i)
            names_.push_back(key(i));
        for (const auto& n : names_)
            views_.push_back(n);
    }

    folsom::Options options() const {
        folsom::Options o;
        o.servers = {server_.address()};
        o.max_outstanding_requests = 2 * keys;
        o.protocol = protocol_;
        o.binary_keys = binary_keys_;
        return o;
    }
    static std::string key(int i) { return "alloc:" + std::to_string(i); }

    /// One burst: `issue(finish)` makes requests for every key on the issuer thread while the
    /// client's io_context is not running (so all of them are in flight at once), each key's
    /// answer calling finish(hit); they are then completed, and their memory freed, on this
    /// thread by running it. Returns the hits.
    template <class Issue>
    int burst(asio::io_context& io, Issue issue) {
        int done = 0, hits = 0;
        auto finish = [&](bool hit) {
            hits += hit ? 1 : 0;
            if (++done == keys) io.stop();
        };
        std::promise<void> issued;
        asio::post(issuer_, [&] {
            issue(finish);
            issued.set_value();
        });
        issued.get_future().wait();
        io.restart();
        io.run_for(10s);
        EXPECT_EQ(done, keys);
        return hits;
    }

    /// A get_view (owning: a get) of every key.
    int get_burst(asio::io_context& io, folsom::Client& client, bool owning) {
        return burst(io, [&](auto& finish) {
            for (const auto& k : names_) {
                if (owning)
                    client.get(k, [&finish](std::error_code ec, std::optional<folsom::Value> v) {
                        finish(!ec && v && v->data.size() == 64);
                    });
                else
                    client.get_view(k, [&finish](std::error_code ec, const folsom::ValueView* v) {
                        finish(!ec && v && v->data.size() == 64);
                    });
            }
        });
    }

    /// Every key through get_multi_view, 50 keys a call (20 multi-gets in flight).
    int multi_get_burst(asio::io_context& io, folsom::Client& client) {
        return burst(io, [&](auto& finish) {
            for (std::size_t first = 0; first < names_.size(); first += keys_per_multi_get) {
                client.get_multi_view(
                    std::span<const std::string_view>(views_.data() + first, keys_per_multi_get),
                    [&finish](std::size_t, const folsom::ValueView& v) {
                        finish(v.data.size() == 64);
                    },
                    [](std::error_code ec, folsom::MultiGetViewResult r) {
                        EXPECT_FALSE(ec);
                        EXPECT_EQ(r.hits, keys_per_multi_get);
                    });
            }
        });
    }

    /// Every key through the owning get_multi, `per_call` keys a call (all calls in flight).
    int owning_multi_get_burst(asio::io_context& io, folsom::Client& client, std::size_t per_call) {
        return burst(io, [&, per_call](auto& finish) {
            for (std::size_t first = 0; first < names_.size(); first += per_call) {
                client.get_multi(
                    std::span<const std::string_view>(views_.data() + first, per_call),
                    [this, &finish, per_call](std::error_code ec, folsom::MultiGetResult r) {
                        EXPECT_FALSE(ec);
                        ASSERT_EQ(r.values.size(), per_call);
                        for (const auto& v : r.values)
                            finish(v && v->data == value_);
                    });
            }
        });
    }

    /// A quiet set of every key (the value a view: copied into the write buffer).
    int quiet_set_burst(asio::io_context& io, folsom::Client& client) {
        folsom::QuietClient q = client.quiet();
        return burst(io, [&, q](auto& finish) mutable {
            for (const auto& k : names_)
                q.set(k, folsom::Bytes(std::string_view(value_)), 0s,
                      [&finish](std::error_code ec, folsom::Status s) {
                          finish(!ec && (s == folsom::Status::stored || s == folsom::Status::sent));
                      });
        });
    }

    /// Every key through set_multi, 50 keys a call (20 in flight).
    int set_multi_burst(asio::io_context& io, folsom::Client& client) {
        if (items_.empty())
            for (const auto& k : names_)
                items_.push_back({k, value_});
        return burst(io, [&](auto& finish) {
            for (std::size_t first = 0; first < items_.size(); first += keys_per_multi_get) {
                client.set_multi(
                    std::span<const folsom::KeyValue>(items_.data() + first, keys_per_multi_get),
                    0s, [&finish](std::error_code ec, folsom::MultiWriteResult r) {
                        EXPECT_FALSE(ec);
                        for (const auto& one : r.results)
                            finish(!one.error && one.status == folsom::Status::stored);
                    });
            }
        });
    }

    /// Heap allocations of `rounds` bursts, after ten that warm the caches: enough blocks in
    /// circulation for a thousand in flight, with what each thread keeps for itself (between
    /// one and two batches per size) on top.
    template <class Burst>
    std::size_t heap_allocations_of_bursts(Burst burst_once) {
        asio::io_context io;
        auto client = folsom::Client::connect(io, options());
        for (int warm = 0; warm < 10; ++warm)
            EXPECT_EQ(burst_once(io, client), keys);
        const std::size_t before = heap_allocations();
        for (int round = 0; round < rounds; ++round)
            EXPECT_EQ(burst_once(io, client), keys);
        const std::size_t made = heap_allocations() - before;
        client.shutdown();
        return made;
    }
    std::size_t heap_allocations_of_get_bursts(bool owning) {
        return heap_allocations_of_bursts([&](asio::io_context& io, folsom::Client& client) {
            return get_burst(io, client, owning);
        });
    }

    /// The thread that makes the requests (one thread throughout, as an application's would
    /// be: its cache of request memory lives as long as it does).
    asio::io_context issuer_;
    asio::executor_work_guard<asio::io_context::executor_type> issuer_work_ =
        asio::make_work_guard(issuer_);
    std::thread issuer_thread_{[this] { issuer_.run(); }};

    ~ClientAllocations() override {
        issuer_work_.reset();
        issuer_thread_.join();
    }

    folsom::Protocol protocol_ = folsom::Protocol::ascii;
    bool binary_keys_ = false;
    const std::string value_ = std::string(64, 'v');
    std::vector<folsom::KeyValue> items_;
    folsom::test::MemcachedServer server_;
    std::vector<std::string> names_;
    std::vector<std::string_view> views_;
};

TEST_F(ClientAllocations, ViewGetsMadeOnOneThreadAndFreedOnAnotherAllocateNothingOnceWarm) {
    // Before the request memory every get took two from the heap (its operation and its retry
    // shim): 10,000 in five bursts. Now none: what is left is the bursts' own.
    EXPECT_LE(heap_allocations_of_get_bursts(false), burst_overhead);
}

TEST_F(ClientAllocations, OwningGetsMadeOnOneThreadAndFreedOnAnotherAllocateOnlyTheirValues) {
    // One per get: its Value's bytes (before the request memory, three).
    EXPECT_LE(heap_allocations_of_get_bursts(true), std::size_t{rounds} * keys + burst_overhead);
}

TEST_F(ClientAllocations, ViewMultiGetsMadeOnOneThreadAndFreedOnAnotherAllocateNothingOnceWarm) {
    // Each multi-get's bookkeeping (its keys, their parts) lives in an 8 KiB block of the
    // request memory. Before, those blocks were cached per thread only, so a multi-get made on
    // one thread and freed on another took its block from the heap: 20 per burst, 115 in all.
    // Now only the bursts' own.
    EXPECT_LE(heap_allocations_of_bursts([&](asio::io_context& io, folsom::Client& client) {
                  return multi_get_burst(io, client);
              }),
              burst_overhead);
}

TEST_F(ClientAllocations, ViewMultiGetsWithBinaryKeysAllocateNothingOnceWarm) {
    // With Options::binary_keys a multi-get goes as one mg per key, and the key the server
    // returns in base64 for an item stored with one is decoded on the stack: still nothing
    // from the heap but the bursts' own.
    protocol_ = folsom::Protocol::meta;
    binary_keys_ = true;
    // Keys no text protocol can carry (a NUL and a newline in each), so that every part goes
    // as mg per key rather than the classic line a multi-get of text keys keeps.
    for (auto& n : names_)
        n.insert(0, std::string("\0\n", 2));
    views_.assign(names_.begin(), names_.end());
    {
        folsom::BlockingClient setter(options());  // stored with b: returned in base64
        for (const auto& k : names_)
            ASSERT_EQ(setter.set(k, value_, 0s), folsom::Status::stored);
    }
    EXPECT_LE(heap_allocations_of_bursts([&](asio::io_context& io, folsom::Client& client) {
                  return multi_get_burst(io, client);
              }),
              burst_overhead);
}

TEST_F(ClientAllocations, OwningMultiGetsOfSmallValuesAllocateOnlyTheirTableOfValues) {
    // An owning multi-get keeps its hits in one buffer sized from the replies, beside its
    // table of values: not one allocation per hit (before: 51 a call of 50 keys, 5,100 in
    // these five bursts). 50 values of 64 bytes fit an 8 KiB block of the request memory,
    // recycled once warm: one allocation a call, the table (two before it was recycled).
    // Over every protocol: their drivers deliver hits alike.
    for (auto p : {folsom::Protocol::ascii, folsom::Protocol::binary, folsom::Protocol::meta}) {
        protocol_ = p;
        const std::size_t made =
            heap_allocations_of_bursts([&](asio::io_context& io, folsom::Client& client) {
                return owning_multi_get_burst(io, client, keys_per_multi_get);
            });
        const std::size_t calls = std::size_t{rounds} * (keys / keys_per_multi_get);
        EXPECT_LE(made, calls + burst_overhead) << static_cast<int>(p);
    }
}

TEST_F(ClientAllocations, AThousandKeyOwningMultiGetAllocatesAFixedHandfulNotAThousand) {
    // One call of all 1,000 keys a burst: its two, and the bursts' own (measured: 25 in
    // five bursts); before, 1,001 a call (5,025).
    const std::size_t made =
        heap_allocations_of_bursts([&](asio::io_context& io, folsom::Client& client) {
            return owning_multi_get_burst(io, client, keys);
        });
    EXPECT_LE(made, std::size_t{rounds} * 2 + burst_overhead);
}

TEST_F(ClientAllocations, QuietSetsAllocateNothingPerRequestOverEveryProtocol) {
    for (auto p : {folsom::Protocol::meta, folsom::Protocol::binary, folsom::Protocol::ascii}) {
        protocol_ = p;
        const std::size_t made =
            heap_allocations_of_bursts([&](asio::io_context& io, folsom::Client& client) {
                return quiet_set_burst(io, client);
            });
        // The bursts' own overhead, and a copy of the quiet view's client handle per burst.
        EXPECT_LE(made, burst_overhead) << static_cast<int>(p);
    }
}

TEST_F(ClientAllocations, SetMultiAllocatesOnlyItsResultPerCallNotPerKey) {
    for (auto p : {folsom::Protocol::meta, folsom::Protocol::binary, folsom::Protocol::ascii}) {
        protocol_ = p;
        const std::size_t made =
            heap_allocations_of_bursts([&](asio::io_context& io, folsom::Client& client) {
                return set_multi_burst(io, client);
            });
        // One result vector per call: 20 calls of 50 keys a burst.
        const std::size_t calls = std::size_t{rounds} * (keys / keys_per_multi_get);
        EXPECT_LE(made, calls + burst_overhead) << static_cast<int>(p);
    }
}

TEST_F(ClientAllocations, APipelineRunFromCompletionsAllocatesNothingPerViewGet) {
    // A thousand in flight on the I/O thread, each completion issuing the next request.
    asio::io_context io;
    auto client = folsom::Client::connect(io, options());
    constexpr int total = 20000;
    int issued = 0, done = 0, hits = 0;
    std::size_t before = 0;
    std::function<void()> issue = [&] {
        const int i = issued++;
        client.get_view(names_[i % keys], [&](std::error_code ec, const folsom::ValueView* v) {
            if (!ec && v) ++hits;
            if (++done == 5 * keys) before = heap_allocations();  // warm from here on
            if (issued < total) issue();
            if (done == total) io.stop();
        });
    };
    for (int i = 0; i < keys; ++i)
        issue();
    io.run_for(20s);
    ASSERT_EQ(done, total);
    EXPECT_EQ(hits, total);
    // Nothing per request: what may remain is the connection's queues growing to a new peak
    // (doubling, so a handful at most), never one per get.
    EXPECT_LE(heap_allocations() - before, 4u);
    client.shutdown();
}

// A caller-driven BlockingClient behind a proxy that delays each reply by a millisecond: every
// get writes its request on the calling thread, finds no reply in the call, and arms the
// connection's read there, outside the io_context's run, where Asio's own recycling of
// operation memory does not reach (it was one malloc per get). Once warm, a get allocates
// only its Value's bytes, all of it on the calling thread (the proxy's thread allocates on its
// own, and is not counted).
TEST_F(ClientAllocations, CallerDrivenBlockingGetsThatWaitForTheirReplyAllocateOnlyTheirValues) {
    folsom::test::DelayProxy proxy(server_.port());
    proxy.set_delay(1ms);
    folsom::Options o = options();
    o.servers = {proxy.address()};
    folsom::BlockingClient c(o, folsom::BlockingClient::Driver::caller);
    for (int i = 0; i < 20; ++i)  // warm
        ASSERT_TRUE(c.get(names_[static_cast<std::size_t>(i)]));
    constexpr std::size_t gets = 200;
    const std::size_t before = folsom::test::heap_allocations_on_this_thread();
    for (std::size_t i = 0; i < gets; ++i) {
        const auto v = c.get(names_[i % keys]);
        ASSERT_TRUE(v && v->data.size() == 64);
    }
    // One per get, its Value; a few more may come from a health-timer tick or a queue
    // reaching a new peak, never one more per get.
    EXPECT_LE(folsom::test::heap_allocations_on_this_thread() - before, gets + 10);
}

}  // namespace
