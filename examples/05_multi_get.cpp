// 05 — multi-get across several servers.
//
//     ./05_multi_get [host:port ...]    (default 127.0.0.1:11211)
//
// Keys are spread over the servers by consistent hashing (libmemcached-compatible ketama by
// default). get_multi splits one request per server, sends them in parallel and merges the
// answers back into the order of the keys asked for. If a server fails, the others' values
// still arrive and MultiGetResult::errors says which keys went unanswered. get_multi_view is
// the zero-copy form: each hit goes to a callback, as a view into the read buffer, by the
// key's index.
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/use_future.hpp>

#include <chrono>
#include <folsom/client.hpp>
#include <future>
#include <iostream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
    folsom::Options options;  // no server pushed: the default, 127.0.0.1:11211
    for (int i = 1; i < argc; ++i)
        options.servers.push_back(argv[i]);

    asio::io_context io;
    auto work = asio::make_work_guard(io);
    std::thread io_thread([&] { io.run(); });
    folsom::Client client = folsom::Client::connect(io, options);
    int exit_code = 0;
    try {
        // Store every other key of twelve.
        std::vector<std::string> keys;
        std::vector<std::future<folsom::Status>> stores;
        for (int i = 0; i < 12; ++i) {
            keys.push_back("user:" + std::to_string(i));
            if (i % 2 == 0)
                stores.push_back(client.set(keys.back(), "name-" + std::to_string(i),
                                            std::chrono::seconds(60), asio::use_future));
        }
        for (auto& f : stores)
            f.get();

        std::vector<std::string_view> views(keys.begin(), keys.end());
        folsom::MultiGetResult r = client.get_multi(views, asio::use_future).get();
        std::set<std::size_t> servers_used;
        int hits = 0;
        for (std::size_t i = 0; i < keys.size(); ++i) {
            const std::size_t server = client.server_for(keys[i]);
            servers_used.insert(server);
            std::cout << keys[i] << " @ " << client.server_name(server) << ": "
                      << (r.values[i] ? r.values[i]->data : "(miss)") << '\n';
            hits += r.values[i] ? 1 : 0;
        }
        std::cout << "hits: " << hits << " of " << keys.size() << '\n';  // hits: 6 of 12
        std::cout << "servers used: " << servers_used.size() << " of " << client.server_count()
                  << '\n';
        // Zero-copy: the view lives only during the callback, which runs on the I/O thread of
        // the connection that read it (with several servers and I/O threads, possibly at the
        // same time as another server's); keep what you need.
        std::mutex mu;
        std::size_t bytes = 0;
        folsom::MultiGetViewResult vr = client
                                            .get_multi_view(
                                                views,
                                                [&](std::size_t, const folsom::ValueView& v) {
                                                    std::lock_guard lock(mu);
                                                    bytes += v.data.size();
                                                },
                                                asio::use_future)
                                            .get();
        std::cout << "zero-copy: " << vr.hits << " hits, " << bytes << " bytes\n";
        if (!r.complete() || !vr.complete()) {
            std::cout << "some servers did not answer\n";
            exit_code = 1;
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
