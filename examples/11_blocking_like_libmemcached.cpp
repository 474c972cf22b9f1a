// 11 — blocking like libmemcached: a caller-driven BlockingClient shared by four threads.
//
//     ./11_blocking_like_libmemcached [host:port]        (default 127.0.0.1:11211)
//
// With BlockingClient::Driver::caller the client runs no thread of its own: the thread that
// calls writes the request, reads the reply and returns, as a libmemcached program does. Any
// number of threads may share the client: one drives the I/O at a time, and the others wait
// for their replies (which it reads for them) or for their turn.
#include <atomic>
#include <folsom/blocking_client.hpp>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
    folsom::Options options;
    options.servers = {argc > 1 ? argv[1] : "127.0.0.1:11211"};
    try {
        folsom::BlockingClient client(options, folsom::BlockingClient::Driver::caller);
        client.set("visits", "0");

        std::atomic<int> failures{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&, t] {
                for (int i = 0; i < 250; ++i) {
                    try {
                        client.incr("visits", 1);
                        const std::string key = "user:" + std::to_string(t);
                        client.set(key, std::to_string(i));
                        if (client.get(key)->data != std::to_string(i)) ++failures;
                    } catch (const std::system_error& e) {
                        std::cerr << "error: " << e.code().message() << '\n';
                        ++failures;
                    }
                }
            });
        for (auto& t : threads)
            t.join();

        std::cout << "visits: " << *client.incr("visits", 0) << '\n';  // visits: 1000
        std::cout << "failures: " << failures.load() << '\n';          // failures: 0
        return failures.load() == 0 ? 0 : 1;
    } catch (const std::system_error& e) {
        std::cerr << "error: " << e.code().message() << '\n';
        return 1;
    }
}
