// 02 — callbacks: the asynchronous Client with plain completion handlers.
//
//     ./02_callbacks [host:port]
//
// Every operation takes a completion token; a lambda is the simplest. Handlers run on the
// client's executor (here: the thread that calls io.run()), never inside the call that started
// the request. Errors come as a std::error_code in the folsom category; outcomes that are not
// errors (STORED, NOT_FOUND, ...) as a folsom::Status; a miss as an empty optional.
#include <asio/io_context.hpp>

#include <chrono>
#include <folsom/client.hpp>
#include <iostream>

int main(int argc, char** argv) {
    asio::io_context io;
    folsom::Options options;
    options.servers = {argc > 1 ? argv[1] : "127.0.0.1:11211"};
    folsom::Client client = folsom::Client::connect(io, options);
    int exit_code = 1;

    // Chained requests: each starts from the previous one's handler.
    client.set(
        "counter", "41", std::chrono::seconds(60), [&](std::error_code ec, folsom::Status s) {
            if (ec) {
                std::cerr << "set failed: " << ec.message() << '\n';
                return client.shutdown();
            }
            std::cout << "set: " << folsom::to_string(s) << '\n';
            client.incr("counter", 1, [&](std::error_code ec2, std::optional<std::uint64_t> n) {
                if (ec2 || !n) {
                    std::cerr << "incr failed\n";
                    return client.shutdown();
                }
                std::cout << "incr: " << *n << '\n';  // incr: 42
                client.get("counter", [&](std::error_code ec3, std::optional<folsom::Value> v) {
                    if (!ec3 && v) {
                        std::cout << "get: " << v->data << '\n';
                        exit_code = 0;
                    }
                    // Shutting down lets io.run() return once nothing is left to do.
                    client.shutdown();
                });
            });
        });
    io.run();
    return exit_code;
}
