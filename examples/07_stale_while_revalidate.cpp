// 07 — cache stampedes: get-or-fill and stale-while-revalidate over the meta protocol.
//
//     ./07_stale_while_revalidate [host:port]
//
// A "price" is slow to compute (a 200 ms backend call). Five callers ask for it at once:
//   1. cold cache: memcached hands exactly one of them the win; it computes and stores the
//      price, the other four wait for it — one backend call, not five;
//   2. the price changes and the item is invalidated (marked stale, not deleted);
//   3. five callers again: all are served the stale price at once, and the one told to
//      (memcached's W flag) refreshes it in the background — again one backend call;
//   4. afterwards everybody reads the fresh price.
// The win tokens exist only in the meta protocol, so the client is configured with it.
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>

#include <atomic>
#include <chrono>
#include <folsom/cache_recipes.hpp>
#include <future>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
    asio::io_context io;
    auto work = asio::make_work_guard(io);
    std::thread io_thread([&] { io.run(); });

    folsom::Options options;
    options.servers = {argc > 1 ? argv[1] : "127.0.0.1:11211"};
    options.protocol = folsom::Protocol::meta;  // W/X/Z win tokens are meta-only
    folsom::Client client = folsom::Client::connect(io, options);

    std::atomic<int> backend_calls{0};
    std::atomic<int> price{100};
    // The fill: a coroutine standing in for a slow database query.
    auto compute_price = [&]() -> asio::awaitable<std::string> {
        ++backend_calls;
        asio::steady_timer slow(io, 200ms);
        co_await slow.async_wait(asio::use_awaitable);
        co_return "price=" + std::to_string(price.load());
    };

    int exit_code = 0;
    try {
        client.del("price:42", asio::use_future).get();  // start from a cold cache

        // 1. Cold cache, five concurrent callers: one fills, four wait.
        std::vector<std::future<folsom::CacheResult>> cold;
        for (int i = 0; i < 5; ++i)
            cold.push_back(folsom::get_or_fill(client, "price:42", {.ttl = 300s}, compute_price,
                                               asio::use_future));
        int filled = 0, waited = 0;
        std::string served;
        for (auto& f : cold) {
            folsom::CacheResult r = f.get();
            filled += r.source == folsom::CacheSource::filled;
            waited += r.source == folsom::CacheSource::waited;
            served = r.value->data;
        }
        std::cout << "cold: " << filled << " filled, " << waited << " waited, value " << served
                  << ", backend calls " << backend_calls << '\n';

        // 2. The price changes: mark the cached one stale for up to 30 s.
        price = 101;
        folsom::invalidate(client, "price:42", 30s, asio::use_future).get();
        std::cout << "invalidated\n";

        // 3. Five callers again: all served at once, one refreshes in the background.
        std::promise<bool> refreshed;
        folsom::RevalidateOptions swr;
        swr.fill.ttl = 300s;
        swr.on_refreshed = [&](std::error_code ec, bool stored) {
            refreshed.set_value(!ec && stored);
        };
        std::vector<std::future<folsom::CacheResult>> stale;
        for (int i = 0; i < 5; ++i)
            stale.push_back(folsom::get_stale_while_revalidate(client, "price:42", swr,
                                                               compute_price, asio::use_future));
        int stale_served = 0, refreshing = 0;
        for (auto& f : stale) {
            folsom::CacheResult r = f.get();
            stale_served += r.source == folsom::CacheSource::stale;
            refreshing += r.refreshing;
            served = r.value->data;
        }
        std::cout << "stale: " << stale_served << " served " << served << " at once, " << refreshing
                  << " refreshing\n";
        std::cout << "refreshed: " << (refreshed.get_future().get() ? "stored" : "failed") << '\n';

        // 4. Fresh again.
        folsom::CacheResult fresh = folsom::get_stale_while_revalidate(
                                        client, "price:42", swr, compute_price, asio::use_future)
                                        .get();
        std::cout << "fresh: " << fresh.value->data
                  << (fresh.source == folsom::CacheSource::hit ? " (hit)" : " (?)")
                  << ", backend calls " << backend_calls << '\n';
    } catch (const std::system_error& e) {
        std::cerr << "error: " << e.code().message() << '\n';
        exit_code = 1;
    }
    client.shutdown();
    work.reset();
    io_thread.join();
    return exit_code;
}
