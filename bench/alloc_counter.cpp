// Counting replacements of the global operator new/delete, shared by the benchmarks.
#include "alloc_counter.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

namespace {

std::atomic<std::uint64_t> g_allocs{0};
std::atomic<std::uint64_t> g_bytes{0};

void* counted_alloc(std::size_t n) {
    g_allocs.fetch_add(1, std::memory_order_relaxed);
    g_bytes.fetch_add(n, std::memory_order_relaxed);
    return std::malloc(n == 0 ? 1 : n);
}

void* counted_aligned_alloc(std::size_t n, std::align_val_t al) {
    g_allocs.fetch_add(1, std::memory_order_relaxed);
    g_bytes.fetch_add(n, std::memory_order_relaxed);
    const auto a = static_cast<std::size_t>(al);
    const std::size_t rounded = (std::max<std::size_t>(n, 1) + a - 1) / a * a;
    return std::aligned_alloc(a, rounded);
}

// Out of line so that g++ does not inline free() into callers of operator delete and then warn
// (-Wmismatched-new-delete) that memory from operator new reaches free(), which here it must.
[[gnu::noinline]] void counted_free(void* p) noexcept {
    std::free(p);
}

}  // namespace

namespace folsom::bench {
std::uint64_t allocations() noexcept {
    return g_allocs.load(std::memory_order_relaxed);
}
std::uint64_t allocated_bytes() noexcept {
    return g_bytes.load(std::memory_order_relaxed);
}
}  // namespace folsom::bench

void* operator new(std::size_t n) {
    if (void* p = counted_alloc(n)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
    if (void* p = counted_alloc(n)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    return counted_alloc(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    return counted_alloc(n);
}
void* operator new(std::size_t n, std::align_val_t al) {
    if (void* p = counted_aligned_alloc(n, al)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t al) {
    if (void* p = counted_aligned_alloc(n, al)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
    counted_free(p);
}
void operator delete[](void* p) noexcept {
    counted_free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    counted_free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    counted_free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
    counted_free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
    counted_free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    counted_free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
    counted_free(p);
}
