// The `folsom` program, run as a subprocess against real memcached processes: every command
// and exit status, binary values through stdin, refused input (nothing sent), unreachable
// servers, --help, `bench` whose JSON counts match the server's own statistics, SASL
// (memcached -S) and TLS (memcached -Z) logins from the command line, and route trees from
// --config (every refused configuration one line and exit 2).
#include "support/elasticache_endpoint.hpp"
#include "support/memcached_server.hpp"
#include "support/sasl_database.hpp"
#include "support/tls_files.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <regex>
#include <signal.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace {

using namespace std::chrono_literals;
using folsom::test::MemcachedServer;
using folsom::test::raw_request;
using folsom::test::stat_value;

const std::string folsom_binary = FOLSOM_BINARY_DIR "/tools/folsom";

struct Run {
    int status = -1;  ///< exit status, or 128 + signal
    std::string out;
    std::string err;
    std::chrono::milliseconds elapsed{0};

    /// stderr lines (a trailing newline does not start another line).
    int err_lines() const {
        int n = 0;
        for (char c : err)
            n += c == '\n';
        if (!err.empty() && err.back() != '\n') ++n;
        return n;
    }
};

/// Runs the folsom binary with `args`, feeding `input` on stdin. $MEMCACHED_SERVERS and
/// $MEMCACHED_PASSWORD are removed from its environment; `env_servers` and `extra_env`
/// ("NAME=value" entries) add them back. Killed after 20 s.
Run run(const std::vector<std::string>& args, const std::string& input = {},
        const std::string* env_servers = nullptr, const std::vector<std::string>& extra_env = {}) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, "MEMCACHED_SERVERS=", 18) != 0 &&
            std::strncmp(*e, "MEMCACHED_PASSWORD=", 19) != 0)
            env.emplace_back(*e);
    if (env_servers) env.push_back("MEMCACHED_SERVERS=" + *env_servers);
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    std::vector<std::string> argv_s = {folsom_binary};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv, envp;
    for (auto& a : argv_s)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env)
        envp.push_back(e.data());
    envp.push_back(nullptr);

    int in[2], out[2], err[2];
    if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC))
        throw std::runtime_error("pipe failed");
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        ::execve(argv[0], argv.data(), envp.data());
        ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    ::signal(SIGPIPE, SIG_IGN);

    Run r;
    std::size_t written = 0;
    int in_fd = in[1];
    if (input.empty()) {
        ::close(in_fd);
        in_fd = -1;
    } else {
        ::fcntl(in_fd, F_SETFL, O_NONBLOCK);
    }
    bool out_open = true, err_open = true;
    const auto deadline = start + 20s;
    while ((out_open || err_open) && std::chrono::steady_clock::now() < deadline) {
        pollfd fds[3];
        int n = 0;
        int i_out = -1, i_err = -1, i_in = -1;
        if (out_open) fds[i_out = n++] = {out[0], POLLIN, 0};
        if (err_open) fds[i_err = n++] = {err[0], POLLIN, 0};
        if (in_fd >= 0) fds[i_in = n++] = {in_fd, POLLOUT, 0};
        if (::poll(fds, static_cast<nfds_t>(n), 100) <= 0) continue;
        char buf[65536];
        auto drain = [&](int idx, int fd, bool& open, std::string& into) {
            if (idx < 0 || !(fds[idx].revents & (POLLIN | POLLHUP | POLLERR))) return;
            const ssize_t k = ::read(fd, buf, sizeof buf);
            if (k <= 0)
                open = false;
            else
                into.append(buf, static_cast<std::size_t>(k));
        };
        drain(i_out, out[0], out_open, r.out);
        drain(i_err, err[0], err_open, r.err);
        if (i_in >= 0 && (fds[i_in].revents & (POLLOUT | POLLERR | POLLHUP))) {
            const ssize_t k = ::write(in_fd, input.data() + written, input.size() - written);
            if (k > 0) written += static_cast<std::size_t>(k);
            if (k < 0 || written == input.size()) {
                ::close(in_fd);
                in_fd = -1;
            }
        }
    }
    if (in_fd >= 0) ::close(in_fd);
    ::close(out[0]);
    ::close(err[0]);
    if (out_open || err_open) ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    r.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

std::string stats(const MemcachedServer& s) {
    return raw_request(s.port(), "stats\r\n", "END\r\n");
}

/// The number after "key": in a flat JSON text (enough for the bench report).
long long json_number(const std::string& json, const std::string& key) {
    std::smatch m;
    if (!std::regex_search(json, m, std::regex("\"" + key + "\": (-?[0-9.]+)"))) return -1;
    return std::stoll(m[1]);
}

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::string temp_path(const std::string& name) {
    return ::testing::TempDir() + "folsom_cli_" + std::to_string(::getpid()) + "_" + name;
}

#define EXPECT_ONE_ERROR_LINE(r, needle)                               \
    do {                                                               \
        EXPECT_EQ((r).status, 2) << (r).err;                           \
        EXPECT_EQ((r).err_lines(), 1) << (r).err;                      \
        EXPECT_NE((r).err.find(needle), std::string::npos) << (r).err; \
        EXPECT_EQ((r).err.rfind("folsom: ", 0), 0u) << (r).err;        \
    } while (0)

class Cli : public ::testing::Test {
  protected:
    MemcachedServer server;
    std::vector<std::string> with(std::vector<std::string> args) const {
        args.insert(args.begin(), {"--servers", server.address()});
        return args;
    }
};

// ---- help ---------------------------------------------------------------------------------

TEST(CliHelp, ProgramAndEveryCommandHaveHelp) {
    const auto top = run({"--help"});
    EXPECT_EQ(top.status, 0);
    EXPECT_TRUE(top.err.empty());
    for (const char* cmd :
         {"get", "gets", "set", "add", "replace", "append", "prepend", "cas", "delete", "incr",
          "decr", "touch", "stats", "flush", "version", "bench"}) {
        EXPECT_NE(top.out.find(cmd), std::string::npos) << cmd;
        const auto r = run({cmd, "--help"});
        EXPECT_EQ(r.status, 0) << cmd;
        EXPECT_NE(r.out.find("Usage"), std::string::npos) << cmd << ": " << r.out;
        EXPECT_TRUE(r.err.empty()) << cmd;
    }
    EXPECT_NE(run({"bench", "--help"}).out.find("--depth"), std::string::npos);
    for (const char* flag : {"--username", "$MEMCACHED_PASSWORD", "--tls", "--tls-ca", "--tls-cert",
                             "--tls-key", "--tls-server-name"})
        EXPECT_NE(top.out.find(flag), std::string::npos) << flag;
}

TEST(CliHelp, BadArgumentsAreOneLineAndExit2) {
    EXPECT_ONE_ERROR_LINE(run({}), "subcommand");
    EXPECT_ONE_ERROR_LINE(run({"frobnicate"}), "folsom");
    EXPECT_ONE_ERROR_LINE(run({"get"}), "KEY");
    EXPECT_ONE_ERROR_LINE(run({"incr", "k", "lots"}), "N");
    EXPECT_ONE_ERROR_LINE(run({"--timeout-ms", "0", "get", "k"}), "timeout");
    EXPECT_ONE_ERROR_LINE(run({"--protocol", "smoke", "get", "k"}), "protocol");
    EXPECT_ONE_ERROR_LINE(run({"--servers", "a:b:c:d", "get", "k"}), "--servers");
    EXPECT_ONE_ERROR_LINE(run({"bench", "--op", "fly"}), "op");
}

// ---- key commands ---------------------------------------------------------------------------

TEST_F(Cli, SetGetAndMiss) {
    auto r = run(with({"set", "k", "hello"}));
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "STORED\n");
    r = run(with({"get", "k"}));
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "hello");  // exactly as stored: no newline added
    EXPECT_TRUE(r.err.empty());
    r = run(with({"get", "missing"}));
    EXPECT_EQ(r.status, 1);
    EXPECT_TRUE(r.out.empty());
    EXPECT_TRUE(r.err.empty());
    // A value that looks like an option, after "--".
    EXPECT_EQ(run(with({"set", "neg", "--", "-5"})).status, 0);
    EXPECT_EQ(run(with({"get", "neg"})).out, "-5");
    // An empty value is a value.
    EXPECT_EQ(run(with({"set", "empty", ""})).status, 0);
    r = run(with({"get", "empty"}));
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "");
}

TEST_F(Cli, EveryByteValueThroughStdinRoundTrips) {
    std::string value;
    for (int rep = 0; rep < 4; ++rep)
        for (int b = 0; b < 256; ++b)
            value.push_back(static_cast<char>(b));
    value += "\r\nEND\r\n";  // protocol-looking bytes inside the data
    auto r = run(with({
                     "set",
                     "--flags",
                     "42",
                     "bin",
                 }),
                 value);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "STORED\n");
    r = run(with({"get", "bin"}));
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, value);
    // The server holds exactly those bytes, with the flags.
    const std::string raw = raw_request(server.port(), "get bin\r\n", "END\r\n");
    EXPECT_EQ(raw, "VALUE bin 42 " + std::to_string(value.size()) + "\r\n" + value + "\r\nEND\r\n");
    // gets: "<cas> <flags> <length>\n" then the bytes.
    r = run(with({"gets", "bin"}));
    EXPECT_EQ(r.status, 0);
    const auto nl = r.out.find('\n');
    ASSERT_NE(nl, std::string::npos);
    std::istringstream head(r.out.substr(0, nl));
    unsigned long long cas = 0, flags = 0, length = 0;
    head >> cas >> flags >> length;
    EXPECT_GT(cas, 0u);
    EXPECT_EQ(flags, 42u);
    EXPECT_EQ(length, value.size());
    EXPECT_EQ(r.out.substr(nl + 1), value);
    EXPECT_EQ(run(with({"gets", "nothing"})).status, 1);
}

TEST_F(Cli, ConditionalStores) {
    EXPECT_EQ(run(with({"add", "k", "1"})).out, "STORED\n");
    auto r = run(with({"add", "k", "2"}));
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "NOT_STORED\n");
    r = run(with({"replace", "absent", "x"}));
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "NOT_STORED\n");
    EXPECT_EQ(run(with({"replace", "k", "mid"})).status, 0);
    EXPECT_EQ(run(with({"append", "k", "--", "-end"})).status, 0);
    EXPECT_EQ(run(with({"prepend", "k", "start-"})).status, 0);
    EXPECT_EQ(run(with({"get", "k"})).out, "start-mid-end");
    EXPECT_EQ(run(with({"append", "absent", "x"})).status, 1);
    EXPECT_EQ(run(with({"prepend", "absent", "x"})).status, 1);
    // A negative ttl stores an already expired item.
    EXPECT_EQ(run(with({"set", "--ttl", "-1", "gone", "x"})).status, 0);
    EXPECT_EQ(run(with({"get", "gone"})).status, 1);
}

TEST_F(Cli, CheckAndSet) {
    ASSERT_EQ(run(with({"set", "c", "v1"})).status, 0);
    auto g = run(with({"gets", "c"}));
    ASSERT_EQ(g.status, 0);
    const std::string cas = g.out.substr(0, g.out.find(' '));
    auto r = run(with({"cas", "c", cas, "v2"}));
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "STORED\n");
    r = run(with({"cas", "c", cas, "v3"}));  // the cas has moved on
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "EXISTS\n");
    r = run(with({"cas", "nope", cas, "v"}));
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "NOT_FOUND\n");
    EXPECT_EQ(run(with({"get", "c"})).out, "v2");
    r = run(with({"cas", "c", "notanumber", "v"}));
    EXPECT_ONE_ERROR_LINE(r, "CAS");
}

TEST_F(Cli, DeleteTouchIncrDecr) {
    ASSERT_EQ(run(with({"set", "n", "10"})).status, 0);
    auto r = run(with({"incr", "n", "5"}));
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "15\n");
    r = run(with({"decr", "n", "100"}));
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "0\n");
    r = run(with({"incr", "missing", "1"}));
    EXPECT_EQ(r.status, 1);
    EXPECT_TRUE(r.out.empty());
    EXPECT_EQ(run(with({"decr", "missing", "1"})).status, 1);
    // incr on a value that is not a number: the server refuses; that is an error.
    ASSERT_EQ(run(with({"set", "word", "abc"})).status, 0);
    EXPECT_ONE_ERROR_LINE(run(with({"incr", "word", "1"})), server.address());

    r = run(with({"touch", "n", "100"}));
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "TOUCHED\n");
    r = run(with({"touch", "missing", "100"}));
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "NOT_FOUND\n");

    r = run(with({"delete", "n"}));
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "DELETED\n");
    r = run(with({"delete", "n"}));
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "NOT_FOUND\n");
}

// ---- every-server commands --------------------------------------------------------------------

TEST_F(Cli, StatsVersionFlushOnEveryServer) {
    MemcachedServer second;
    const std::string both = server.address() + "," + second.address();
    auto r = run({"--servers", both, "stats"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find(server.address() + " cmd_get "), std::string::npos);
    EXPECT_NE(r.out.find(second.address() + " cmd_get "), std::string::npos);
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string a, b, c;
        words >> a >> b >> c;
        EXPECT_TRUE(a == server.address() || a == second.address()) << line;
        EXPECT_FALSE(b.empty()) << line;
    }
    r = run({"--servers", both, "stats", "settings"});
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find(second.address() + " maxbytes "), std::string::npos);

    r = run({"--servers", both, "version"});
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out.rfind(server.address() + " 1.", 0), 0u) << r.out;
    EXPECT_NE(r.out.find(std::string(1, '\n').append(second.address()).append(" 1.")),
              std::string::npos)
        << r.out;  // (appended: g++ 12 warns falsely on "literal" + std::string)

    ASSERT_EQ(run(with({"set", "f", "x"})).status, 0);
    r = run({"--servers", both, "flush"});
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, server.address() + " OK\n" + second.address() + " OK\n");
    EXPECT_EQ(run(with({"get", "f"})).status, 1);
    EXPECT_EQ(run(with({"flush", "--delay", "0"})).status, 0);

    // One server down: the others still answer; one error line names the one that did not.
    second.kill();
    r = run({"--servers", both, "version"});
    EXPECT_ONE_ERROR_LINE(r, second.address());
    EXPECT_NE(r.out.find(server.address() + " 1."), std::string::npos);
}

TEST_F(Cli, DeleteAllDeletesOnEveryServer) {
    MemcachedServer second;
    const std::string both = server.address() + "," + second.address();
    for (auto* s : {&server, &second})
        ASSERT_EQ(raw_request(s->port(), "set dup 0 0 1\r\nx\r\n"), "STORED\r\n");
    auto r = run({"--servers", both, "delete-all", "dup"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, server.address() + " DELETED\n" + second.address() + " DELETED\n");
    ASSERT_EQ(raw_request(second.port(), "set dup 0 0 1\r\nx\r\n"), "STORED\r\n");
    r = run({"--servers", both, "delete-all", "dup"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, server.address() + " NOT_FOUND\n" + second.address() + " DELETED\n");
    r = run({"--servers", both, "delete-all", "dup"});
    EXPECT_EQ(r.status, 1);  // nowhere
    const std::string before = stats(second);
    EXPECT_ONE_ERROR_LINE(run({"--servers", both, "delete-all", "a b"}), "invalid key");
    EXPECT_EQ(stat_value(stats(second), "delete_misses"), stat_value(before, "delete_misses"));
    // One server down: the other still deletes; one error line names the one that did not.
    ASSERT_EQ(raw_request(server.port(), "set dup 0 0 1\r\nx\r\n"), "STORED\r\n");
    second.kill();
    r = run({"--servers", both, "delete-all", "dup"});
    EXPECT_ONE_ERROR_LINE(r, second.address());
    EXPECT_EQ(r.out, server.address() + " DELETED\n");
}

TEST_F(Cli, ElastiCacheEndpointListsTheServers) {
    MemcachedServer second;
    folsom::test::ElastiCacheEndpoint endpoint;
    endpoint.serve(4, folsom::test::ElastiCacheEndpoint::entries(
                          {{"127.0.0.1", server.port(), 1}, {"127.0.0.1", second.port(), 1}}));
    auto r = run({"--elasticache", endpoint.address(), "version"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind(server.address() + " 1.", 0), 0u) << r.out;
    EXPECT_NE(r.out.find(std::string(1, '\n').append(second.address()).append(" 1.")),
              std::string::npos)
        << r.out;
    EXPECT_EQ(endpoint.requests(), 1u);

    endpoint.serve_raw("CONFIG cluster 0 3\r\nbad\r\nEND\r\n");
    EXPECT_ONE_ERROR_LINE(run({"--elasticache", endpoint.address(), "version"}),
                          "cannot discover the servers from the ElastiCache endpoint");
    const std::string nowhere = "127.0.0.1:" + std::to_string(folsom::test::free_loopback_port());
    EXPECT_ONE_ERROR_LINE(run({"--elasticache", nowhere, "version"}), "cannot connect");
    EXPECT_ONE_ERROR_LINE(run({"--elasticache", "a:b:c:d", "version"}), "--elasticache");
    EXPECT_ONE_ERROR_LINE(
        run({"--servers", server.address(), "--elasticache", endpoint.address(), "version"}),
        "excludes");
}

TEST_F(Cli, ServersDefaultToTheEnvironment) {
    const std::string addr = server.address();
    auto r = run({"version"}, {}, &addr);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind(addr + " ", 0), 0u);
    // --servers wins over the environment.
    const std::string bogus = "127.0.0.1:1";
    r = run({"--servers", addr, "version"}, {}, &bogus);
    EXPECT_EQ(r.status, 0) << r.err;
}

// ---- refused input: exit 2, one line, nothing sent ------------------------------------------

TEST_F(Cli, InvalidKeysAreRefusedBeforeAnythingIsSent) {
    const std::string before = stats(server);
    const std::vector<std::string> bad = {
        "a b", "line\r\nset x 0 0 1", std::string(251, 'k'), "tab\tkey", "del\x7f", "\x01",
        ""};  // (argv cannot carry a NUL byte)
    for (const auto& key : bad) {
        SCOPED_TRACE(key);
        EXPECT_ONE_ERROR_LINE(run(with({"get", key})), "invalid key");
        EXPECT_ONE_ERROR_LINE(run(with({"set", key, "v"})), "invalid key");
        EXPECT_ONE_ERROR_LINE(run(with({"delete", key})), "invalid key");
        EXPECT_ONE_ERROR_LINE(run(with({"incr", key, "1"})), "invalid key");
    }
    const std::string after = stats(server);
    for (const char* s :
         {"cmd_get", "cmd_set", "delete_misses", "delete_hits", "incr_misses", "get_misses"})
        EXPECT_EQ(stat_value(after, s), stat_value(before, s)) << s;
}

TEST_F(Cli, TooLargeValuesAreRefused) {
    const std::string before = stats(server);
    const std::string huge(1024 * 1024 + 1, 'x');
    auto r = run(with({"set", "big"}), huge);
    EXPECT_ONE_ERROR_LINE(r, "too large");
    EXPECT_EQ(stat_value(stats(server), "cmd_set"), stat_value(before, "cmd_set"));
    // Exactly the client's limit passes the client but not memcached's 1 MiB item size.
    r = run(with({"set", "big"}), std::string(1024 * 1024, 'x'));
    EXPECT_ONE_ERROR_LINE(r, server.address());
    EXPECT_EQ(run(with({"get", "big"})).status, 1);
}

TEST(CliUnreachable, ExitsQuicklyNamingTheServer) {
    const std::string addr = "127.0.0.1:" + std::to_string(folsom::test::free_loopback_port());
    for (const std::vector<std::string>& cmd : std::vector<std::vector<std::string>>{
             {"get", "k"}, {"set", "k", "v"}, {"stats"}, {"version"}, {"flush"}}) {
        std::vector<std::string> args = {"--servers", addr};
        args.insert(args.end(), cmd.begin(), cmd.end());
        const auto r = run(args);
        EXPECT_ONE_ERROR_LINE(r, addr);
        EXPECT_NE(r.err.find("cannot connect"), std::string::npos) << r.err;
        EXPECT_LT(r.elapsed, 2s) << cmd.front();
    }
    const auto r = run({"--servers", addr, "bench", "--duration", "1"});
    EXPECT_ONE_ERROR_LINE(r, addr);
    EXPECT_LT(r.elapsed, 3s);
}

TEST_F(Cli, AServerThatStopsAnsweringTimesOut) {
    server.freeze();  // keeps its socket: connects succeed, replies never come
    for (const std::vector<std::string>& cmd :
         std::vector<std::vector<std::string>>{{"get", "k"}, {"version"}, {"bench"}}) {
        std::vector<std::string> args = {"--timeout-ms", "300"};
        args.insert(args.end(), cmd.begin(), cmd.end());
        const auto r = run(with(args));
        EXPECT_ONE_ERROR_LINE(r, server.address());
        EXPECT_NE(r.err.find("timed out"), std::string::npos) << r.err;
        EXPECT_LT(r.elapsed, 2s) << cmd.front();
    }
    server.thaw();
}

TEST_F(Cli, UnavailableProtocolIsAClearError) {
    // The binary and meta drivers arrive separately; until then connect refuses them.
    for (const char* p : {"binary", "meta"}) {
        const auto r = run(with({"--protocol", p, "get", "k"}));
        if (r.status == 2) {
            EXPECT_ONE_ERROR_LINE(r, p);
        } else {
            EXPECT_EQ(r.status, 1) << r.err;  // the driver exists: a plain miss
        }
    }
}

TEST_F(Cli, BinaryKeysAreWrittenWithEscapesAndTravelOverMeta) {
    // Byte values across 0..255 (0, 51, ..., 255) as keys, written as \xHH: set, get, incr,
    // touch, delete.
    for (int b = 0; b < 256; b += 51) {
        char key[16];
        std::snprintf(key, sizeof key, "\\x%02xk\\x%02X", b, 255 - b);
        SCOPED_TRACE(key);
        auto r = run(with({"--binary-keys", "set", key, "--", std::to_string(b)}));
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.out, "STORED\n");
        r = run(with({"--binary-keys", "get", key}));
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.out, std::to_string(b));
        r = run(with({"--binary-keys", "incr", key, "1"}));
        EXPECT_EQ(r.out, std::to_string(b + 1) + "\n") << r.err;
        r = run(with({"--binary-keys", "touch", key, "60"}));
        EXPECT_EQ(r.out, "TOUCHED\n") << r.err;
        r = run(with({"--binary-keys", "delete", key}));
        EXPECT_EQ(r.out, "DELETED\n") << r.err;
        r = run(with({"--binary-keys", "get", key}));
        EXPECT_EQ(r.status, 1) << r.err;
    }
    // "\\" and "\x5c" are the same backslash; NUL, space, CR and LF inside a key.
    ASSERT_EQ(run(with({"--binary-keys", "set", "a\\x00b\\\\ \\x0d\\x0a", "v"})).status, 0);
    EXPECT_EQ(run(with({"--binary-keys", "get", "a\\x00b\\x5c\\x20\\r"})).status, 2);
    EXPECT_EQ(run(with({"--binary-keys", "get", "a\\x00b\\x5C \\x0D\\x0A"})).out, "v");
    // A text key means the same item with or without --binary-keys.
    ASSERT_EQ(run(with({"set", "plain", "text"})).status, 0);
    EXPECT_EQ(run(with({"--binary-keys", "get", "plain"})).out, "text");

    // Refused: a bad escape, a key over 186 bytes, another protocol.
    EXPECT_ONE_ERROR_LINE(run(with({"--binary-keys", "get", "a\\qb"})), "bad escape");
    EXPECT_ONE_ERROR_LINE(run(with({"--binary-keys", "get", "a\\x0"})), "bad escape");
    EXPECT_ONE_ERROR_LINE(run(with({"--binary-keys", "get", std::string(187, 'k')})),
                          "1 to 186 bytes");
    EXPECT_EQ(run(with({"--binary-keys", "get", std::string(186, 'k')})).status, 1);
    for (const char* p : {"ascii", "binary"})
        EXPECT_ONE_ERROR_LINE(run(with({"--protocol", p, "--binary-keys", "get", "k"})),
                              "--binary-keys needs --protocol meta");
}

// ---- bench ------------------------------------------------------------------------------------

struct BenchCase {
    std::vector<std::string> args;
    long long ops;
};

TEST_F(Cli, SetNoreplyReportsTheTrueOutcomeOverMetaAndBinaryAndSentOverAscii) {
    for (const char* p : {"meta", "binary", "ascii"}) {
        SCOPED_TRACE(p);
        const std::string key = std::string("quiet-") + p;
        auto r = run(with({"--protocol", p, "set", "--noreply", key, "v1"}));
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.out, std::string(p) == "ascii" ? "SENT\n" : "STORED\n");
        // add of a key that exists: the true NOT_STORED (exit 1) where the protocol tells it.
        r = run(with({"--protocol", p, "add", "--noreply", key, "v2"}));
        if (std::string(p) == "ascii") {
            EXPECT_EQ(r.status, 0) << r.err;
            EXPECT_EQ(r.out, "SENT\n");
        } else {
            EXPECT_EQ(r.status, 1) << r.err;
            EXPECT_EQ(r.out, "NOT_STORED\n");
        }
        const std::string held = raw_request(server.port(), "get " + key + "\r\n", "END\r\n");
        EXPECT_NE(held.find("\r\nv1\r\n"), std::string::npos) << held;
    }
}

TEST_F(Cli, BenchSetNoreplyCountsEverySet) {
    for (const char* p : {"meta", "binary", "ascii"}) {
        SCOPED_TRACE(p);
        const std::string json_path = temp_path(std::string("noreply_") + p + ".json");
        const long long before = folsom::test::stat_value(stats(server), "cmd_set");
        const auto r = run(with({"--protocol", p, "bench", "--op", "set", "--noreply", "--requests",
                                 "2000", "--keys", "100", "--json", json_path}));
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_NE(r.out.find("noreply"), std::string::npos) << r.out;
        const std::string json = read_file(json_path);
        EXPECT_EQ(json_number(json, "ops"), 2000) << json;
        EXPECT_EQ(json_number(json, "errors"), 0) << json;
        // Every quiet set reached the server (ascii too: the bench exits after they are sent,
        // and memcached reads them before the connection's close).
        const auto deadline = std::chrono::steady_clock::now() + 5s;
        long long after = 0;
        while ((after = folsom::test::stat_value(stats(server), "cmd_set")) - before < 2000 &&
               std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(10ms);
        EXPECT_EQ(after - before, 2000);
        ::unlink(json_path.c_str());
    }
}

TEST_F(Cli, BenchCountsMatchTheServersStatistics) {
    const std::vector<BenchCase> cases = {
        {{"--op", "get", "--keys", "300", "--requests", "4000", "--depth", "16"}, 4000},
        {{"--op", "mixed", "--set-ratio", "0.3", "--keys", "500", "--requests", "3000", "--depth",
          "8", "--connections", "2", "--threads", "2"},
         3000},
        {{"--op", "mget", "--batch", "10", "--keys", "1000", "--requests", "500", "--no-preload"},
         500},
        {{"--op", "set", "--keys", "100", "--requests", "1000", "--value-size", "300"}, 1000},
    };
    for (const auto& c : cases) {
        const std::string json_path = temp_path("bench.json");
        std::vector<std::string> args = {"bench", "--json", json_path};
        args.insert(args.end(), c.args.begin(), c.args.end());
        const std::string before = stats(server);
        const auto r = run(with(args));
        const std::string after = stats(server);
        ASSERT_EQ(r.status, 0) << r.err << r.out;
        EXPECT_TRUE(r.err.empty()) << r.err;
        const std::string json = read_file(json_path);
        SCOPED_TRACE(json);
        auto delta = [&](const char* s) { return stat_value(after, s) - stat_value(before, s); };
        EXPECT_EQ(json_number(json, "ops"), c.ops);
        EXPECT_EQ(json_number(json, "errors"), 0);
        EXPECT_EQ(json_number(json, "gets"), delta("cmd_get"));
        EXPECT_EQ(json_number(json, "hits"), delta("get_hits"));
        EXPECT_EQ(json_number(json, "misses"), delta("get_misses"));
        EXPECT_EQ(json_number(json, "sets") + json_number(json, "preload_sets"), delta("cmd_set"));
        EXPECT_EQ(json_number(json, "hits") + json_number(json, "misses"),
                  json_number(json, "gets"));
        EXPECT_GT(json_number(json, "ops_per_sec"), 0);
        EXPECT_NE(json.find("\"latency_us\": {\"p50\": "), std::string::npos);
        EXPECT_NE(json.find("\"servers\": [\"" + server.address() + "\"]"), std::string::npos);
        ::unlink(json_path.c_str());
    }
}

TEST_F(Cli, BenchMetricsTableMatchesTheServersStatistics) {
    const std::string before = stats(server);
    const auto r = run(with({"bench", "--metrics", "--op", "mixed", "--set-ratio", "0.3", "--keys",
                             "400", "--requests", "3000", "--threads", "2"}));
    const std::string after = stats(server);
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    auto delta = [&](const char* s) { return stat_value(after, s) - stat_value(before, s); };
    EXPECT_NE(r.out.find("per-server metrics (client side):\n"), std::string::npos) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex("server +requests +hits +misses +errors +p50 "
                                                    "us +p99 us +bytes out +bytes in +reconnects")))
        << r.out;
    // The server's row: measured phase only (the preload's sets are not in it).
    std::smatch m;
    const std::regex row(server.address() +
                         " +([0-9]+) +([0-9]+) +([0-9]+) +([0-9]+) +([0-9.]+) +([0-9.]+) "
                         "+([0-9]+) +([0-9]+) +([0-9]+)\n");
    ASSERT_TRUE(std::regex_search(r.out, m, row)) << r.out;
    EXPECT_EQ(std::stoll(m[1]), 3000);
    EXPECT_EQ(std::stoll(m[2]), delta("get_hits"));
    EXPECT_EQ(std::stoll(m[3]), delta("get_misses"));
    EXPECT_EQ(std::stoll(m[2]) + std::stoll(m[3]) + delta("cmd_set") - 400, 3000);
    EXPECT_EQ(std::stoll(m[4]), 0);
    EXPECT_GT(std::stod(m[6]), 0.0);              // p99
    EXPECT_GE(std::stod(m[6]), std::stod(m[5]));  // p99 >= p50
    EXPECT_GT(std::stoll(m[7]), 0);
    EXPECT_GT(std::stoll(m[8]), 0);
    EXPECT_EQ(std::stoll(m[9]), 0);
}

TEST_F(Cli, BenchSummaryProgressAndHtml) {
    const std::string html_path = temp_path("bench.html");
    const auto r = run(with({"bench", "--duration", "1.5", "--keys", "100", "--html", html_path}));
    ASSERT_EQ(r.status, 0) << r.err;
    // Not a terminal: progress as plain lines, no carriage returns.
    EXPECT_EQ(r.out.find('\r'), std::string::npos);
    EXPECT_NE(r.out.find("ops/s"), std::string::npos);
    for (const char* field : {"ops/s", "keys/s", "hits", "misses", "errors", "cpu us/op", "p50",
                              "p90", "p99", "p99.9", "max"})
        EXPECT_NE(r.out.find(field), std::string::npos) << field;
    const std::string html = read_file(html_path);
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_NE(html.find("<svg"), std::string::npos);
    EXPECT_NE(html.find("<polyline"), std::string::npos);
    // Self-contained: no scripts, no fetched resources.
    for (const char* bad : {"<script", "src=", "href=", "@import", "url("})
        EXPECT_EQ(html.find(bad), std::string::npos) << bad;
    ::unlink(html_path.c_str());
}

TEST_F(Cli, BenchKeyOrderApiAndLatencySamplingKeepTheCounts) {
    const std::vector<BenchCase> cases = {
        {{"--op", "get", "--key-order", "sequential", "--keys", "300", "--requests", "3000",
          "--depth", "16", "--threads", "2"},
         3000},
        {{"--op", "mget", "--batch", "10", "--key-order", "sequential", "--keys", "1000",
          "--requests", "400"},
         400},
        {{"--op", "get", "--owning", "--keys", "300", "--requests", "2000"}, 2000},
        {{"--op", "mget", "--batch", "10", "--owning", "--keys", "1000", "--requests", "300"}, 300},
        {{"--op", "mixed", "--key-order", "sequential", "--keys", "500", "--requests", "2000",
          "--latency-every", "4"},
         2000},
    };
    for (const auto& c : cases) {
        const std::string json_path = temp_path("bench_order.json");
        std::vector<std::string> args = {"bench", "--json", json_path};
        args.insert(args.end(), c.args.begin(), c.args.end());
        const std::string before = stats(server);
        const auto r = run(with(args));
        const std::string after = stats(server);
        ASSERT_EQ(r.status, 0) << r.err << r.out;
        const std::string json = read_file(json_path);
        SCOPED_TRACE(json);
        auto delta = [&](const char* s) { return stat_value(after, s) - stat_value(before, s); };
        EXPECT_EQ(json_number(json, "ops"), c.ops);
        EXPECT_EQ(json_number(json, "errors"), 0);
        EXPECT_EQ(json_number(json, "gets"), delta("cmd_get"));
        EXPECT_EQ(json_number(json, "hits"), delta("get_hits"));
        EXPECT_EQ(json_number(json, "misses"), 0);  // every key was preloaded
        // At most 64 requests in flight per thread: every one timed, unless told otherwise.
        const long long every = json_number(json, "latency_every");
        const long long samples = json_number(json, "latency_samples");
        if (every == 1) {
            EXPECT_EQ(samples, c.ops);
        } else {
            EXPECT_EQ(every, 4);
            EXPECT_GE(samples, c.ops / 4 - 64);
            EXPECT_LE(samples, c.ops / 4 + 64);
        }
        ::unlink(json_path.c_str());
    }
}

TEST_F(Cli, BenchTimesAboutSixtyFourRequestsInFlightPerThreadAtAGreaterDepth) {
    const std::string json_path = temp_path("bench_sampled.json");
    const auto r = run(with({"bench", "--op", "get", "--keys", "100", "--depth", "1000",
                             "--requests", "32000", "--json", json_path}));
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("1 request in 16 timed"), std::string::npos) << r.out;
    const std::string json = read_file(json_path);
    EXPECT_EQ(json_number(json, "latency_every"), 16) << json;
    EXPECT_GE(json_number(json, "latency_samples"), 32000 / 16 - 1000) << json;
    EXPECT_LE(json_number(json, "latency_samples"), 32000 / 16 + 1000) << json;
    ::unlink(json_path.c_str());
}

TEST(CliBench, FloorRunsTheSameWorkloadThroughARawSocketAndPrintsTheRatio) {
    struct FloorCase {
        std::vector<std::string> args;
        const char* op;
        long long ops, keys;
    };
    const std::vector<FloorCase> cases = {
        {{"--op", "mget", "--batch", "10", "--keys", "1000", "--depth", "4", "--requests", "300"},
         "mget",
         300,
         3000},
        {{"--op", "get", "--keys", "1000", "--depth", "64", "--requests", "5000"},
         "get",
         5000,
         5000},
        {{"--op", "get", "--keys", "1000", "--depth", "1", "--requests", "200", "--key-order",
          "sequential"},
         "get",
         200,
         200},
        {{"--op", "mget", "--batch", "5000", "--keys", "5000", "--depth", "2", "--requests", "6"},
         "mget",
         6,
         30000},  // 5000 five-byte keys: lines of at most 16 KiB of keys, two per multi-get
    };
    for (const auto& c : cases) {
        const std::string json_path = temp_path("floor.json");
        std::vector<std::string> args = {"bench", "--floor", "--json", json_path};
        args.insert(args.end(), c.args.begin(), c.args.end());
        const auto r = run(args);
        ASSERT_EQ(r.status, 0) << r.err << r.out;
        SCOPED_TRACE(r.out);
        EXPECT_NE(r.out.find(std::string("floor: the same ") + c.op +
                             "s through a raw blocking socket to 127.0.0.1:"),
                  std::string::npos);
        EXPECT_TRUE(
            std::regex_search(r.out, std::regex("\\n  cpu us/op +[0-9.]+ +[0-9.]+ +[0-9.]+x\\n")));
        if (std::string(c.op) == "mget") {
            EXPECT_TRUE(
                std::regex_search(r.out, std::regex("\\n  cpu us/key +[0-9.]+ +[0-9.]+\\n")));
        }
        const std::string json = read_file(json_path);
        const std::size_t floor = json.find("\"floor\": {");
        ASSERT_NE(floor, std::string::npos) << json;
        const std::string f = json.substr(floor);
        EXPECT_EQ(json_number(f, "ops"), c.ops) << f;
        EXPECT_EQ(json_number(f, "keys"), c.keys) << f;
        EXPECT_GT(json_number(f, "sends"), 0) << f;
        EXPECT_NE(f.find("\"cpu_ratio\": "), std::string::npos) << f;
        EXPECT_EQ(json_number(json, "ops"), c.ops);  // folsom's own run, before it
        ::unlink(json_path.c_str());
    }
}

TEST_F(Cli, BenchFloorRefusesWhatARawSocketCannotMeasure) {
    EXPECT_ONE_ERROR_LINE(run(with({"bench", "--floor", "--op", "set", "--requests", "10"})),
                          "--floor measures --op get and --op mget");
    EXPECT_ONE_ERROR_LINE(run(with({"bench", "--floor", "--op", "mixed", "--requests", "10"})),
                          "--floor");
    MemcachedServer second;
    EXPECT_ONE_ERROR_LINE(run({"--servers", server.address() + "," + second.address(), "bench",
                               "--floor", "--requests", "10"}),
                          "--floor needs one server");
    // Without the preload nothing is stored: the floor says so before anything is measured.
    const auto r =
        run(with({"bench", "--floor", "--no-preload", "--keys", "100", "--requests", "10"}));
    EXPECT_ONE_ERROR_LINE(r, "k00 is not stored");
    EXPECT_EQ(r.out.find("ops/s"), std::string::npos) << r.out;
}

TEST(CliBench, StartsAndStopsAPrivateServerByDefault) {
    const std::string json_path = temp_path("embedded.json");
    const auto r = run({"bench", "--requests", "2000", "--json", json_path});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("embedded"), std::string::npos) << r.out;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex("pid ([0-9]+)"))) << r.out;
    const pid_t pid = std::stoi(m[1]);
    EXPECT_NE(::kill(pid, 0), 0) << "the embedded memcached is still running";
    const std::string json = read_file(json_path);
    EXPECT_EQ(json_number(json, "ops"), 2000);
    EXPECT_NE(json.find("\"embedded_server\": true"), std::string::npos);
    ::unlink(json_path.c_str());
}

// ---- SASL (memcached -S) ------------------------------------------------------------------

constexpr const char* sasl_user = "folsom";
constexpr const char* sasl_password = "s3cret pass";

class CliSasl : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        if (!folsom::test::SaslDatabase::available()) return;
        db_ = new folsom::test::SaslDatabase(sasl_user, sasl_password);
        server_ = new MemcachedServer({"-S"});
        missing_plain_ = folsom::test::SaslDatabase::missing_plain(server_->port());
    }
    static void TearDownTestSuite() {
        delete server_;
        server_ = nullptr;
        delete db_;
        db_ = nullptr;
    }
    void SetUp() override {
        if (!server_) GTEST_SKIP() << "saslpasswd2 (Debian package sasl2-bin) is not installed";
        // Without the PLAIN plugin every login would fail like a wrong password: say why.
        if (!missing_plain_.empty()) FAIL() << missing_plain_;
    }

    /// `folsom --servers <the -S server> --username folsom ARGS`, with $MEMCACHED_PASSWORD
    /// set to `password` (nullptr: left unset).
    static ::Run login(std::vector<std::string> args, const char* password = sasl_password) {
        args.insert(args.begin(), {"--servers", server_->address(), "--username", sasl_user});
        std::vector<std::string> env;
        if (password) env.push_back(std::string("MEMCACHED_PASSWORD=") + password);
        return run(args, {}, nullptr, env);
    }

    static inline folsom::test::SaslDatabase* db_ = nullptr;
    static inline MemcachedServer* server_ = nullptr;
    static inline std::string missing_plain_;
};

TEST_F(CliSasl, TheRightPasswordFromTheEnvironmentWorks) {
    auto r = login({"set", "k", "logged in"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "STORED\n");
    r = login({"get", "k"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "logged in");
    // --username alone selects binary; saying so explicitly is the same.
    r = login({"--protocol", "binary", "get", "k"});
    EXPECT_EQ(r.status, 0) << r.err;
    // Without a login the server refuses (so the login above is what made it work).
    r = run({"--servers", server_->address(), "--protocol", "binary", "get", "k"});
    EXPECT_ONE_ERROR_LINE(r, "authentication failed");
}

TEST_F(CliSasl, AWrongPasswordIsOneAuthenticationLine) {
    for (const std::vector<std::string>& cmd :
         std::vector<std::vector<std::string>>{{"get", "k"}, {"set", "k", "v"}, {"version"}}) {
        const auto r = login(cmd, "wrong");
        EXPECT_ONE_ERROR_LINE(r, "authentication failed");
        EXPECT_NE(r.err.find(server_->address()), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find("not connected"), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find("cannot connect"), std::string::npos) << r.err;
    }
}

TEST_F(CliSasl, AMissingPasswordIsOneLine) {
    for (const char* password : {static_cast<const char*>(nullptr), ""}) {
        const auto r = login({"get", "k"}, password);
        EXPECT_ONE_ERROR_LINE(r, "$MEMCACHED_PASSWORD");
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
    // There is no way to give the password on the command line.
    EXPECT_ONE_ERROR_LINE(run({"--servers", server_->address(), "--username", sasl_user,
                               "--password", sasl_password, "get", "k"}),
                          "--password");
}

TEST_F(CliSasl, AServerWithoutSaslIsNamedAsSuch) {
    MemcachedServer plain;  // no -S: the login is an unknown command
    const auto r = run({"--servers", plain.address(), "--username", sasl_user, "get", "k"}, {},
                       nullptr, {std::string("MEMCACHED_PASSWORD=") + sasl_password});
    EXPECT_ONE_ERROR_LINE(r, "does not ask for a login");
}

TEST_F(CliSasl, AServerWithoutThePlainMechanismNamesTheMissingPackage) {
    // A memcached -S whose host lacks libsasl2-modules: it refuses every login with the same
    // bare "Auth failure." a wrong password gets, so the client must tell the cause from the
    // mechanism list, not from the refusal.
    folsom::test::NoSaslPlugins no_plugins;
    MemcachedServer bare({"-S"});
    EXPECT_NE(folsom::test::SaslDatabase::missing_plain(bare.port()), "");
    for (const char* command : {"get", "bench"}) {
        std::vector<std::string> args = {"--servers", bare.address(), "--username", sasl_user,
                                         command};
        if (std::string(command) == "get")
            args.push_back("k");
        else
            args.insert(args.end(), {"--requests", "10"});
        const auto r = run(args, {}, nullptr, {std::string("MEMCACHED_PASSWORD=") + sasl_password});
        EXPECT_ONE_ERROR_LINE(r, "no SASL PLAIN mechanism");
        EXPECT_NE(r.err.find("install libsasl2-modules"), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find("authentication failed"), std::string::npos) << r.err;
    }
}

TEST(CliTextLogin, AsciiAndMetaLogInWithTheAuthFile) {
    folsom::test::TempDir dir;
    const std::string auth = dir.file("auth");
    {
        std::ofstream f(auth);
        f << "app:s3cret\n";
    }
    MemcachedServer server({"-Y", auth});
    for (const char* p : {"ascii", "meta"}) {
        auto ok = run(
            {"--servers", server.address(), "--protocol", p, "--username", "app", "set", "k", "v"},
            {}, nullptr, {"MEMCACHED_PASSWORD=s3cret"});
        EXPECT_EQ(ok.status, 0) << p << ": " << ok.err;
        auto bad =
            run({"--servers", server.address(), "--protocol", p, "--username", "app", "get", "k"},
                {}, nullptr, {"MEMCACHED_PASSWORD=wrong"});
        EXPECT_ONE_ERROR_LINE(bad, "authentication failed");
        EXPECT_EQ(bad.err.find("wrong"), std::string::npos) << bad.err;  // never the password
    }
}

TEST_F(CliSasl, BenchLogsInToo) {
    const std::string json_path = temp_path("sasl_bench.json");
    auto r = login({"bench", "--requests", "500", "--keys", "50", "--json", json_path});
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string json = read_file(json_path);
    EXPECT_EQ(json_number(json, "ops"), 500) << json;
    EXPECT_EQ(json_number(json, "errors"), 0) << json;
    EXPECT_NE(json.find("\"protocol\": \"binary\""), std::string::npos) << json;
    ::unlink(json_path.c_str());
    r = login({"bench", "--requests", "500"}, "wrong");
    EXPECT_ONE_ERROR_LINE(r, "authentication failed");
    // The private server bench would start has no SASL: refused, nothing started.
    r = run({"--username", sasl_user, "bench", "--requests", "10"}, {}, nullptr,
            {std::string("MEMCACHED_PASSWORD=") + sasl_password});
    EXPECT_ONE_ERROR_LINE(r, "--servers");
}

// ---- TLS (memcached -Z) -------------------------------------------------------------------

class CliTls : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { files_ = new folsom::test::TlsFiles(); }
    static void TearDownTestSuite() {
        delete files_;
        files_ = nullptr;
    }
    CliTls() : server(files_->memcached_args()) {}

    std::vector<std::string> with(std::vector<std::string> args) const {
        args.insert(args.begin(), {"--servers", server.address()});
        return args;
    }

    static inline folsom::test::TlsFiles* files_ = nullptr;
    MemcachedServer server;
};

TEST_F(CliTls, WithTheCaItWorks) {
    auto r = run(with({"--tls-ca", files_->p("ca.pem"), "set", "k", "over tls"}));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "STORED\n");
    r = run(with({"--tls-ca", files_->p("ca.pem"), "--tls-server-name", "localhost", "get", "k"}));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "over tls");
    for (const char* p : {"binary", "meta"}) {
        r = run(with({"--protocol", p, "--tls", "--tls-ca", files_->p("ca.pem"), "get", "k"}));
        EXPECT_EQ(r.status, 0) << p << ": " << r.err;
        EXPECT_EQ(r.out, "over tls") << p;
    }
    const std::string json_path = temp_path("tls_bench.json");
    r = run(with({"--tls-ca", files_->p("ca.pem"), "bench", "--requests", "500", "--keys", "50",
                  "--json", json_path}));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(json_number(read_file(json_path), "ops"), 500);
    ::unlink(json_path.c_str());
}

TEST_F(CliTls, AnUnverifiedServerIsOneVerificationLine) {
    for (const std::vector<std::string>& tls : std::vector<std::vector<std::string>>{
             {"--tls"},                             // the system's trust store
             {"--tls-ca", files_->p("other.pem")},  // an unrelated CA
             {"--tls-ca", files_->p("ca.pem"), "--tls-server-name", "not-the-server.example"}}) {
        for (const std::vector<std::string>& cmd :
             std::vector<std::vector<std::string>>{{"get", "k"}, {"version"}, {"bench"}}) {
            std::vector<std::string> args = tls;
            args.insert(args.end(), cmd.begin(), cmd.end());
            const auto r = run(with(args));
            EXPECT_ONE_ERROR_LINE(r, "certificate verification failed");
            EXPECT_NE(r.err.find(server.address()), std::string::npos) << r.err;
        }
    }
}

TEST_F(CliTls, ClientCertificateOptionsAreUsed) {
    MemcachedServer strict(files_->memcached_args(/*require_client_cert=*/true));
    const std::vector<std::string> base = {"--servers", strict.address(), "--tls-ca",
                                           files_->p("ca.pem")};
    auto args = base;
    args.insert(args.end(), {"--tls-cert", files_->p("client.pem"), "--tls-key",
                             files_->p("client.key"), "set", "k", "mutual"});
    auto r = run(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "STORED\n");
    // Without a client certificate the server ends the handshake: an error, on one line.
    args = base;
    args.insert(args.end(), {"get", "k"});
    r = run(args);
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
}

TEST_F(CliTls, LoginOverTls) {
    if (!folsom::test::SaslDatabase::available())
        GTEST_SKIP() << "saslpasswd2 (Debian package sasl2-bin) is not installed";
    folsom::test::SaslDatabase db(sasl_user, sasl_password);
    {
        // The TLS port speaks only TLS: ask a plain -S server of the same host for PLAIN.
        MemcachedServer probe({"-S"});
        const std::string missing = folsom::test::SaslDatabase::missing_plain(probe.port());
        if (!missing.empty()) FAIL() << missing;
    }
    auto args = files_->memcached_args();
    args.insert(args.begin(), "-S");
    MemcachedServer both(args);
    const std::vector<std::string> env = {std::string("MEMCACHED_PASSWORD=") + sasl_password};
    auto r = run({"--servers", both.address(), "--username", sasl_user, "--tls-ca",
                  files_->p("ca.pem"), "set", "k", "both"},
                 {}, nullptr, env);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "STORED\n");
    r = run({"--servers", both.address(), "--username", sasl_user, "--tls-ca", files_->p("ca.pem"),
             "get", "k"},
            {}, nullptr, {"MEMCACHED_PASSWORD=wrong"});
    EXPECT_ONE_ERROR_LINE(r, "authentication failed");
}

TEST_F(CliTls, BadTlsOptionsAreOneLine) {
    EXPECT_ONE_ERROR_LINE(run(with({"--tls-ca", files_->p("missing.pem"), "get", "k"})),
                          "--tls-ca");
    EXPECT_ONE_ERROR_LINE(run(with({"--tls-key", files_->p("client.key"), "get", "k"})),
                          "--tls-key needs --tls-cert");
    // A key that is not the certificate's: OpenSSL refuses it when the client is set up.
    EXPECT_ONE_ERROR_LINE(
        run(with({"--tls-ca", files_->p("ca.pem"), "--tls-cert", files_->p("client.pem"),
                  "--tls-key", files_->p("other.key"), "get", "k"})),
        "TLS");
    EXPECT_ONE_ERROR_LINE(run({"--tls", "bench", "--requests", "10"}), "--servers");
}

// ---- Unix domain sockets ------------------------------------------------------------------

TEST(CliUnixSocket, CommandsAndBenchOverASocketServer) {
    MemcachedServer sock(folsom::test::on_unix_socket);
    const std::string path = sock.address();
    auto r = run({"--servers", path, "set", "k", "over a socket"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "STORED\n");
    r = run({"get", "k"}, {}, &path);  // from $MEMCACHED_SERVERS
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "over a socket");
    EXPECT_NE(raw_request(sock, "get k\r\n", "END\r\n").find("over a socket"), std::string::npos);
    for (const char* p : {"meta", "binary", "ascii"}) {
        SCOPED_TRACE(p);
        const std::string json_path = temp_path(std::string("unix_bench_") + p + ".json");
        const long long before = stat_value(raw_request(sock, "stats\r\n", "END\r\n"), "cmd_get");
        r = run({"--servers", path, "--protocol", p, "bench", "--op", "get", "--keys", "100",
                 "--requests", "3000", "--depth", "16", "--json", json_path});
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_NE(r.out.find(path), std::string::npos) << r.out;  // the server it ran against
        EXPECT_EQ(json_number(read_file(json_path), "ops"), 3000);
        EXPECT_EQ(json_number(read_file(json_path), "errors"), 0);
        EXPECT_EQ(stat_value(raw_request(sock, "stats\r\n", "END\r\n"), "cmd_get") - before, 3000);
        ::unlink(json_path.c_str());
    }
}

TEST(CliUnixSocket, ASocketMixedWithTcpServersAndAWeight) {
    MemcachedServer sock(folsom::test::on_unix_socket);
    MemcachedServer tcp;
    const std::string servers = tcp.address() + "," + sock.address() + "/?3";
    int on_socket = 0;
    for (int i = 0; i < 40; ++i) {
        const std::string key = "mixed:" + std::to_string(i);
        ASSERT_EQ(run({"--servers", servers, "set", key, "v"}).status, 0);
        ASSERT_EQ(run({"--servers", servers, "get", key}).out, "v");
        on_socket +=
            raw_request(sock, "get " + key + "\r\n", "END\r\n").find("VALUE") != std::string::npos;
    }
    // Weight 3 of 4: most keys, not all (the exact split is the placement tests' business).
    EXPECT_GT(on_socket, 20);
    EXPECT_LT(on_socket, 40);
}

TEST(CliUnixSocket, AnUnreachableSocketIsOneLineSayingWhy) {
    folsom::test::TempDir dir;
    const std::string missing = dir.file("none.sock");
    auto r = run({"--servers", missing, "get", "k"});
    EXPECT_ONE_ERROR_LINE(r, missing);
    EXPECT_NE(r.err.find("no such socket file"), std::string::npos) << r.err;
    EXPECT_LT(r.elapsed, 2s);

    const std::string regular = dir.file("regular");
    std::ofstream(regular) << "x";
    r = run({"--servers", regular, "get", "k"});
    EXPECT_ONE_ERROR_LINE(r, regular);
    EXPECT_NE(r.err.find("not a socket"), std::string::npos) << r.err;

    {
        MemcachedServer sock(folsom::test::on_unix_socket);
        sock.kill();  // the socket file stays, nobody listens
        r = run({"--servers", sock.address(), "get", "k"});
        EXPECT_ONE_ERROR_LINE(r, sock.address());
        EXPECT_NE(r.err.find("nothing listens"), std::string::npos) << r.err;
    }

    const std::string too_long = "/tmp/" + std::string(200, 'l') + ".sock";
    r = run({"--servers", too_long, "get", "k"});
    EXPECT_ONE_ERROR_LINE(r, "too long");
    EXPECT_ONE_ERROR_LINE(run({"--servers", "/run/mc.sock", "--tls", "get", "k"}),
                          "TLS over a Unix socket");
}

// ---- routes (--config) --------------------------------------------------------------------

/// A route configuration file, removed when the object goes.
class ConfigFile {
  public:
    ConfigFile(const std::string& name, const std::string& json) : path_(temp_path(name)) {
        std::ofstream(path_, std::ios::binary | std::ios::trunc) << json;
    }
    ~ConfigFile() { ::unlink(path_.c_str()); }
    ConfigFile(const ConfigFile&) = delete;
    ConfigFile& operator=(const ConfigFile&) = delete;
    const std::string& path() const noexcept { return path_; }

  private:
    std::string path_;
};

/// Pools A and B (one server each) under an AllSyncRoute: every write goes to both.
std::string all_sync_config(const MemcachedServer& a, const MemcachedServer& b) {
    return R"({"pools": {"A": {"servers": [")" + a.address() + R"("]},
                         "B": {"servers": [")" +
           b.address() + R"("]}},
               "route": {"type": "AllSyncRoute", "children": ["PoolRoute|A", "PoolRoute|B"]}})";
}

TEST(CliConfig, AllSyncRouteWritesToEveryPoolAndReads) {
    MemcachedServer a, b;
    const ConfigFile config("all_sync.json", all_sync_config(a, b));
    // $MEMCACHED_SERVERS names a server nobody listens on: --config wins over it.
    const std::string bogus = "127.0.0.1:1";
    auto r = run({"--config", config.path(), "set", "k", "hello"}, {}, &bogus);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "STORED\n");
    EXPECT_TRUE(r.err.empty()) << r.err;
    for (const auto* s : {&a, &b})
        EXPECT_EQ(raw_request(*s, "get k\r\n", "END\r\n"), "VALUE k 0 5\r\nhello\r\nEND\r\n")
            << s->address();
    r = run({"--config", config.path(), "get", "k"}, {}, &bogus);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "hello");
    EXPECT_TRUE(r.err.empty()) << r.err;
    r = run({"--config", config.path(), "get", "missing"});
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_TRUE(r.out.empty());

    // Every server of every pool: stats and version.
    r = run({"--config", config.path(), "stats"});
    ASSERT_EQ(r.status, 0) << r.err;
    for (const auto* s : {&a, &b}) {
        EXPECT_EQ(std::regex_search(r.out, std::regex("(^|\n)" + s->address() + " cmd_set 1\n")),
                  true)
            << r.out;
    }
    r = run({"--config", config.path(), "version"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind(a.address() + " 1.", 0), 0u) << r.out;
    EXPECT_NE(r.out.find(std::string(1, '\n').append(b.address()).append(" 1.")), std::string::npos)
        << r.out;

    // A pool down: the write fails (AllSync answers the worst reply), and the one line names
    // the server it could not reach, not the key's first pool.
    b.kill();
    r = run({"--config", config.path(), "set", "k", "again"});
    EXPECT_ONE_ERROR_LINE(r, "cannot connect to " + b.address());
    EXPECT_EQ(r.err.find(a.address()), std::string::npos) << r.err;
}

TEST(CliConfig, FailoverRouteServesFromTheNextPool) {
    MemcachedServer live;
    const std::string dead = "127.0.0.1:" + std::to_string(folsom::test::free_loopback_port());
    const ConfigFile config(
        "failover.json",
        R"({"pools": {"A": {"servers": [")" + dead + R"("]}, "B": {"servers": [")" +
            live.address() +
            R"("]}}, "route": {"type": "FailoverRoute", "children": ["PoolRoute|A", "PoolRoute|B"]}})");
    auto r = run({"--config", config.path(), "set", "fk", "v"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "STORED\n");
    r = run({"--config", config.path(), "get", "fk"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "v");
}

TEST(CliConfig, BadConfigurationsAreOneLineAndExit2) {
    const std::string pool_a = R"("pools": {"A": {"servers": ["127.0.0.1:11211"]}})";
    struct Case {
        const char* what;
        std::string json;
        std::string line;  // the whole stderr
    };
    const std::vector<Case> cases = {
        {"unknown route type",
         "{" + pool_a + R"(, "route": {"type": "AllRoute", "children": ["PoolRoute|A"]}})",
         "folsom: route.type: unknown route type 'AllRoute' (supported: PoolRoute, "},
        {"unknown pool",
         "{" + pool_a +
             R"(, "route": {"type": "AllSyncRoute", "children": ["PoolRoute|A", "PoolRoute|C"]}})",
         "folsom: route.children[1]: unknown pool 'C'\n"},
        {"cycle through named handles", "{" + pool_a + R"(, "named_handles": [
              {"name": "X", "type": "FailoverRoute", "children": ["PoolRoute|A", "Y"]},
              {"name": "Y", "type": "AllSyncRoute", "children": ["PoolRoute|A", "X"]}],
            "route": "X"})",
         "folsom: named_handles[1].children[1]: cycle through named handles: X -> Y -> X\n"},
        {"bad server address",
         R"({"pools": {"A": {"servers": ["127.0.0.1:notaport"]}}, "route": "PoolRoute|A"})",
         "folsom: pools.A.servers[0]: bad server address '127.0.0.1:notaport'"},
        {"unknown key",
         "{" + pool_a + R"(, "route": {"type": "PoolRoute", "pool": "A", "rates": {}}})",
         "folsom: route: unknown key 'rates' (PoolRoute takes pool, shadows, hash, name)\n"},
        {"not JSON", R"({"pools": {)", "folsom: not JSON: "},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.what);
        const ConfigFile config("bad.json", c.json);
        for (const std::vector<std::string>& command : {std::vector<std::string>{"get", "k"},
                                                        {"set", "k", "v"},
                                                        {"stats"},
                                                        {"bench", "--requests", "10"}}) {
            SCOPED_TRACE(command.front());
            std::vector<std::string> args = {"--config", config.path()};
            args.insert(args.end(), command.begin(), command.end());
            const auto r = run(args);
            EXPECT_ONE_ERROR_LINE(r, c.line);
            EXPECT_EQ(r.err.rfind(c.line, 0), 0u) << r.err;
            EXPECT_TRUE(r.out.empty()) << r.out;
        }
    }
    const std::string missing = temp_path("no_such_routes.json");
    const auto r = run({"--config", missing, "get", "k"});
    EXPECT_ONE_ERROR_LINE(r, "cannot read " + missing + ": No such file or directory");
    EXPECT_EQ(r.err, "folsom: cannot read " + missing + ": No such file or directory\n");
}

TEST(CliConfig, ExcludesServersAndElastiCache) {
    MemcachedServer a, b;
    const ConfigFile config("excl.json", all_sync_config(a, b));
    EXPECT_ONE_ERROR_LINE(run({"--config", config.path(), "--servers", a.address(), "get", "k"}),
                          "excludes");
    EXPECT_ONE_ERROR_LINE(run({"--servers", a.address(), "--config", config.path(), "get", "k"}),
                          "excludes");
    EXPECT_ONE_ERROR_LINE(
        run({"--config", config.path(), "--elasticache", a.address(), "get", "k"}), "excludes");
    // Usage errors: nothing was sent.
    EXPECT_EQ(stat_value(stats(a), "cmd_get"), 0);
    EXPECT_EQ(stat_value(stats(b), "cmd_get"), 0);
    const auto help = run({"--help"});
    EXPECT_NE(help.out.find("--config"), std::string::npos);
}

TEST(CliConfig, BenchRunsThroughTheRoutesAndPrintsTheRouteTable) {
    MemcachedServer a, b;
    const ConfigFile config("bench.json", all_sync_config(a, b));
    const std::string json_path = temp_path("config_bench.json");
    const std::string before_a = stats(a), before_b = stats(b);
    const auto r = run({"--config", config.path(), "bench", "--requests", "2000", "--keys", "100",
                        "--json", json_path});
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    EXPECT_TRUE(r.err.empty()) << r.err;
    EXPECT_EQ(r.out.find("embedded"), std::string::npos) << r.out;  // no private memcached
    EXPECT_NE(r.out.find(a.address()), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(b.address()), std::string::npos) << r.out;
    // The route table, after the report, for the measured phase only.
    const auto table = r.out.find("routes (client side):\n");
    ASSERT_NE(table, std::string::npos) << r.out;
    EXPECT_GT(table, r.out.find("latency us")) << r.out;
    const std::string rows = r.out.substr(table);
    EXPECT_TRUE(std::regex_search(
        rows, std::regex("route +type +requests +failovers +shadow requests +shadow errors\n")))
        << rows;
    EXPECT_TRUE(std::regex_search(rows, std::regex("\nroute +AllSyncRoute +2000 +0 +0 +0\n")))
        << rows;
    for (int i : {0, 1})
        EXPECT_TRUE(std::regex_search(rows, std::regex("\nroute\\.children\\[" + std::to_string(i) +
                                                       "\\] +PoolRoute +2000 +0 +0 +0\n")))
            << rows;
    // Every get reached both pools (AllSync).
    for (const auto& [server, before] : {std::pair{&a, before_a}, std::pair{&b, before_b}})
        EXPECT_EQ(stat_value(stats(*server), "cmd_get") - stat_value(before, "cmd_get"), 2000)
            << server->address();
    const std::string json = read_file(json_path);
    EXPECT_EQ(json_number(json, "ops"), 2000);
    EXPECT_NE(json.find("\"config\": \"" + config.path() + "\""), std::string::npos) << json;
    EXPECT_NE(json.find("{\"name\": \"route\", \"type\": \"AllSyncRoute\", \"requests\": 2000, "
                        "\"failovers\": 0, \"shadow_requests\": 0, \"shadow_errors\": 0}"),
              std::string::npos)
        << json;
    ::unlink(json_path.c_str());
}

}  // namespace
