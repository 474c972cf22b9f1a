// Client CPU per key of a 100-key multi-get split over three memcached servers, against the
// same multi-get to one server (target: at most 1.5x). The servers are private memcached
// processes on free loopback ports; the client runs on this thread only, so this process's
// CPU time (getrusage) is the client's.
//
//   build/bench/folsom_cluster_multiget_bench [iterations]
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "folsom/client.hpp"

namespace {

std::uint16_t free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

struct Memcached {
    std::uint16_t port = free_port();
    pid_t pid = -1;
    Memcached() {
        pid = ::fork();
        if (pid == 0) {
            const std::string p = std::to_string(port);
            ::execlp("memcached", "memcached", "-l", "127.0.0.1", "-p", p.c_str(), "-U", "0",
                     "-t", "1", "-u", "root", static_cast<char*>(nullptr));
            ::_exit(127);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    ~Memcached() {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
    std::string address() const { return "127.0.0.1:" + std::to_string(port); }
};

double cpu_seconds() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/// CPU nanoseconds per key of `iterations` sequential 100-key multi-gets (all hits).
double ns_per_key(const std::vector<std::string>& servers, int iterations) {
    asio::io_context io;
    folsom::Options o;
    o.servers = servers;
    o.retry_idempotent = std::getenv("NO_RETRY") == nullptr;
    auto client = folsom::Client::connect(io, o);
    std::vector<std::string> keys;
    for (int i = 0; i < 100; ++i) keys.push_back("bench:key:" + std::to_string(i));
    std::vector<std::string_view> views(keys.begin(), keys.end());
    for (const auto& k : keys) {
        bool done = false;
        client.set(k, std::string(64, 'v'), std::chrono::seconds(0),
                   [&](std::error_code, folsom::Status) { done = true; });
        while (!done) io.run_one();
    }
    auto run = [&](int n) {
        for (int i = 0; i < n; ++i) {
            bool done = false;
            client.get_multi(views, [&](std::error_code ec, folsom::MultiGetResult r) {
                if (ec || !r.complete()) std::fprintf(stderr, "multi-get failed\n");
                done = true;
            });
            while (!done) io.run_one();
        }
    };
    run(iterations / 10);  // warm up
    const double start = cpu_seconds();
    run(iterations);
    const double cpu = cpu_seconds() - start;
    client.shutdown();
    io.poll();
    return cpu * 1e9 / (static_cast<double>(iterations) * 100.0);
}

}  // namespace

int main(int argc, char** argv) {
    const int iterations = argc > 1 ? std::atoi(argv[1]) : 20000;
    Memcached a, b, c;
    const double one = ns_per_key({a.address()}, iterations);
    const double three = ns_per_key({a.address(), b.address(), c.address()}, iterations);
    std::printf("100-key multi-get, client CPU per key: one server %.1f ns, three servers %.1f ns, "
                "ratio %.2fx (target <= 1.5x)\n",
                one, three, three / one);
    return 0;
}
