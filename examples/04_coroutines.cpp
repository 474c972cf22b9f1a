// 04 — coroutines: asio::use_awaitable makes every operation awaitable in C++20 coroutines.
//
//     ./04_coroutines [host:port]
//
// Errors are thrown at the co_await. A check-and-set loop reads the item with its cas, then
// writes only if nobody changed it in between, retrying otherwise.
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/use_awaitable.hpp>

#include <chrono>
#include <folsom/client.hpp>
#include <iostream>
#include <string>

namespace {

/// Appends `word` to a list held in one item, safely against concurrent writers.
asio::awaitable<void> append_word(folsom::Client& client, std::string key, std::string word) {
    for (;;) {
        std::optional<folsom::Value> v = co_await client.gets(key, asio::use_awaitable);
        if (!v) {
            // Not there yet: add fails (NOT_STORED) if someone else created it first.
            auto s = co_await client.add(key, word, std::chrono::seconds(60), asio::use_awaitable);
            if (s == folsom::Status::stored) co_return;
            continue;
        }
        auto s = co_await client.cas(key, v->data + "," + word, v->cas, std::chrono::seconds(60),
                                     asio::use_awaitable);
        if (s == folsom::Status::stored) co_return;
        // exists: changed since our gets; not_found: deleted since. Either way, read again.
    }
}

asio::awaitable<int> run(folsom::Client& client) {
    co_await client.wait_connected(std::chrono::seconds(3), asio::use_awaitable);
    co_await client.del("words", asio::use_awaitable);  // deleted or not_found: both fine
    for (const char* w : {"one", "two", "three"})
        co_await append_word(client, "words", w);
    auto v = co_await client.get("words", asio::use_awaitable);
    std::cout << "words: " << (v ? v->data : "(miss)") << '\n';  // words: one,two,three
    co_return v ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    asio::io_context io;
    folsom::Options options;
    options.servers = {argc > 1 ? argv[1] : "127.0.0.1:11211"};
    folsom::Client client = folsom::Client::connect(io, options);
    int exit_code = 1;
    asio::co_spawn(io, run(client), [&](std::exception_ptr e, int rc) {
        if (e) {
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& err) {
                std::cerr << "error: " << err.what() << '\n';
            }
        } else {
            exit_code = rc;
        }
        client.shutdown();
    });
    io.run();
    return exit_code;
}
