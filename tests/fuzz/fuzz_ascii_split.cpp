// libFuzzer target (differential): where the reads split a ascii byte stream never changes
// what is decoded. The stream is fed in one read and in cuts taken from the input; both must
// give the same replies (compared as owning copies) and end the same way.
#include "decoder_harness.hpp"
#include "decoder_traits.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return folsom::fuzz::run_differential<folsom::fuzz::AsciiTraits>(data, size);
}
