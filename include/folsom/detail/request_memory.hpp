// Memory for the objects a request lives in while in flight: its operation (AsyncOp,
// GetViewOp), the decorators' shims (retry, key prefix), a multi-get plan's first block, and
// the buffer an owning multi-get's values are copied into (SharedBuffer).
// Internal.
//
// Blocks are recycled through a cache per thread and a depot shared by all threads, so that
// requests reach malloc only while the caches warm up, in every shape a client sees:
//   - a steady pipeline, each completion issuing the next request on the I/O thread;
//   - a burst (a thousand requests issued, then awaited), which Asio's recycling allocator
//     (one or two cached blocks per thread) served from malloc;
//   - requests made on the caller's threads and freed on the I/O thread: the freeing
//     thread's surplus goes to the depot in batches, where the allocating thread takes it.
// Blocks come in sixteen small sizes (multiples of 64 bytes up to 1 KiB) and one large size,
// large_request_block (a multi-get plan's first block, an owning multi-get's values); other
// sizes go to operator new. What is kept is bounded: per thread at most 64 blocks of each
// small size and 8 large ones, in the depot at most 2048 of each small size (2 MiB for the
// largest) and 64 large ones (512 KiB); the rest is freed. Every block is a plain operator
// new allocation, so any thread may free any block.
//
// Thread-safety: allocate and deallocate may be called from any thread at any time, also
// while the thread exits (its cache then goes to the depot and later blocks to the heap).
#pragma once

#include "folsom/export.hpp"

#include <cstddef>
#include <new>

namespace folsom::detail {

/// The small sizes go up to this many bytes.
inline constexpr std::size_t small_request_limit = 1024;
/// The one size above them that is recycled: the first block of a multi-get plan's tables,
/// and an owning multi-get's values when they fit.
inline constexpr std::size_t large_request_block = 8 * 1024;

/// A block of at least `size` bytes (size > 0), aligned for any standard type.
FOLSOM_EXPORT void* allocate_request_memory(std::size_t size);
/// Returns a block from allocate_request_memory(size), with the same size.
FOLSOM_EXPORT void deallocate_request_memory(void* p, std::size_t size) noexcept;

/// A standard allocator over the request memory: the default allocator of a request's
/// operation when its handler names none (asio::associated_allocator).
template <class T>
class RequestAllocator {
  public:
    using value_type = T;

    RequestAllocator() noexcept = default;
    template <class U>
    RequestAllocator(const RequestAllocator<U>&) noexcept {}

    T* allocate(std::size_t n) {
        static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                      "request memory is aligned as operator new's");
        return static_cast<T*>(allocate_request_memory(n * sizeof(T)));
    }
    void deallocate(T* p, std::size_t n) noexcept { deallocate_request_memory(p, n * sizeof(T)); }
};

/// Every request allocator can free what any other allocated.
template <class T, class U>
bool operator==(const RequestAllocator<T>&, const RequestAllocator<U>&) noexcept {
    return true;
}

}  // namespace folsom::detail
