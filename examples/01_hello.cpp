// 01 — hello: store a value and read it back with the blocking facade.
//
//     ./01_hello [host:port]        (default 127.0.0.1:11211)
//
// BlockingClient runs its own I/O thread and throws std::system_error on failure: the
// shortest way to talk to memcached from a script, a tool or a test.
#include <chrono>
#include <folsom/blocking_client.hpp>
#include <iostream>

int main(int argc, char** argv) {
    folsom::Options options;
    options.servers = {argc > 1 ? argv[1] : "127.0.0.1:11211"};
    try {
        folsom::BlockingClient client(options);
        folsom::Status s = client.set("hello", "world", std::chrono::seconds(60));
        std::cout << "set: " << folsom::to_string(s) << '\n';  // STORED

        std::optional<folsom::Value> v = client.get("hello");
        if (!v) {
            std::cout << "miss\n";
            return 1;
        }
        std::cout << "hello: " << v->data << '\n';  // hello: world
        std::cout << "missing: " << (client.get("no-such-key") ? "hit" : "miss") << '\n';
    } catch (const std::system_error& e) {
        std::cerr << "error: " << e.code().message() << '\n';
        return 1;
    }
}
