#include "support/private_network.hpp"

#include "support/child_process.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sched.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace folsom::test {

CommandResult run_command(const std::vector<std::string>& argv) {
    CommandResult r;
    int out[2];
    if (argv.empty() || ::pipe2(out, O_CLOEXEC) != 0) return r;
    std::vector<char*> args;
    for (auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(out[0]);
        ::close(out[1]);
        return r;
    }
    if (pid == 0) {
        ::dup2(out[1], 1);
        ::dup2(out[1], 2);
        ::execvp(args[0], args.data());
        ::_exit(127);
    }
    ::close(out[1]);
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(out[0], buf, sizeof buf);
        if (n > 0) {
            r.output.append(buf, static_cast<std::size_t>(n));
        } else if (n == 0 || errno != EINTR) {
            break;
        }
    }
    ::close(out[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

std::string private_network_unavailable() {
    if (::geteuid() != 0) return "needs root to create a network namespace and shape it";
    for (const char* p : {"ip", "tc"})
        if (!have_program(p)) return std::string("`") + p + "` (iproute2) is not installed";
    return "";
}

std::string narrow_ephemeral_ports(std::uint16_t low, std::uint16_t high) {
    std::ofstream range("/proc/sys/net/ipv4/ip_local_port_range");
    range << low << ' ' << high << '\n';
    return range.flush().good() ? "" : "cannot write /proc/sys/net/ipv4/ip_local_port_range";
}

std::string tc(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"tc"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_command(argv);
    return r.exit_code == 0 ? "" : "tc failed: " + r.output;
}

std::string run_in_private_network(const std::function<void()>& body) {
    std::string failure;
    // A thread of its own: unshare(CLONE_NEWNET) moves only the calling thread, and threads and
    // processes it starts afterwards inherit its namespace; the rest of the test process (and
    // any later test in it) stays on the host's network.
    std::thread t([&] {
        if (::unshare(CLONE_NEWNET) != 0) {
            failure = std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
            return;
        }
        for (const std::vector<std::string>& cmd :
             {std::vector<std::string>{"ip", "link", "set", "lo", "mtu", "1500"},
              std::vector<std::string>{"ip", "link", "set", "lo", "up"}}) {
            auto r = run_command(cmd);
            if (r.exit_code != 0) {
                failure = "ip link set lo: " + r.output;
                return;
            }
        }
        body();
    });
    t.join();
    return failure;
}

}  // namespace folsom::test
