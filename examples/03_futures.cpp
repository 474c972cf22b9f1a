// 03 — futures: asio::use_future turns any operation into a std::future.
//
//     ./03_futures [host:port]
//
// The I/O runs on a thread of our own; the main thread issues requests and waits on futures.
// Requests issued together are pipelined on the connection, so waiting on them together
// costs one round trip, not three. A failed request throws from future::get().
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/use_future.hpp>

#include <chrono>
#include <folsom/client.hpp>
#include <future>
#include <iostream>
#include <thread>

int main(int argc, char** argv) {
    asio::io_context io;
    auto work = asio::make_work_guard(io);
    std::thread io_thread([&] { io.run(); });

    folsom::Options options;
    options.servers = {argc > 1 ? argv[1] : "127.0.0.1:11211"};
    folsom::Client client = folsom::Client::connect(io, options);
    int exit_code = 0;
    try {
        using std::chrono::seconds;
        std::future<folsom::Status> a =
            client.set("fruit:1", "apple", seconds(60), asio::use_future);
        std::future<folsom::Status> b =
            client.set("fruit:2", "pear", seconds(60), asio::use_future);
        std::future<folsom::Status> c =
            client.add("fruit:1", "plum", seconds(60), asio::use_future);
        std::cout << "set fruit:1: " << folsom::to_string(a.get()) << '\n';  // STORED
        std::cout << "set fruit:2: " << folsom::to_string(b.get()) << '\n';  // STORED
        std::cout << "add fruit:1: " << folsom::to_string(c.get()) << '\n';  // NOT_STORED

        auto v = client.get("fruit:1", asio::use_future).get();
        std::cout << "fruit:1 = " << (v ? v->data : "(miss)") << '\n';

        // Errors surface as exceptions from get().
        try {
            client.get("not a valid key", asio::use_future).get();
        } catch (const std::system_error& e) {
            std::cout << "bad key: " << e.code().message() << '\n';
        }
    } catch (const std::system_error& e) {
        std::cerr << "error: " << e.code().message() << '\n';
        exit_code = 1;
    }
    client.shutdown();
    work.reset();
    io_thread.join();
    return exit_code;
}
