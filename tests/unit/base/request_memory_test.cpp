// The request memory (folsom/detail/request_memory.hpp): blocks come back to the thread that
// frees them, a burst is served from the caches once they are warm, blocks freed on one
// thread serve allocations on another through the depot, a thread's cache outlives the
// thread, and what is kept is bounded.
#include "folsom/detail/request_memory.hpp"

#include "support/counting_operator_new.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

namespace {

using folsom::detail::allocate_request_memory;
using folsom::detail::deallocate_request_memory;
using folsom::detail::large_request_block;
using folsom::detail::RequestAllocator;

using folsom::test::heap_allocations;

/// Allocates `n` blocks of `size` bytes, writing each whole (ASan checks the size).
std::vector<void*> take(std::size_t n, std::size_t size) {
    std::vector<void*> blocks;
    blocks.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        void* p = allocate_request_memory(size);
        std::memset(p, 0x5a, size);
        blocks.push_back(p);
    }
    return blocks;
}

void give_back(const std::vector<void*>& blocks, std::size_t size) {
    for (void* p : blocks)
        deallocate_request_memory(p, size);
}

TEST(RequestMemory, AFreedBlockServesTheNextRequestOfItsSize) {
    void* a = allocate_request_memory(200);
    deallocate_request_memory(a, 200);
    const std::size_t before = heap_allocations();
    void* b = allocate_request_memory(250);  // the same 256-byte size
    EXPECT_EQ(b, a);
    EXPECT_EQ(heap_allocations(), before);
    deallocate_request_memory(b, 250);
}

TEST(RequestMemory, ABurstOfAThousandIsServedFromTheCachesOnceWarm) {
    std::vector<void*> warm = take(1000, 300);
    give_back(warm, 300);
    const std::size_t before = heap_allocations();
    for (int round = 0; round < 5; ++round) {
        std::vector<void*> burst = take(1000, 300);
        give_back(burst, 300);
    }
    const std::size_t blocks_reserve = 5;  // the vectors' own buffers
    EXPECT_LE(heap_allocations() - before, blocks_reserve);
}

TEST(RequestMemory, BlocksFreedOnAnotherThreadServeThisOne) {
    // The shape of requests made on a caller's thread and completed on the I/O thread.
    constexpr std::size_t size = 448;
    constexpr std::size_t n = 960;  // a multiple of the 32-block batches
    auto free_elsewhere = [&](const std::vector<void*>& blocks) {
        std::thread([&] { give_back(blocks, size); }).join();
    };
    free_elsewhere(take(n, size));  // warms the depot
    const std::size_t before = heap_allocations();
    for (int round = 0; round < 4; ++round)
        free_elsewhere(take(n, size));
    // Each round allocates its vector and starts a thread (a few allocations of its own);
    // without the depot it would make 960 more.
    EXPECT_LT(heap_allocations() - before, 4u * 16);
}

TEST(RequestMemory, AThreadsCacheGoesToTheDepotWhenItExits) {
    constexpr std::size_t size = 700;
    std::thread([&] { give_back(take(64, size), size); }).join();
    const std::size_t before = heap_allocations();
    std::vector<void*> blocks = take(64, size);  // two batches, from the depot
    EXPECT_LE(heap_allocations() - before, 1u);  // the vector
    give_back(blocks, size);
}

TEST(RequestMemory, OtherLargeBlocksComeFromTheHeap) {
    for (std::size_t size : {std::size_t{1025}, std::size_t{4096}, large_request_block + 1}) {
        const std::size_t before = heap_allocations();
        void* p = allocate_request_memory(size);
        std::memset(p, 0, size);
        EXPECT_EQ(heap_allocations() - before, 1u) << size;
        deallocate_request_memory(p, size);
        void* q = allocate_request_memory(size);  // nothing was kept
        EXPECT_EQ(heap_allocations() - before, 2u) << size;
        deallocate_request_memory(q, size);
    }
}

TEST(RequestMemory, PlanBlocksCrossThreadsThroughTheDepot) {
    // The 8 KiB blocks of multi-get plans: made on this thread, freed on another, in batches
    // of four.
    constexpr std::size_t size = large_request_block;
    constexpr std::size_t n = 40;
    auto free_elsewhere = [&](const std::vector<void*>& blocks) {
        std::thread([&] { give_back(blocks, size); }).join();
    };
    free_elsewhere(take(n, size));
    const std::size_t before = heap_allocations();
    for (int round = 0; round < 4; ++round)
        free_elsewhere(take(n, size));
    EXPECT_LT(heap_allocations() - before, 4u * 16);  // without the depot: 160 more
}

TEST(RequestMemory, FewPlanBlocksAreKept) {
    // The depot keeps 64 plan blocks and a thread fewer than 8, so a thousand freed at once
    // leave at most 72 to serve the next thousand.
    constexpr std::size_t size = large_request_block;
    give_back(take(1000, size), size);
    const std::size_t before = heap_allocations();
    std::vector<void*> again = take(1000, size);
    const std::size_t from_heap = heap_allocations() - before - 1;  // less the vector
    EXPECT_GE(from_heap, 1000u - 72);
    EXPECT_LE(from_heap, 1000u - 64);
    give_back(again, size);
}

TEST(RequestMemory, WhatIsKeptIsBounded) {
    // Ten thousand blocks freed at once: the depot keeps 2048 of a size and this thread 64;
    // the next ten thousand must therefore reach the heap for the rest.
    constexpr std::size_t size = 960;
    give_back(take(10000, size), size);
    const std::size_t before = heap_allocations();
    std::vector<void*> again = take(10000, size);
    const std::size_t from_heap = heap_allocations() - before - 1;  // less the vector
    EXPECT_GE(from_heap, 10000u - 2048 - 64);
    EXPECT_LE(from_heap, 10000u - 2048);
    give_back(again, size);
}

TEST(RequestMemory, IsAStandardAllocator) {
    RequestAllocator<int> ints;
    RequestAllocator<double> doubles(ints);
    EXPECT_TRUE(ints == doubles);
    std::vector<int, RequestAllocator<int>> v(ints);
    for (int i = 0; i < 100; ++i)
        v.push_back(i);
    EXPECT_EQ(v[99], 99);
}

TEST(RequestMemory, ManyThreadsAllocatingAndFreeingAcrossEachOther) {
    // Run under ThreadSanitizer too: producers hand blocks to consumers through a queue.
    constexpr int producers = 4, per_producer = 5000;
    std::vector<std::atomic<void*>> slots(producers * per_producer);
    std::vector<std::thread> threads;
    for (int t = 0; t < producers; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < per_producer; ++i) {
                void* p = allocate_request_memory(64 + (i % 12) * 64);
                std::memset(p, t, 64);
                slots[t * per_producer + i].store(p, std::memory_order_release);
            }
        });
    for (int t = 0; t < producers; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < per_producer; ++i) {
                auto& slot = slots[((t + 1) % producers) * per_producer + i];
                void* p;
                while ((p = slot.load(std::memory_order_acquire)) == nullptr)
                    std::this_thread::yield();
                EXPECT_EQ(static_cast<unsigned char*>(p)[0], (t + 1) % producers);
                deallocate_request_memory(p, 64 + (i % 12) * 64);
            }
        });
    for (auto& th : threads)
        th.join();
}

}  // namespace
