// Heap allocation counter of the end-to-end benchmark: this binary replaces the global
// operator new/delete with counting ones (alloc_counter.cpp), so a case can report how many
// allocations each operation made. Only C++ allocations are seen: libmemcached's malloc calls
// are not counted.
#pragma once

#include <cstdint>

namespace folsom::bench {

/// Allocations made through operator new (any thread) since the program started.
/// Calls of the global operator new (any form) since the program started.
std::uint64_t allocations() noexcept;
/// Bytes those calls asked for.
std::uint64_t allocated_bytes() noexcept;

}  // namespace folsom::bench
