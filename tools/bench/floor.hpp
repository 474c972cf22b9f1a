// Floor: `folsom bench --floor`, the same workload through a raw blocking socket with no
// library (bench/raw_socket.hpp), so a run shows how far the client is from what the round
// trips cost by themselves.
//
// The floor sends what the library puts on the wire, in the fewest system calls: a round of
// `depth` requests goes out in one send() and is read whole before the next round. Single gets
// are joined into one "get k1 k2 ...\r\n" line (as the library joins the gets in flight), a
// multi-get of B keys is one "get" line of B consecutive keys; a line carries at most 16 KiB
// of keys, as the library's do. The keys are chosen as the bench chooses them (random, or runs
// of consecutive keys from a random start). The reply is checked by its length only: every key
// must be a hit, which the preload sees to.
#pragma once

#include "bench/workload.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace folsom::bench {

struct FloorResult {
    std::uint64_t ops = 0;    ///< requests answered (a multi-get is one)
    std::uint64_t keys = 0;   ///< keys they carried (every one a hit)
    std::uint64_t sends = 0;  ///< rounds: one send() each
    double elapsed_s = 0;
    double cpu_user_s = 0;  ///< this process, over the floor's loop
    double cpu_sys_s = 0;
    bool interrupted = false;
};

class Floor {
  public:
    /// Connects to `server` (as Options::servers names it) and learns the size of a hit by
    /// asking for key 0. Throws std::runtime_error ("raw: ...") when it cannot connect, or
    /// when key 0 is not stored.
    Floor(const Workload& w, const std::string& server, std::chrono::milliseconds timeout);
    ~Floor();
    Floor(const Floor&) = delete;
    Floor& operator=(const Floor&) = delete;

    /// The workload's measured phase (get or mget; bounded by w.requests and w.duration_s,
    /// and stopped early by `interrupted`). Throws std::runtime_error ("raw: ...") when a
    /// reply is not every key's hit.
    FloorResult run(const std::atomic<bool>& interrupted);

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace folsom::bench
