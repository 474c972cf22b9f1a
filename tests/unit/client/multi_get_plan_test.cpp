// The bookkeeping of a multi-get (detail::MultiGetPlan): how keys are grouped into parts per
// server, how replies are matched back to the caller's keys, and that a usual multi-get plans
// without touching the heap.
#include "folsom/detail/collectors.hpp"
#include "folsom/error.hpp"

#include "support/counting_operator_new.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

// Every heap allocation is counted (support/counting_operator_new.hpp), so that a test can tell
// whether planning touched the heap at all, whatever container or memory resource would have
// done it. On this thread only: the tests' own threads allocate as they like.
std::size_t heap_allocations() {
    return folsom::test::heap_allocations_on_this_thread();
}

using folsom::detail::MultiGetPlan;
using folsom::detail::Operation;

struct Keys {
    explicit Keys(std::size_t n, std::size_t pad = 0) {
        for (std::size_t i = 0; i < n; ++i)
            owned.push_back("key:" + std::to_string(i) + std::string(pad, 'p'));
        for (const auto& k : owned)
            views.push_back(k);
    }
    std::vector<std::string> owned;
    std::vector<std::string_view> views;
};

/// Plans `keys` with key i on server `server_of(i)`; checks that every key is in exactly one
/// part, on its server, in the caller's order within the part, and that each part's replies
/// (by key, in order, as ASCII servers send them) lead back to the key.
template <class ServerOf>
void plan_and_check_by(const Keys& keys, std::size_t max_part_bytes, ServerOf server_of_key) {
    MultiGetPlan plan(keys.views);
    auto server_of = plan.scratch(keys.views.size());
    std::vector<bool> used;
    for (std::size_t i = 0; i < server_of.size(); ++i) {
        server_of[i] = server_of_key(i);
        if (used.size() <= server_of[i]) used.resize(server_of[i] + 1);
        used[server_of[i]] = true;
    }
    const std::uint32_t parts = plan.plan(server_of, max_part_bytes);
    ASSERT_GE(parts, static_cast<std::uint32_t>(std::count(used.begin(), used.end(), true)));
    std::vector<int> seen(keys.views.size(), 0);
    for (std::uint32_t p = 0; p < parts; ++p) {
        std::size_t last = 0;
        bool first = true;
        std::size_t bytes = 0;
        for (auto k : plan.part_keys(p)) {
            const std::uint32_t i = plan.locate(p, Operation::unknown_position, k);
            ASSERT_NE(i, MultiGetPlan::no_key);
            EXPECT_EQ(keys.views[i], k);
            EXPECT_EQ(server_of_key(i), plan.part_server(p));
            EXPECT_TRUE(first || i > last) << "caller's order within a part";
            first = false;
            last = i;
            ++seen[i];
            bytes += k.size() + 1;
        }
        EXPECT_TRUE(plan.part_keys(p).size() == 1 || bytes <= max_part_bytes)
            << "part " << p << " holds " << bytes << " bytes of keys";
        EXPECT_EQ(plan.locate(p, Operation::unknown_position, "never-asked"), MultiGetPlan::no_key);
    }
    for (int s : seen)
        EXPECT_EQ(s, 1);
}

/// Key i on server i % servers: every server's keys interleaved.
void plan_and_check(const Keys& keys, std::uint32_t servers, std::size_t max_part_bytes) {
    plan_and_check_by(keys, max_part_bytes,
                      [servers](std::size_t i) { return static_cast<std::uint32_t>(i % servers); });
}

/// Plans `plan`'s keys with key i on server i % servers; returns the number of parts.
std::uint32_t plan_interleaved(MultiGetPlan& plan, std::uint32_t servers,
                               std::size_t max_part_bytes) {
    auto server_of = plan.scratch(plan.keys().size());
    for (std::size_t i = 0; i < server_of.size(); ++i)
        server_of[i] = static_cast<std::uint32_t>(i % servers);
    return plan.plan(server_of, max_part_bytes);
}

TEST(MultiGetPlan, GroupsKeysByServerAndMatchesRepliesBack) {
    plan_and_check(Keys(1), 1, 16 * 1024);
    plan_and_check(Keys(16), 3, 16 * 1024);
    plan_and_check(Keys(100), 3, 16 * 1024);
    plan_and_check(Keys(100), 2, 64);  // many small parts per server
    plan_and_check(Keys(10000, 20), 5, 16 * 1024);
    plan_and_check(Keys(0), 1, 16 * 1024);
}

TEST(MultiGetPlan, KeysAlreadyGroupedByServerArePlannedInPlace) {
    // One server, or keys that come sorted by server: the parts are runs of the caller's keys.
    plan_and_check(Keys(100), 1, 16 * 1024);
    plan_and_check(Keys(100), 1, 64);  // one server cut into many parts
    plan_and_check(Keys(10000, 20), 1, 16 * 1024);
    plan_and_check_by(Keys(100), 16 * 1024, [](std::size_t i) { return i < 40 ? 0u : 2u; });
    plan_and_check_by(Keys(100), 64,
                      [](std::size_t i) { return static_cast<std::uint32_t>(i / 10); });
    // Sorted except for the last key.
    plan_and_check_by(Keys(100), 16 * 1024, [](std::size_t i) { return i == 99 ? 0u : 1u; });
}

TEST(MultiGetPlan, RepliesInAnotherOrderStillFindTheirKeys) {
    // A proxy may answer a part's keys in any order; a key it was not asked for matches nothing
    // and does not lose the place of the others.
    for (std::uint32_t servers : {1u, 2u}) {
        const Keys keys(30);
        MultiGetPlan plan(keys.views);
        const std::uint32_t parts = plan_interleaved(plan, servers, 16 * 1024);
        ASSERT_EQ(parts, servers);
        for (std::uint32_t p = 0; p < parts; ++p) {
            const auto part = plan.part_keys(p);
            std::vector<std::size_t> order;  // 2, 0, 1, 5, 3, 4, ...: each triple rotated
            for (std::size_t t = 0; t + 3 <= part.size(); t += 3)
                order.insert(order.end(), {t + 2, t, t + 1});
            for (std::size_t j : order) {
                EXPECT_EQ(plan.locate(p, Operation::unknown_position, "stranger"),
                          MultiGetPlan::no_key);
                const std::uint32_t i = plan.locate(p, Operation::unknown_position, part[j]);
                ASSERT_NE(i, MultiGetPlan::no_key);
                EXPECT_EQ(keys.views[i], part[j]);
            }
            // A key asked for by another part is not this part's.
            if (parts > 1) {
                EXPECT_EQ(
                    plan.locate(p, Operation::unknown_position, plan.part_keys((p + 1) % parts)[0]),
                    MultiGetPlan::no_key);
            }
        }
    }
}

TEST(MultiGetPlan, KnownPositionsAndKeyErrorsLeadToTheCallersKeys) {
    // Binary and meta replies carry their position in the part; a failed part's error goes to
    // exactly its keys, whether or not the plan had to regroup them.
    for (std::uint32_t servers : {1u, 3u}) {
        const Keys keys(12);
        MultiGetPlan plan(keys.views);
        const std::uint32_t parts = plan_interleaved(plan, servers, 16);  // two keys per part
        ASSERT_GT(parts, servers);
        for (std::uint32_t p = 0; p < parts; ++p) {
            const auto part = plan.part_keys(p);
            for (std::uint32_t pos = 0; pos < part.size(); ++pos)
                EXPECT_EQ(keys.views[plan.locate(p, pos, "ignored")], part[pos]);
            EXPECT_EQ(plan.locate(p, static_cast<std::uint32_t>(part.size()), "x"),
                      MultiGetPlan::no_key);
        }
        const std::error_code failed = make_error_code(folsom::errc::timeout);
        folsom::detail::Completion c;
        c.ec = failed;
        plan.on_complete(1, c);
        for (std::uint32_t p = 0; p < parts; ++p)
            if (p != 1) plan.on_complete(p, folsom::detail::Completion{});
        std::error_code ec;
        const auto errors = plan.key_errors(ec);
        EXPECT_FALSE(ec) << "only one part failed";
        ASSERT_EQ(errors.size(), keys.views.size());
        std::size_t failed_keys = 0;
        for (std::size_t i = 0; i < errors.size(); ++i) {
            bool in_part_1 = false;
            for (auto k : plan.part_keys(1))
                in_part_1 = in_part_1 || k == keys.views[i];
            EXPECT_EQ(errors[i], in_part_1 ? failed : std::error_code{}) << "key " << i;
            failed_keys += in_part_1 ? 1 : 0;
        }
        EXPECT_EQ(failed_keys, plan.part_keys(1).size());
    }
}

/// Plans 100 keys over 3 servers; returns the number of parts.
std::uint32_t plan_hundred(const Keys& keys) {
    MultiGetPlan plan(keys.views);
    return plan_interleaved(plan, 3, 16 * 1024);
}

TEST(MultiGetPlan, AHundredKeyPlanNeedsNoHeapInSteadyState) {
    const Keys keys(100, 8);  // "key:N" + 8 bytes: 13-15 bytes each
    // The first plan on a thread takes its block from the heap (unless an earlier test in
    // this process left one in the request memory), and the first in the process makes the
    // request memory's depot; later ones reuse the block.
    const std::size_t first = heap_allocations();
    ASSERT_EQ(plan_hundred(keys), 3u);
    EXPECT_LE(heap_allocations() - first, 2u);
    const std::size_t before = heap_allocations();
    std::uint32_t parts = 0;
    for (int i = 0; i < 100; ++i)
        parts += plan_hundred(keys);
    EXPECT_EQ(heap_allocations() - before, 0u);
    EXPECT_EQ(parts, 300u);
}

TEST(MultiGetPlan, PlanBlocksAreRecycledWithinBounds) {
    // Many plans alive at once on one thread: their 8 KiB blocks come back through the request
    // memory, which keeps at most 8 per thread and 64 in the depot; the rest go to the heap.
    const Keys keys(10);
    std::vector<std::unique_ptr<MultiGetPlan>> alive;
    alive.reserve(200);
    for (int i = 0; i < 200; ++i)
        alive.push_back(std::make_unique<MultiGetPlan>(keys.views));
    alive.clear();
    const std::size_t before = heap_allocations();
    for (int i = 0; i < 200; ++i)
        alive.push_back(std::make_unique<MultiGetPlan>(keys.views));
    // 200 plan objects, and the blocks beyond the 64 to 72 that were kept.
    const std::size_t blocks_from_heap = heap_allocations() - before - 200;
    EXPECT_GE(blocks_from_heap, 200u - 72);
    EXPECT_LE(blocks_from_heap, 200u - 64);
}

TEST(MultiGetPlan, APlanMadeOnOneThreadAndFreedOnAnotherReachesTheHeapOnlyWhileWarming) {
    // A multi-get made on a caller's thread and completed on the I/O thread.
    const Keys keys(100, 8);
    auto round = [&] {
        std::vector<std::unique_ptr<MultiGetPlan>> plans;
        plans.reserve(40);
        for (int i = 0; i < 40; ++i) {
            plans.push_back(std::make_unique<MultiGetPlan>(keys.views));
            ASSERT_EQ(plan_interleaved(*plans.back(), 3, 16 * 1024), 3u);
        }
        std::thread([&] { plans.clear(); }).join();
    };
    round();
    round();
    const std::size_t before = heap_allocations();
    for (int i = 0; i < 5; ++i)
        round();
    // Per round: the vector, the thread, the 40 plan objects; not the 40 blocks.
    EXPECT_LE(heap_allocations() - before, 5u * (40 + 8));
}

TEST(MultiGetPlan, ALargePlanGrowsIntoTheHeap) {
    const Keys keys(10000, 20);
    const std::size_t before = heap_allocations();
    {
        MultiGetPlan plan(keys.views);
        auto server_of = plan.scratch(keys.views.size());
        EXPECT_GT(plan.plan(server_of, 16 * 1024), 1u);  // 16 KiB parts
        EXPECT_EQ(plan.keys().size(), keys.views.size());
        EXPECT_EQ(plan.keys().back(), keys.views.back());
    }
    EXPECT_GT(heap_allocations() - before, 0u);
}

// ---- the owning collector: every hit's bytes in one shared buffer -------------------------

using folsom::detail::MultiGetCollector;

/// The caller's index of a key of Keys ("key:<i>" and its padding).
std::size_t index_of(std::string_view key) {
    return std::stoul(std::string(key.substr(4)));
}

/// A collector over `keys` on `servers` servers (key i on server i % servers) fed, part after
/// part, a hit for every `hit_every`-th key with value_of(i) as its bytes, each copied from a
/// read buffer that is overwritten after the call (as a connection's is).
folsom::MultiGetResult collect(const Keys& keys, std::uint32_t servers,
                               const std::vector<std::string>& values, std::size_t hit_every = 1,
                               std::size_t max_part_bytes = 16 * 1024) {
    static thread_local std::string read_buffer(4096, ' ');
    MultiGetCollector c(keys.views);
    auto server_of = c.scratch(keys.views.size());
    for (std::size_t i = 0; i < server_of.size(); ++i)
        server_of[i] = static_cast<std::uint32_t>(i % servers);
    const std::uint32_t parts = c.plan(server_of, max_part_bytes);
    for (std::uint32_t p = 0; p < parts; ++p) {
        for (std::string_view k : c.part_keys(p)) {
            const std::size_t i = index_of(k);
            if (i % hit_every != 0) continue;
            std::copy(values[i].begin(), values[i].end(), read_buffer.begin());
            folsom::ValueView v{k, std::string_view(read_buffer).substr(0, values[i].size()),
                                static_cast<std::uint32_t>(i), 1000 + i};
            c.on_value(p, Operation::unknown_position, v);
            c.on_value(p, Operation::unknown_position, v);  // a retried part: the first wins
            std::fill_n(read_buffer.begin(), values[i].size(), '#');
        }
        c.on_complete(p, folsom::detail::Completion{});
    }
    return std::get<1>(c.result());
}

std::vector<std::string> values_of(std::size_t n, std::string (*value_of)(std::size_t)) {
    std::vector<std::string> v;
    for (std::size_t i = 0; i < n; ++i)
        v.push_back(value_of(i));
    return v;
}

void expect_values(const folsom::MultiGetResult& r, const Keys& keys,
                   std::string (*value_of)(std::size_t), std::size_t hit_every = 1) {
    ASSERT_EQ(r.values.size(), keys.views.size());
    EXPECT_TRUE(r.complete());
    for (std::size_t i = 0; i < keys.views.size(); ++i) {
        if (i % hit_every != 0) {
            EXPECT_FALSE(r.values[i]) << i;
            continue;
        }
        ASSERT_TRUE(r.values[i]) << i;
        EXPECT_EQ(r.values[i]->data, value_of(i)) << i;
        EXPECT_EQ(r.values[i]->flags, i);
        EXPECT_EQ(r.values[i]->cas, 1000 + i);
    }
}

std::string same_size(std::size_t i) {
    return "value " + std::string(40 - std::to_string(i).size(), '.') + std::to_string(i);
}
std::string growing(std::size_t i) {
    return std::string(i % 300, static_cast<char>('a' + i % 26));  // 0 to 299 bytes
}

TEST(MultiGetCollector, HitsOfOneSizeTakeTwoAllocationsWhateverTheKeyCount) {
    for (std::size_t n : {1u, 16u, 100u, 1000u, 5000u}) {
        const Keys keys(n);
        const auto values = values_of(n, same_size);
        collect(keys, 1, values);  // warm the request memory's plan blocks
        // What the plan alone takes (a large one grows beyond its block), then the collector.
        std::size_t before = heap_allocations();
        {
            MultiGetPlan plan(keys.views);
            plan_interleaved(plan, 1, 16 * 1024);
        }
        const std::size_t plan_only = heap_allocations() - before;
        before = heap_allocations();
        folsom::MultiGetResult r = collect(keys, 1, values);
        // The table of values and the one buffer, beside the plan's: 1,001 before at 1,000.
        EXPECT_LE(heap_allocations() - before, plan_only + 2) << n;
        expect_values(r, keys, same_size);
    }
}

TEST(MultiGetCollector, HitsOfManySizesOnManyServersAndPartsAllArriveIntact) {
    const Keys keys(2000, 10);
    const auto values = values_of(2000, growing);
    for (std::uint32_t servers : {1u, 3u, 7u}) {
        for (std::size_t max_part : {std::size_t{16 * 1024}, std::size_t{300}}) {
            expect_values(collect(keys, servers, values, 1, max_part), keys, growing);
            expect_values(collect(keys, servers, values, 3, max_part), keys, growing, 3);
        }
    }
}

TEST(MultiGetCollector, TheValuesOutliveTheCollectorAndAreSharedByCopiesOfTheResult) {
    const Keys keys(100);
    folsom::MultiGetResult copy;
    std::optional<folsom::Value> taken;
    {
        folsom::MultiGetResult r = collect(keys, 3, values_of(100, growing));
        copy = r;  // shares the buffer
        folsom::MultiGetResult moved = std::move(r);
        EXPECT_EQ(moved.values[7]->data.data(), copy.values[7]->data.data());
        taken = moved.take(42);
    }
    expect_values(copy, keys, growing);
    ASSERT_TRUE(taken);
    EXPECT_EQ(*taken, (folsom::Value{growing(42), 42, 1042}));
    EXPECT_EQ(*copy.values[42], *taken);
    EXPECT_EQ(copy.to_map(keys.views).at("key:5").data, growing(5));
}

TEST(MultiGetCollector, NoHitsNoBufferAndAnUnfinishedCollectorFreesItsBlocks) {
    const Keys keys(50);
    folsom::MultiGetResult none = collect(keys, 2, values_of(50, growing), 1000000);
    ASSERT_EQ(none.values.size(), 50u);
    EXPECT_TRUE(none.values[0]);  // key 0 is the one hit
    for (std::size_t i = 1; i < 50; ++i)
        EXPECT_FALSE(none.values[i]);
    // Destroyed before result(): its blocks are freed with it (ASan/LSan would tell).
    MultiGetCollector c(keys.views);
    auto server_of = c.scratch(keys.views.size());
    c.plan(server_of, 16 * 1024);
    const std::string big(5000, 'x');
    c.on_value(0, 0, folsom::ValueView{keys.views[0], "small", 0, 0});
    c.on_value(0, 1, folsom::ValueView{keys.views[1], big, 0, 0});
}

}  // namespace
