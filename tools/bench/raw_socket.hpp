// RawSocket: the floor a client library's round trip is measured against. A blocking TCP (or
// Unix domain) socket to one memcached that sends a request whole and recv()s until the reply
// has come: no event loop, no parsing beyond the reply's length and its last line. What a
// round trip costs the client before any library does anything.
//
// Shared by `folsom bench --floor` (tools/bench/floor.cpp) and the end-to-end benchmark's raw
// rows (bench/e2e/raw_socket_get.cpp), which compile this file into their own targets.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace folsom::bench {

class RawSocket {
  public:
    /// Connects to `host`:`port` (a name or an address; TCP_NODELAY). Throws
    /// std::runtime_error ("raw: ...") when it cannot.
    static RawSocket tcp(const std::string& host, std::uint16_t port);
    /// Connects to the Unix domain socket at `path`.
    static RawSocket unix_socket(const std::string& path);
    /// A server as Options::servers names it: "HOST:PORT", "[V6]:PORT" or a socket's path
    /// (starting with '/').
    static RawSocket connect(const std::string& server);

    RawSocket(RawSocket&& other) noexcept;
    RawSocket& operator=(RawSocket&& other) noexcept;
    RawSocket(const RawSocket&) = delete;
    RawSocket& operator=(const RawSocket&) = delete;
    ~RawSocket();

    /// A reply that stops coming for this long fails round_trip instead of blocking forever.
    void set_receive_timeout(std::chrono::milliseconds timeout);

    /// Sends `request` and reads until `expect` bytes have come, the last of them "END\r\n".
    /// `replies` is how many replies the request asks for (retrieval commands, each ending in
    /// "END\r\n"); with one, reading also stops at the first "END\r\n", so a reply shorter
    /// than expected (a miss) fails at once. Throws std::runtime_error ("raw: ...") unless the
    /// reply is exactly `expect` bytes ending in "END\r\n". `expect` 0: one reply of any
    /// length (read until it ends in "END\r\n"), for learning a reply's size. Returns the
    /// bytes received.
    std::size_t round_trip(std::string_view request, std::size_t expect, std::size_t replies = 1);

  private:
    explicit RawSocket(int fd);
    /// The rest of a request the first send() did not take (or an error).
    [[gnu::cold]] void send_rest(std::string_view request, ssize_t sent);

    int fd_ = -1;
    std::unique_ptr<char[]> buf_;  // receive buffer, reused: nothing allocates per round trip
};

}  // namespace folsom::bench
