// The per-thread cache of multi-get plan blocks (see MultiGetPlan in collectors.hpp).
//
// The request memory, which the operations themselves come from (request_memory.hpp), keeps
// only blocks of up to 1 KiB; a plan's tables for a 100-key multi-get need ~6 KiB. This cache
// is per thread and bounded: a block freed on another thread (a multi-get started on one
// thread and completed on the I/O thread) joins that thread's cache or, when it is full, goes
// back to the heap. Nothing grows without bound.
#include "folsom/detail/collectors.hpp"

#include <array>
#include <new>

namespace folsom::detail {
namespace {

struct PlanBlockCache {
    static constexpr std::size_t kept = 4;  // more multi-gets in flight per thread just malloc
    std::array<std::byte*, kept> blocks{};
    std::size_t count = 0;
    PlanBlockCache() = default;
    PlanBlockCache(const PlanBlockCache&) = delete;
    PlanBlockCache& operator=(const PlanBlockCache&) = delete;
    ~PlanBlockCache() {
        for (std::size_t i = 0; i < count; ++i)
            ::operator delete(blocks[i]);
        count = 0;
        alive = false;
    }
    // False once the thread's cache is gone (a plan freed later in the thread's exit, e.g. by
    // a static io_context's destructor on the main thread, goes straight back to the heap).
    bool alive = true;
};

thread_local PlanBlockCache cache;

}  // namespace

std::byte* take_plan_block() {
    if (cache.count > 0) return cache.blocks[--cache.count];
    return static_cast<std::byte*>(::operator new(plan_block_bytes));
}

void give_plan_block(std::byte* block) noexcept {
    if (cache.alive && cache.count < PlanBlockCache::kept) {
        cache.blocks[cache.count++] = block;
        return;
    }
    ::operator delete(block);
}

}  // namespace folsom::detail
