/// @file
/// How many times this process's ancestry forked since folsom was loaded: a child sees a
/// larger number than its parent did. BlockingClient compares it with the number it was made
/// (or last rebuilt) under to notice that it now runs in a child (see BlockingClient, "After
/// fork()").
#pragma once

#include "folsom/export.hpp"

#include <atomic>
#include <cstdint>

namespace folsom::detail {

/// Bumped in the child by a pthread_atfork handler (src/net/after_fork.cpp). Exported: the
/// inline reader below is compiled into programs that link a shared libfolsom.
FOLSOM_EXPORT extern std::atomic<std::uint32_t> fork_generation_counter;

inline std::uint32_t fork_generation() noexcept {
    return fork_generation_counter.load(std::memory_order_relaxed);
}

}  // namespace folsom::detail
