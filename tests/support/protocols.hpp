// The protocols the client speaks; protocol-parameterised integration suites run over all.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "folsom/options.hpp"

namespace folsom::test {

inline const auto all_protocols = ::testing::Values(Protocol::ascii);

inline std::string protocol_name(const ::testing::TestParamInfo<Protocol>& info) {
    switch (info.param) {
        case Protocol::ascii: return "ascii";
        case Protocol::binary: return "binary";
        case Protocol::meta: return "meta";
    }
    return "unknown";
}

}  // namespace folsom::test
