// The binary layout consumers compiled in (../shared facts: struct-sizes.txt, README.md),
// checked against Debian's libmemcached-dev headers at every build.
#include "handle.hpp"

#include <cstddef>

// Callers allocate these themselves (stack, arrays, their own allocator) and walk arrays of
// them by pointer arithmetic: their sizes are part of the ABI.
static_assert(sizeof(memcached_st) == 696, "memcached_st: 696 bytes in libmemcached 1.1.4");
static_assert(sizeof(memcached_result_st) == 352, "memcached_result_st: 352 bytes");
static_assert(sizeof(memcached_stat_st) == 224, "memcached_stat_st: 224 bytes (pylibmc's stride)");
static_assert(sizeof(memcached_analysis_st) == 56, "memcached_analysis_st: 56 bytes");
static_assert(sizeof(memcached_server_st) == 1168, "memcached_server_st: 1168 bytes");
static_assert(sizeof(memcached_string_st) == 40, "memcached_string_st: 40 bytes");
static_assert(offsetof(memcached_st, result) == 160, "memcached_st.result at 160");
static_assert(offsetof(memcached_st, configure) == 664, "memcached_st.configure at 664");
static_assert(offsetof(memcached_st, options) == 688, "memcached_st.options at 688");

// What libmemcached-tools, built with libmemcached's internal headers, read from an instance.
static_assert(offsetof(memcached_instance_st, port) == 0x10, "memcping reads the port at 0x10");
static_assert(offsetof(memcached_instance_st, root) == 0xa0, "memcstat reads root at 0xa0");
static_assert(offsetof(memcached_instance_st, hostname) == 0x40c0,
              "memcping reads the hostname at 0x40c0");
