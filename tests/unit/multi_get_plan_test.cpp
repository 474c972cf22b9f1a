// The bookkeeping of a multi-get (detail::MultiGetPlan): how keys are grouped into parts per
// server, how replies are matched back to the caller's keys, and that a usual multi-get plans
// without touching the heap.
#include "folsom/detail/collectors.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

// Every heap allocation of this executable is counted, so that a test can tell whether planning
// touched the heap at all, whatever container or memory resource would have done it.
namespace {
std::size_t& heap_allocations() {
    thread_local std::size_t n = 0;
    return n;
}
// Out of line, so that g++ does not see memory from operator new reach free() and warn
// (-Wmismatched-new-delete): here it must.
[[gnu::noinline]] void release(void* p) noexcept {
    std::free(p);
}
}  // namespace

void* operator new(std::size_t n) {
    ++heap_allocations();
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a) {
    ++heap_allocations();
    const auto align = static_cast<std::size_t>(a);
    if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
    release(p);
}
void operator delete(void* p, std::size_t) noexcept {
    release(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
    release(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    release(p);
}

namespace {

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

/// Plans `keys` over `servers` servers (key i on server i % servers); checks that every key
/// is in exactly one part, on its server, in the caller's order within the part, and that
/// each part's replies (by key, in order, as ASCII servers send them) lead back to the key.
void plan_and_check(const Keys& keys, std::uint32_t servers, std::size_t max_part_bytes) {
    MultiGetPlan plan(keys.views);
    auto server_of = plan.scratch(keys.views.size());
    for (std::size_t i = 0; i < server_of.size(); ++i)
        server_of[i] = static_cast<std::uint32_t>(i % servers);
    const std::uint32_t parts = plan.plan(server_of, max_part_bytes);
    ASSERT_GE(parts, keys.views.empty() ? 0u : servers);
    std::vector<int> seen(keys.views.size(), 0);
    for (std::uint32_t p = 0; p < parts; ++p) {
        std::size_t last = 0;
        bool first = true;
        for (auto k : plan.part_keys(p)) {
            const std::uint32_t i = plan.locate(p, Operation::unknown_position, k);
            ASSERT_NE(i, MultiGetPlan::no_key);
            EXPECT_EQ(keys.views[i], k);
            EXPECT_EQ(i % servers, plan.part_server(p));
            EXPECT_TRUE(first || i > last) << "caller's order within a part";
            first = false;
            last = i;
            ++seen[i];
        }
        EXPECT_EQ(plan.locate(p, Operation::unknown_position, "never-asked"), MultiGetPlan::no_key);
    }
    for (int s : seen)
        EXPECT_EQ(s, 1);
}

TEST(MultiGetPlan, GroupsKeysByServerAndMatchesRepliesBack) {
    plan_and_check(Keys(1), 1, 16 * 1024);
    plan_and_check(Keys(16), 3, 16 * 1024);
    plan_and_check(Keys(100), 3, 16 * 1024);
    plan_and_check(Keys(100), 2, 64);  // many small parts per server
    plan_and_check(Keys(10000, 20), 5, 16 * 1024);
    plan_and_check(Keys(0), 1, 16 * 1024);
}

/// Plans 100 keys over 3 servers; returns the number of parts.
std::uint32_t plan_hundred(const Keys& keys) {
    MultiGetPlan plan(keys.views);
    auto server_of = plan.scratch(keys.views.size());
    for (std::size_t i = 0; i < server_of.size(); ++i)
        server_of[i] = static_cast<std::uint32_t>(i % 3);
    return plan.plan(server_of, 16 * 1024);
}

TEST(MultiGetPlan, AHundredKeyPlanNeedsNoHeapInSteadyState) {
    const Keys keys(100, 8);  // "key:N" + 8 bytes: 13-15 bytes each
    // The first plan on a thread takes its block from the heap; later ones reuse it.
    const std::size_t first = heap_allocations();
    ASSERT_EQ(plan_hundred(keys), 3u);
    EXPECT_EQ(heap_allocations() - first, 1u);
    const std::size_t before = heap_allocations();
    std::uint32_t parts = 0;
    for (int i = 0; i < 100; ++i)
        parts += plan_hundred(keys);
    EXPECT_EQ(heap_allocations() - before, 0u);
    EXPECT_EQ(parts, 300u);
}

TEST(MultiGetPlan, ThePerThreadBlockCacheIsBounded) {
    // Many plans alive at once on one thread: each beyond the cache's few blocks is a heap
    // block, and every block goes back (to the cache or the heap) when its plan ends.
    const Keys keys(10);
    std::vector<std::unique_ptr<MultiGetPlan>> alive;
    for (int i = 0; i < 64; ++i)
        alive.push_back(std::make_unique<MultiGetPlan>(keys.views));
    alive.clear();
    const std::size_t before = heap_allocations();
    for (int i = 0; i < 64; ++i)
        alive.push_back(std::make_unique<MultiGetPlan>(keys.views));
    // 64 plans (each object on the heap) and 60 blocks beyond the 4 the cache kept.
    EXPECT_EQ(heap_allocations() - before, 64u + 60u);
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

}  // namespace
