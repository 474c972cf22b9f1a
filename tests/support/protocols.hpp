// The protocols the client speaks; protocol-parameterised integration suites run over all.
#pragma once

#include "folsom/options.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

namespace folsom::test {

inline const auto all_protocols =
    ::testing::Values(Protocol::ascii, Protocol::binary, Protocol::meta);

inline std::string protocol_name(const ::testing::TestParamInfo<Protocol>& info) {
    switch (info.param) {
        case Protocol::ascii:
            return "ascii";
        case Protocol::binary:
            return "binary";
        case Protocol::meta:
            return "meta";
    }
    return "unknown";
}

}  // namespace folsom::test

namespace folsom {
// Readable test names in gtest output ("ascii" instead of a byte dump).
inline void PrintTo(Protocol p, std::ostream* os) {
    *os << (p == Protocol::ascii ? "ascii" : p == Protocol::binary ? "binary" : "meta");
}
}  // namespace folsom
