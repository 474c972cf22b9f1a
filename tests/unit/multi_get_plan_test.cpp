// The bookkeeping of a multi-get (detail::MultiGetPlan): how keys are grouped into parts per
// server, how replies are matched back to the caller's keys, and that a usual multi-get plans
// without touching the heap.
#include "folsom/detail/collectors.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <string>
#include <string_view>
#include <vector>

namespace {

using folsom::detail::MultiGetPlan;
using folsom::detail::Operation;

/// Counts what reaches the default memory resource (the plan's upstream) while installed.
class CountingResource : public std::pmr::memory_resource {
  public:
    CountingResource() : previous_(std::pmr::set_default_resource(this)) {}
    ~CountingResource() override { std::pmr::set_default_resource(previous_); }
    std::size_t allocations = 0;

  private:
    void* do_allocate(std::size_t bytes, std::size_t align) override {
        ++allocations;
        return previous_->allocate(bytes, align);
    }
    void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
        previous_->deallocate(p, bytes, align);
    }
    bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override {
        return this == &o;
    }
    std::pmr::memory_resource* previous_;
};

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

TEST(MultiGetPlan, AHundredKeyPlanNeedsNoHeap) {
    const Keys keys(100, 8);  // "key:N" + 8 bytes: 13-15 bytes each
    CountingResource counting;
    {
        MultiGetPlan plan(keys.views);
        auto server_of = plan.scratch(keys.views.size());
        for (std::size_t i = 0; i < server_of.size(); ++i)
            server_of[i] = static_cast<std::uint32_t>(i % 3);
        EXPECT_EQ(plan.plan(server_of, 16 * 1024), 3u);
    }
    EXPECT_EQ(counting.allocations, 0u);
}

TEST(MultiGetPlan, ALargePlanGrowsIntoTheHeap) {
    const Keys keys(10000, 20);
    CountingResource counting;
    {
        MultiGetPlan plan(keys.views);
        auto server_of = plan.scratch(keys.views.size());
        EXPECT_GT(plan.plan(server_of, 16 * 1024), 1u);  // 16 KiB parts
        EXPECT_EQ(plan.keys().size(), keys.views.size());
        EXPECT_EQ(plan.keys().back(), keys.views.back());
    }
    EXPECT_GT(counting.allocations, 0u);
}

}  // namespace
