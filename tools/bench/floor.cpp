#include "bench/floor.hpp"

#include "bench/cpu.hpp"
#include "bench/keys.hpp"
#include "bench/raw_socket.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace folsom::bench {
namespace {

using Clock = std::chrono::steady_clock;

/// Keys per line at most, in bytes: the library cuts its retrieval lines at the same size
/// (protocol::max_retrieval_key_bytes).
constexpr std::size_t max_line_key_bytes = 16 * 1024;

}  // namespace

struct Floor::Impl {
    Impl(const Workload& workload, const std::string& server)
        : w(workload), text(workload.keys), socket(RawSocket::connect(server)) {}

    /// Writes "get " and `count` consecutive keys from key `n`, then "\r\n". Returns the end.
    char* run_line(char* p, std::uint64_t n, std::size_t count) const noexcept {
        std::memcpy(p, "get ", 4);
        p += 4;
        text.write_run(p, n, count, w.keys, text.size() + 1, ' ');
        p += count * (text.size() + 1);
        p[-1] = '\r';  // the last key's separator
        *p++ = '\n';
        return p;
    }

    /// The first of the next `n` keys in order (--key-order sequential).
    std::uint64_t in_order(std::uint64_t n) noexcept {
        const std::uint64_t first = cursor;
        cursor = (first + n) % w.keys;
        return first;
    }

    /// Writes "get " and `count` random keys, then "\r\n". Returns the end.
    char* random_line(char* p, std::size_t count) noexcept {
        std::memcpy(p, "get ", 4);
        p += 4;
        for (std::size_t i = 0; i < count; ++i) {
            text.write(p, pick_key(next(), w.keys));
            p += text.size();
            *p++ = ' ';
        }
        p[-1] = '\r';
        *p++ = '\n';
        return p;
    }

    std::uint64_t next() noexcept {  // splitmix64, as the bench's slots
        std::uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }

    Workload w;
    KeyText text;
    RawSocket socket;
    std::size_t hit_bytes = 0;      // "VALUE <key> <flags> <n>\r\n<data>\r\n": every key's
    std::size_t keys_per_line = 1;  // at most max_line_key_bytes of keys and their spaces
    std::string request;            // a round's lines, written in place
    std::uint64_t rng = 0x5eedf1002ULL;
    std::uint64_t cursor = 0;  // --key-order sequential: the next key
};

Floor::Floor(const Workload& w, const std::string& server, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>(w, server)) {
    Impl& f = *impl_;
    f.socket.set_receive_timeout(timeout);
    // Every key of the run has the same length and value: one hit's size is every hit's.
    std::string probe = "get ";
    probe.resize(probe.size() + f.text.size());
    f.text.write(probe.data() + 4, 0);
    const std::string key0 = probe.substr(4);
    probe += "\r\n";
    const std::size_t got = f.socket.round_trip(probe, 0);
    if (got <= 5)
        throw std::runtime_error("raw: key " + key0 +
                                 " is not stored: the floor expects every key to be a hit "
                                 "(keep the preload on)");
    f.hit_bytes = got - 5;
    f.keys_per_line = std::max<std::size_t>(1, max_line_key_bytes / (f.text.size() + 1));
    // The largest round: `depth` requests, each cut into lines.
    const std::size_t per_request = w.op == Op::mget ? w.batch : 1;
    const std::size_t keys = w.depth * per_request;
    const std::size_t lines =
        w.op == Op::mget ? w.depth * ((per_request + f.keys_per_line - 1) / f.keys_per_line)
                         : (keys + f.keys_per_line - 1) / f.keys_per_line;
    f.request.resize(lines * 5 + keys * (f.text.size() + 1) + KeyText::slack);
}

Floor::~Floor() = default;

FloorResult Floor::run(const std::atomic<bool>& interrupted) {
    Impl& f = *impl_;
    const Workload& w = f.w;
    FloorResult r;
    std::uint64_t remaining =
        w.requests != 0 ? w.requests : std::numeric_limits<std::uint64_t>::max();
    const CpuTime cpu0 = CpuTime::now();
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(w.duration_s));
    auto now = start;
    while (remaining > 0 && now < deadline) {
        if (interrupted.load(std::memory_order_relaxed)) {
            r.interrupted = true;
            break;
        }
        const auto requests = static_cast<std::size_t>(std::min<std::uint64_t>(w.depth, remaining));
        char* const begin = f.request.data();
        char* p = begin;
        std::size_t keys = 0;
        std::size_t lines = 0;
        if (w.op == Op::mget) {
            for (std::size_t i = 0; i < requests; ++i) {
                // As the bench's multi-gets: consecutive keys from a random start (or in order).
                std::uint64_t n =
                    w.keys_in_order ? f.in_order(w.batch) : pick_key(f.next(), w.keys);
                for (std::size_t left = w.batch; left > 0;) {
                    const std::size_t m = std::min(left, f.keys_per_line);
                    p = f.run_line(p, n, m);
                    n = (n + m) % w.keys;
                    left -= m;
                    ++lines;
                }
            }
            keys = requests * w.batch;
        } else {
            for (std::size_t left = requests; left > 0;) {
                const std::size_t m = std::min(left, f.keys_per_line);
                p = w.keys_in_order ? f.run_line(p, f.in_order(m), m) : f.random_line(p, m);
                left -= m;
                ++lines;
            }
            keys = requests;
        }
        f.socket.round_trip(std::string_view(begin, static_cast<std::size_t>(p - begin)),
                            keys * f.hit_bytes + lines * 5, lines);
        r.ops += requests;
        r.keys += keys;
        ++r.sends;
        remaining -= requests;
        now = Clock::now();
    }
    const CpuTime cpu1 = CpuTime::now();
    r.elapsed_s = std::chrono::duration<double>(now - start).count();
    r.cpu_user_s = cpu1.user_s - cpu0.user_s;
    r.cpu_sys_s = cpu1.sys_s - cpu0.sys_s;
    return r;
}

}  // namespace folsom::bench
