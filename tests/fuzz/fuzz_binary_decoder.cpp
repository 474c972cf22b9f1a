// libFuzzer target: the binary decoder fed any bytes, in any reads, under small limits, never
// crashes, never reads outside its input, and keeps the parse() contract on every call
// (see decoder_harness.hpp for the input layout and the invariants).
#include "decoder_harness.hpp"
#include "decoder_traits.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return folsom::fuzz::run_invariants<folsom::fuzz::BinaryTraits>(data, size);
}
