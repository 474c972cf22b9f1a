// SharedBuffer (folsom/detail/shared_buffer.hpp), where an owning multi-get keeps its values:
// a block holds at least what was asked (all of it writable), blocks up to 8 KiB come back
// from the request memory instead of the heap, also when the last handle is released on
// another thread, larger ones go to the heap, and a chain is freed once, by its last handle.
#include "folsom/detail/shared_buffer.hpp"

#include "support/counting_operator_new.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <thread>
#include <utility>

namespace {

using folsom::detail::large_request_block;
using folsom::detail::SharedBuffer;
using folsom::test::heap_allocations;

constexpr std::size_t header = sizeof(SharedBuffer::Block);

TEST(SharedBuffer, ABlockHoldsAtLeastWhatWasAskedAndAllOfItIsWritable) {
    for (std::size_t asked : {std::size_t{1}, std::size_t{100}, std::size_t{1000}, 1024 - header,
                              1025 - header, std::size_t{3200}, large_request_block - header,
                              large_request_block - header + 1, std::size_t{100000}}) {
        SharedBuffer::Block* b = SharedBuffer::allocate(asked);
        EXPECT_GE(b->capacity, asked);
        std::memset(b->bytes(), 0x5a, b->capacity);  // (ASan checks the whole capacity)
        EXPECT_EQ(b->refs.load(), 1u);
        EXPECT_EQ(b->next, nullptr);
        SharedBuffer::free_chain(b);
    }
}

TEST(SharedBuffer, AMultiGetsBufferComesBackWithoutTheHeap) {
    // 100 values of 64 bytes: between the small sizes and 8 KiB, so the whole 8 KiB block.
    SharedBuffer::free_chain(SharedBuffer::allocate(6400));  // warms this thread's cache
    const std::size_t before = heap_allocations();
    for (int i = 0; i < 100; ++i) {
        SharedBuffer::Block* b = SharedBuffer::allocate(6400 + static_cast<std::size_t>(i));
        EXPECT_EQ(b->capacity, large_request_block - header);
        SharedBuffer buffer(b);
    }
    EXPECT_EQ(heap_allocations(), before);
}

TEST(SharedBuffer, ABufferReleasedOnAnotherThreadIsFreedThere) {
    // A result handed to another thread: the block returns to that thread's cache (and from
    // there to the depot), and nothing is freed twice (ASan).
    for (int i = 0; i < 64; ++i) {
        SharedBuffer::Block* b = SharedBuffer::allocate(3000);
        b->next = SharedBuffer::allocate(500);  // a chained block of a small size
        SharedBuffer buffer(b);
        std::thread([moved = std::move(buffer)]() mutable {
            SharedBuffer drop(std::move(moved));
        }).join();
    }
}

TEST(SharedBuffer, LargerBlocksComeFromTheHeapAndAreNotKept) {
    const std::size_t before = heap_allocations();
    SharedBuffer::free_chain(SharedBuffer::allocate(large_request_block));
    SharedBuffer::free_chain(SharedBuffer::allocate(large_request_block));
    EXPECT_EQ(heap_allocations() - before, 2u);
}

TEST(SharedBuffer, CopiesShareTheChainAndTheLastOneFreesIt) {
    SharedBuffer::Block* b = SharedBuffer::allocate(64);
    std::memcpy(b->bytes(), "value", 5);
    SharedBuffer first(b);
    SharedBuffer copy = first;
    EXPECT_EQ(b->refs.load(), 2u);
    first = SharedBuffer();
    EXPECT_FALSE(first);
    ASSERT_TRUE(copy);
    EXPECT_EQ(std::memcmp(b->bytes(), "value", 5), 0);  // still alive through the copy
    EXPECT_EQ(b->refs.load(), 1u);
}

}  // namespace
