// Replaces the global operator new of the test executable that includes this header, so that
// a test can count every heap allocation made on any thread. Include it from exactly one
// source file of an executable (it defines the replacement functions).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace folsom::test {

/// operator new calls so far, on every thread.
inline std::atomic<std::size_t> heap_allocation_count{0};

inline std::size_t heap_allocations() {
    return heap_allocation_count.load(std::memory_order_relaxed);
}

/// operator new calls so far on the calling thread (a test's helper threads, a proxy say,
/// allocate on their own).
inline thread_local std::size_t thread_heap_allocation_count = 0;

inline std::size_t heap_allocations_on_this_thread() {
    return thread_heap_allocation_count;
}

// Out of line, so that g++ does not see memory from operator new reach free() and warn
// (-Wmismatched-new-delete): here it must.
[[gnu::noinline]] inline void release_counted(void* p) noexcept {
    std::free(p);
}

}  // namespace folsom::test

void* operator new(std::size_t n) {
    folsom::test::heap_allocation_count.fetch_add(1, std::memory_order_relaxed);
    ++folsom::test::thread_heap_allocation_count;
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
    folsom::test::release_counted(p);
}
void operator delete(void* p, std::size_t) noexcept {
    folsom::test::release_counted(p);
}
