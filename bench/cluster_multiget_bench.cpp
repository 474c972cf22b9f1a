// A 100-key multi-get split over three memcached servers, against the same multi-get to one
// server, and both against their floor: a raw client on blocking sockets that sends each
// server its share of the keys ("get k1 k2 ...\r\n", the keys placed on the servers exactly as
// the library places them: its own Continuum, libmemcached's ketama), all sends first, then
// reads each reply until its END, with no library, no event loop and no parsing beyond the
// reply's length.
//
// Reported, per 100-key multi-get, for the library and the raw client, over one and three
// servers: client CPU per key (getrusage of this process: the servers are other processes, and
// the client runs on this thread only) and wall time per call. The library's three servers are
// compared with the raw three-server floor in the same run; the three-server floor against the
// one-server floor shows what three wake-ups cost in itself.
//
// The servers are private memcached processes on free loopback ports (four: one for the
// one-server rows, three for the others, so a key the raw client looks for on the wrong server
// is a miss and fails the run). They are not pinned: they inherit this process's CPU mask. Pin
// the whole run for figures worth comparing (client and servers then share one CPU; spread
// over this machine's vCPUs, cross-CPU wake-ups cost several times more and vary widely):
//
//   taskset -c 0 build/bench/folsom_cluster_multiget_bench [iterations [reps]] [--only ROW]
//                                                          [--posted]
//
// iterations: multi-gets per measurement (default 20000); reps: measurements of each of the
// four rows, interleaved (default 3); the medians are printed, and every ratio is of medians
// from this one run. The library rows drive their io_context under a folsom::WriteHere, as a
// thread that runs its own io_context should (each part written and, when its reply is there,
// read in the call); --posted measures them without it (writes posted to the loop, replies
// read by Asio). --only ROW (1..4, in the order printed) measures one row, e.g. under
// callgrind or strace.
#include "folsom/client.hpp"
#include "folsom/cluster/continuum.hpp"
#include "folsom/send_batch.hpp"
#include "folsom/server_address.hpp"

#include <asio/io_context.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdexcept>
#include <string>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

constexpr std::size_t keys_per_get = 100;
constexpr std::size_t value_size = 64;

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
            ::execlp("memcached", "memcached", "-l", "127.0.0.1", "-p", p.c_str(), "-U", "0", "-t",
                     "1", "-u", "root", static_cast<char*>(nullptr));
            ::_exit(127);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    Memcached(const Memcached&) = delete;
    Memcached& operator=(const Memcached&) = delete;
    ~Memcached() {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
    std::string address() const { return "127.0.0.1:" + std::to_string(port); }
};

/// This process's CPU time so far, in user space and in the kernel.
struct CpuTime {
    double user = 0, kernel = 0;
};

CpuTime cpu_seconds() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    const auto seconds = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return {seconds(u.ru_utime), seconds(u.ru_stime)};
}

/// One measurement: `iterations` multi-gets of keys_per_get keys.
struct Cost {
    double cpu_ns_per_key = 0;
    double kernel_ns_per_key = 0;  // the part of cpu_ns_per_key spent in the kernel
    double wall_us_per_call = 0;
};

template <class Run>
Cost measure(int iterations, Run&& run) {
    run(iterations / 10);  // warm up
    const CpuTime cpu0 = cpu_seconds();
    const auto wall0 = std::chrono::steady_clock::now();
    run(iterations);
    const CpuTime cpu1 = cpu_seconds();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    const double user = cpu1.user - cpu0.user, kernel = cpu1.kernel - cpu0.kernel;
    const double keys = static_cast<double>(iterations) * static_cast<double>(keys_per_get);
    return {(user + kernel) * 1e9 / keys, kernel * 1e9 / keys,
            wall * 1e6 / static_cast<double>(iterations)};
}

std::vector<std::string> bench_keys() {
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < keys_per_get; ++i)
        keys.push_back("bench:key:" + std::to_string(i));
    return keys;
}

/// The library: a Client over `servers` that has stored every key (all hits), measured on
/// owning get_multi calls run one at a time on this thread.
class LibraryRows {
  public:
    LibraryRows(const std::vector<std::string>& servers, const std::vector<std::string>& keys)
        : client_(connect(io_, servers)), views_(keys.begin(), keys.end()) {
        for (const auto& k : keys) {
            bool done = false;
            client_.set(k, std::string(value_size, 'v'), std::chrono::seconds(0),
                        [&](std::error_code, folsom::Status) { done = true; });
            while (!done)
                io_.run_one();
        }
    }
    LibraryRows(const LibraryRows&) = delete;
    LibraryRows& operator=(const LibraryRows&) = delete;
    ~LibraryRows() {
        client_.shutdown();
        io_.poll();
    }

    void run(int n, bool write_here) {
        // The handler only records the outcome: it may run inside get_multi.
        folsom::WriteHere here(write_here, folsom::WriteHere::Handlers::may_run_inline);
        for (int i = 0; i < n; ++i) {
            bool done = false, ok = false;
            client_.get_multi(views_, [&](std::error_code ec, folsom::MultiGetResult r) {
                ok = !ec && r.complete();
                done = true;
            });
            while (!done)
                io_.run_one();
            if (!ok) throw std::runtime_error("library: a multi-get failed");
        }
    }

  private:
    static folsom::Client connect(asio::io_context& io, const std::vector<std::string>& servers) {
        folsom::Options o;
        o.servers = servers;
        o.retry_idempotent = std::getenv("NO_RETRY") == nullptr;
        return folsom::Client::connect(io, o);
    }

    asio::io_context io_;
    folsom::Client client_;
    std::vector<std::string_view> views_;
};

/// The floor: blocking TCP sockets, one per server; a multi-get is one send per server of
/// "get <its keys>\r\n", then, server by server, recv() until its reply is all there. The keys
/// are placed by folsom::cluster::Continuum with the Options' default distribution, as the
/// library places them; the replies are checked in full once before timing (so a key on the
/// wrong server fails the run), and then by length and their closing "END\r\n".
class RawFanout {
  public:
    RawFanout(const std::vector<std::string>& servers, const std::vector<std::string>& keys) {
        std::vector<folsom::ServerAddress> addresses(servers.size());
        for (std::size_t i = 0; i < servers.size(); ++i)
            if (folsom::parse_server_address(servers[i], addresses[i]))
                throw std::runtime_error("bad server address " + servers[i]);
        const folsom::cluster::Continuum ring(addresses, folsom::Options{}.distribution);
        servers_.resize(servers.size());
        for (std::size_t i = 0; i < servers.size(); ++i) {
            servers_[i].fd = connect_to(addresses[i].port);
            servers_[i].request = "get";
        }
        for (const auto& k : keys) {
            Server& s = servers_[ring.server_index(k)];
            s.request += ' ';
            s.request += k;
            s.reply += "VALUE " + k + " 0 " + std::to_string(value_size) + "\r\n" +
                       std::string(value_size, 'v') + "\r\n";
        }
        std::size_t largest = 0;
        for (Server& s : servers_) {
            s.request += "\r\n";
            s.reply += "END\r\n";
            largest = std::max(largest, s.reply.size());
        }
        // A server without keys gets no request (none does with 100 keys over three).
        std::erase_if(servers_, [](const Server& s) {
            if (s.request != "get\r\n") return false;
            ::close(s.fd);
            return true;
        });
        buffer_.resize(largest);
        // Every key on the server the library stored it on, with the library's value and flags.
        one_call(true);
    }
    RawFanout(const RawFanout&) = delete;
    RawFanout& operator=(const RawFanout&) = delete;
    ~RawFanout() {
        for (const Server& s : servers_)
            ::close(s.fd);
    }

    void run(int n) {
        for (int i = 0; i < n; ++i)
            one_call(false);
    }

    /// How many of the keys each server gets, e.g. "33+34+33".
    std::string shares() const {
        std::string out;
        for (const Server& s : servers_) {
            if (!out.empty()) out += '+';
            out += std::to_string(std::count(s.request.begin(), s.request.end(), ' '));
        }
        return out;
    }

  private:
    struct Server {
        int fd = -1;
        std::string request;  // "get k1 k2 ...\r\n": this server's share, in key order
        std::string reply;    // what it answers: its hits, then "END\r\n"
    };

    static int connect_to(std::uint16_t port) {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(port);
        if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
            throw std::runtime_error("cannot connect to port " + std::to_string(port));
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        const timeval patience{10, 0};  // a reply that never completes fails the run
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
        return fd;
    }

    [[noreturn]] static void fail(const char* what) {
        throw std::runtime_error(std::string("raw fan-out: ") + what);
    }

    void one_call(bool check_all) {
        for (const Server& s : servers_)
            for (std::size_t sent = 0; sent < s.request.size();) {
                const ssize_t n =
                    ::send(s.fd, s.request.data() + sent, s.request.size() - sent, MSG_NOSIGNAL);
                if (n <= 0) fail("send failed");
                sent += static_cast<std::size_t>(n);
            }
        for (const Server& s : servers_) {
            std::size_t got = 0;
            bool ended = false;  // the bytes so far end with "END\r\n" (no key or value holds it)
            while (!ended) {
                const ssize_t n = ::recv(s.fd, buffer_.data() + got, s.reply.size() - got, 0);
                if (n <= 0) fail(n == 0 ? "a server closed the connection" : "recv failed");
                got += static_cast<std::size_t>(n);
                ended = got >= 5 && std::memcmp(buffer_.data() + got - 5, "END\r\n", 5) == 0;
                if (got == s.reply.size() && !ended) break;
            }
            if (got != s.reply.size() ||
                (check_all && std::memcmp(buffer_.data(), s.reply.data(), got) != 0))
                fail("a reply is not the expected hits (a key on another server?)");
        }
    }

    std::vector<Server> servers_;
    std::vector<char> buffer_;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string cpu_mask() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return "?";
    std::string out;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) out += (out.empty() ? "" : ",") + std::to_string(c);
    return out;
}

int run(int argc, char** argv) {
    // --only ROW runs that row alone (1..4, in the order printed), e.g. under a profiler.
    int only = 0;
    bool write_here = true;
    std::vector<const char*> args;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = std::atoi(argv[++i]);
        else if (std::strcmp(argv[i], "--posted") == 0)
            write_here = false;
        else
            args.push_back(argv[i]);
    }
    const int iterations = !args.empty() ? std::atoi(args[0]) : 20000;
    const int reps = args.size() > 1 ? std::atoi(args[1]) : 3;
    if (iterations < 10 || reps < 1 || only < 0 || only > 4) {
        std::fprintf(stderr, "usage: %s [iterations >= 10 [reps >= 1]] [--only 1..4] [--posted]\n",
                     argv[0]);
        return 2;
    }
    std::printf("client and memcached servers on CPUs %s (servers inherit the mask)\n",
                cpu_mask().c_str());
    std::printf("library rows: %s\n",
                write_here ? "under a WriteHere (writes and ready replies in the call)"
                           : "posted (--posted: writes posted, replies read by Asio)");
    Memcached solo, a, b, c;
    const std::vector<std::string> keys = bench_keys();
    const std::vector<std::string> one{solo.address()};
    const std::vector<std::string> three{a.address(), b.address(), c.address()};
    LibraryRows lib1(one, keys), lib3(three, keys);
    RawFanout raw1(one, keys), raw3(three, keys);

    struct Row {
        const char* name;
        std::vector<double> cpu, kernel, wall;
    };
    Row rows[4] = {{"library, 1 server", {}, {}, {}},
                   {"raw floor, 1 server", {}, {}, {}},
                   {"library, 3 servers", {}, {}, {}},
                   {"raw floor, 3 servers", {}, {}, {}}};
    const auto run_row = [&](int i, int n) {
        switch (i) {
            case 0:
                return lib1.run(n, write_here);
            case 1:
                return raw1.run(n);
            case 2:
                return lib3.run(n, write_here);
            default:
                return raw3.run(n);
        }
    };
    for (int r = 0; r < reps; ++r)
        for (int i = 0; i < 4; ++i) {
            if (only != 0 && i != only - 1) continue;
            const Cost cost = measure(iterations, [&](int n) { run_row(i, n); });
            rows[i].cpu.push_back(cost.cpu_ns_per_key);
            rows[i].kernel.push_back(cost.kernel_ns_per_key);
            rows[i].wall.push_back(cost.wall_us_per_call);
        }
    if (only != 0) {
        const Row& row = rows[only - 1];
        std::printf("%s: client CPU %.1f ns/key (kernel %.1f), wall %.2f us/call (medians of %d)\n",
                    row.name, median(row.cpu), median(row.kernel), median(row.wall), reps);
        return 0;
    }

    std::printf(
        "%d-key multi-get (%zu-byte values, keys %s over three servers), %d calls x %d "
        "reps, medians:\n",
        static_cast<int>(keys_per_get), value_size, raw3.shares().c_str(), iterations, reps);
    std::printf("  %-22s %14s %16s %14s   runs (client CPU ns/key)\n", "", "client CPU",
                "of it in kernel", "wall");
    double cpu[4];
    for (int i = 0; i < 4; ++i) {
        cpu[i] = median(rows[i].cpu);
        std::printf("  %-22s %9.1f ns/key %9.1f ns/key %9.2f us/call  ", rows[i].name, cpu[i],
                    median(rows[i].kernel), median(rows[i].wall));
        for (double v : rows[i].cpu)
            std::printf(" %.1f", v);
        std::printf("\n");
    }
    std::printf("  library 3 servers / raw 3 servers: %.2fx\n", cpu[2] / cpu[3]);
    std::printf("  library 1 server  / raw 1 server:  %.2fx\n", cpu[0] / cpu[1]);
    std::printf(
        "  raw 3 servers / raw 1 server:      %.2fx (three servers with no library at all)\n",
        cpu[3] / cpu[1]);
    std::printf(
        "  library 3 servers / library 1 server: %.2fx (the old goal, <= 1.5x, restated "
        "as the first ratio)\n",
        cpu[2] / cpu[0]);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    // A failure throws, so that the servers are killed on the way out.
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
