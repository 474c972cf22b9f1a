// The protocols the client speaks (and the transports it reaches servers by);
// protocol-parameterised integration suites run over all.
#pragma once

#include "folsom/options.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <tuple>

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

/// How a suite reaches its memcached: a loopback TCP port, or a Unix domain socket
/// (memcached -s in a temporary directory).
enum class Transport { tcp, unix_socket };

inline const char* transport_name(Transport t) {
    return t == Transport::tcp ? "tcp" : "unix";
}

using ProtocolAndTransport = std::tuple<Protocol, Transport>;

/// Every protocol over TCP and over a Unix socket.
inline const auto all_protocols_and_transports =
    ::testing::Combine(::testing::Values(Protocol::ascii, Protocol::binary, Protocol::meta),
                       ::testing::Values(Transport::tcp, Transport::unix_socket));

inline std::string protocol_and_transport_name(
    const ::testing::TestParamInfo<ProtocolAndTransport>& info) {
    const auto p = std::get<0>(info.param);
    return std::string(p == Protocol::ascii    ? "ascii"
                       : p == Protocol::binary ? "binary"
                                               : "meta") +
           "_" + transport_name(std::get<1>(info.param));
}

}  // namespace folsom::test

namespace folsom {
// Readable test names in gtest output ("ascii" instead of a byte dump).
inline void PrintTo(Protocol p, std::ostream* os) {
    *os << (p == Protocol::ascii ? "ascii" : p == Protocol::binary ? "binary" : "meta");
}
}  // namespace folsom
