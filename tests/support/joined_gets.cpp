#include "support/joined_gets.hpp"

#include "folsom/blocking_client.hpp"
#include "folsom/client.hpp"
#include "folsom/protocol/limits.hpp"

#include <asio/io_context.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>

namespace folsom::test {

int joined_gets_answered(Options options, int n) {
    using namespace std::chrono_literals;
    options.max_outstanding_requests = 4 * static_cast<std::size_t>(n);
    auto long_key = [](int i) {
        std::string k = "long" + std::to_string(i) + ':';
        return k + std::string(protocol::max_key_length - k.size(), 'k');
    };
    auto short_key = [](int i) { return "s" + std::to_string(i); };
    {
        BlockingClient setter(options);
        for (int i = 0; i < n; i += 2) {  // even keys hit, odd keys miss
            EXPECT_EQ(setter.set(long_key(i), "L" + std::to_string(i), 0s), Status::stored);
            EXPECT_EQ(setter.set(short_key(i), "S" + std::to_string(i), 0s), Status::stored);
        }
    }
    asio::io_context io;
    auto client = Client::connect(io, options);
    int right = 0, done = 0;
    auto check = [&](std::string want, bool hit) {
        return [&, want = std::move(want), hit](std::error_code ec, std::optional<Value> v) {
            if (!ec && v.has_value() == hit && (!hit || v->data == want)) ++right;
            if (++done == 2 * n) io.stop();
        };
    };
    for (int i = 0; i < n; ++i)
        client.get(long_key(i), check("L" + std::to_string(i), i % 2 == 0));
    for (int i = 0; i < n; ++i)
        client.get(short_key(i), check("S" + std::to_string(i), i % 2 == 0));
    io.run_for(10s);
    EXPECT_EQ(done, 2 * n);
    EXPECT_EQ(client.outstanding(), 0u);
    client.shutdown();
    return right;
}

}  // namespace folsom::test
