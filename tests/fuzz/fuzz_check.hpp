// FUZZ_CHECK: an invariant that must hold for every input. Unlike assert() it is active in
// every build type, and it aborts, which libFuzzer reports as a crash and saves the input.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace folsom::fuzz {

[[noreturn]] inline void check_failed(const char* expr, const char* what, const char* file,
                                      int line) {
    std::fprintf(stderr, "%s:%d: invariant violated: %s\n  (%s)\n", file, line, what, expr);
    std::abort();
}

}  // namespace folsom::fuzz

#define FUZZ_CHECK(cond, what)                                                      \
    do {                                                                            \
        if (!(cond)) ::folsom::fuzz::check_failed(#cond, what, __FILE__, __LINE__); \
    } while (false)
