// SharedBuffer: the heap memory an owning multi-get result keeps its values in (internal).
//
// One block, a small header followed by its bytes, with further blocks chained to it when the
// values outgrew the first (values of different sizes, a result over the first block's cap).
// Copies of a handle share the chain (an atomic count in the first block's header); the last
// one frees every block. The bytes never move: views into them stay valid while any handle to
// the chain lives, also across moves of the handle.
//
// Blocks come from the request memory (request_memory.hpp): a block of up to 8 KiB with its
// header, the usual multi-get of up to ~100 small values, is recycled per thread instead of
// going through malloc, whose per-thread cache stops at 1 KiB (two trips to its bins a
// multi-get, and a block that is cold where a recycled one is warm).
#pragma once

#include "folsom/detail/request_memory.hpp"
#include "folsom/export.hpp"

#include <atomic>
#include <cstddef>
#include <new>
#include <utility>

namespace folsom::detail {

class FOLSOM_EXPORT SharedBuffer {
  public:
    /// A block: this header, then `capacity` bytes.
    struct Block {
        std::atomic<std::size_t> refs{1};  // meaningful in the first block of a chain
        Block* next = nullptr;             // the chain, freed with the first block
        std::size_t capacity = 0;

        char* bytes() noexcept { return reinterpret_cast<char*>(this + 1); }
    };

    /// A block of at least `capacity` bytes (uninitialised), not yet owned by any handle.
    static Block* allocate(std::size_t capacity) {
        std::size_t bytes = sizeof(Block) + capacity;
        // Between the small sizes and the large one, take the large one (and use all of it).
        if (bytes > small_request_limit && bytes < large_request_block) bytes = large_request_block;
        void* p = allocate_request_memory(bytes);
        Block* b = ::new (p) Block{};
        b->capacity = bytes - sizeof(Block);
        return b;
    }
    /// Frees `b` and every block chained to it.
    static void free_chain(Block* b) noexcept {
        while (b) {
            Block* next = b->next;
            const std::size_t bytes = sizeof(Block) + b->capacity;
            b->~Block();
            deallocate_request_memory(b, bytes);
            b = next;
        }
    }

    SharedBuffer() noexcept = default;
    /// Takes over a chain (its first block's count is 1).
    explicit SharedBuffer(Block* first) noexcept : head_(first) {}
    SharedBuffer(const SharedBuffer& o) noexcept : head_(o.head_) {
        if (head_) head_->refs.fetch_add(1, std::memory_order_relaxed);
    }
    SharedBuffer(SharedBuffer&& o) noexcept : head_(std::exchange(o.head_, nullptr)) {}
    SharedBuffer& operator=(SharedBuffer o) noexcept {
        std::swap(head_, o.head_);
        return *this;
    }
    ~SharedBuffer() { release(); }

    /// True when it holds memory.
    explicit operator bool() const noexcept { return head_ != nullptr; }

  private:
    void release() noexcept {
        if (head_ && head_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) free_chain(head_);
        head_ = nullptr;
    }

    Block* head_ = nullptr;
};

}  // namespace folsom::detail
