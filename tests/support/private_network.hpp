// PrivateNetwork: runs a test body inside a network namespace of its own, so that the test may
// shape, throttle and drop traffic (tc, nft) without touching the host's network. Only `lo` of
// that namespace is used: memcached listens on its 127.0.0.1, the client connects there.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace folsom::test {

/// What a command printed (stdout and stderr together) and how it ended.
struct CommandResult {
    int exit_code = -1;  ///< the exit status; -1 when it could not be run or was killed
    std::string output;  ///< stdout and stderr, interleaved
};

/// Runs argv (argv[0] looked up in PATH) and waits for it.
CommandResult run_command(const std::vector<std::string>& argv);

/// Why this process cannot make a private network namespace and shape it (not root, `ip` or
/// `tc` missing, unshare refused), or "" when it can. Checked in the calling thread, so a test
/// can GTEST_SKIP with the reason.
std::string private_network_unavailable();

/// Runs `body` on a new thread that has moved into a new, empty network namespace
/// (unshare(CLONE_NEWNET)) whose `lo` is up with a 1500-byte MTU (as on a real link, so that
/// shaping works packet by packet rather than on 64 KiB loopback packets). Everything started
/// from that thread -- memcached processes, ip/tc/nft commands, the client's I/O thread,
/// proxies -- lives in the namespace, which the kernel removes when the last of them ends: a
/// crashed test leaves nothing behind on the host. Returns "" after `body` ran, or why the
/// namespace could not be set up (body not run).
std::string run_in_private_network(const std::function<void()>& body);

/// Narrows the ephemeral port range of the calling thread's network namespace to [low, high]
/// (net sysctls are per namespace, and /proc/sys/net is the opener's). With 40000..40001, the
/// first connect to 127.0.0.1:40000 (nobody listening) is given port 40000 itself -- connect()
/// tries the even port first -- and TCP connects the socket to itself. "" on success, else why.
std::string narrow_ephemeral_ports(std::uint16_t low, std::uint16_t high);

/// Runs `tc` with the arguments, in the calling thread's namespace. "" on success, else what
/// tc printed.
std::string tc(const std::vector<std::string>& args);

}  // namespace folsom::test
