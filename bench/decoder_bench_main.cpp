// The decoder microbenchmark: ascii, binary and meta decoders over the seed's three cases
// (decoder_bench.hpp). Each protocol's file registers its benchmarks; this is the entry point.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
