// Replaces the global operator new of the test executable that includes this header, so that
// a test can count every heap allocation made on any thread. Include it from exactly one
// source file of an executable (it defines the replacement functions).
//
// Every form is replaced (plain, nothrow, array, aligned), each counted once, so that no block
// from one allocator reaches another's delete: the standard library mixes forms
// (std::stable_sort takes nothrow new and returns the block through plain delete).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 sees the replacement delete's free() against its own idea of operator new and warns
// of a mismatch: a known false positive for replaced allocation functions.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

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

void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    folsom::test::heap_allocation_count.fetch_add(1, std::memory_order_relaxed);
    ++folsom::test::thread_heap_allocation_count;
    return std::malloc(n == 0 ? 1 : n);
}
void* operator new(std::size_t n) {
    if (void* p = operator new(n, std::nothrow)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a) {
    folsom::test::heap_allocation_count.fetch_add(1, std::memory_order_relaxed);
    ++folsom::test::thread_heap_allocation_count;
    const auto align = static_cast<std::size_t>(a);
    if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
    return operator new(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    return operator new(n, std::nothrow);
}
void operator delete(void* p) noexcept {
    folsom::test::release_counted(p);
}
void operator delete(void* p, std::size_t) noexcept {
    folsom::test::release_counted(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
    folsom::test::release_counted(p);
}
void operator delete[](void* p) noexcept {
    folsom::test::release_counted(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    folsom::test::release_counted(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
    folsom::test::release_counted(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
    folsom::test::release_counted(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    folsom::test::release_counted(p);
}
