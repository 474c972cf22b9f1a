// folsom's libmemcached.so.11 (compat/libmemcached) against Debian's libmemcached 1.1.4:
//   * it exports the same functions (nm -D of both libraries, read at test time);
//   * a libmemcached consumer (dropin_check.c) prints the same lines on both, over ascii and
//     binary, with real memcached servers;
//   * libmemcached-tools, unmodified, run on it (LD_LIBRARY_PATH), with the proof that it was
//     the library the process loaded (its /proc/<pid>/maps).
#include "support/child_process.hpp"
#include "support/memcached_server.hpp"
#include "support/sasl_database.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using folsom::test::MemcachedServer;

const std::string dropin_dir = DROPIN_DIR;
const std::string debian_dir = DEBIAN_LIBDIR;

struct Outcome {
    int status = -1;  // exit code; -1: killed or not run
    std::string out;  // stdout
};

/// Runs argv with LD_LIBRARY_PATH = `libdir` (none when empty) and `env` added; its stdout.
/// Killed after `limit`.
Outcome run(const std::vector<std::string>& argv, const std::string& libdir,
            const std::vector<std::pair<std::string, std::string>>& env = {},
            std::chrono::seconds limit = std::chrono::seconds(60), pid_t* started = nullptr,
            const std::function<void(pid_t)>& while_running = {}) {
    int fds[2];
    if (pipe(fds) != 0) return {};
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        if (libdir.empty())
            unsetenv("LD_LIBRARY_PATH");
        else
            setenv("LD_LIBRARY_PATH", libdir.c_str(), 1);
        for (const auto& [k, v] : env)
            setenv(k.c_str(), v.c_str(), 1);
        std::vector<char*> args;
        for (const auto& a : argv)
            args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        _exit(127);
    }
    close(fds[1]);
    if (started) *started = pid;
    if (while_running) while_running(pid);
    Outcome r;
    // Read until EOF on a thread, so that a program that hangs is still killed at `limit`.
    std::thread reader([&] {
        char buf[4096];
        ssize_t n;
        while ((n = read(fds[0], buf, sizeof buf)) > 0)
            r.out.append(buf, static_cast<std::size_t>(n));
    });
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            ADD_FAILURE() << argv[0] << " did not finish within " << limit.count() << " s";
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    reader.join();
    close(fds[0]);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
        out.push_back(l);
    return out;
}

/// The defined dynamic functions of a shared library (nm -D --defined-only).
std::set<std::string> exported(const std::string& path) {
    const Outcome r = run({"nm", "-D", "--defined-only", path}, "");
    EXPECT_EQ(r.status, 0) << path;
    std::set<std::string> out;
    for (const auto& l : lines(r.out)) {
        std::istringstream in(l);
        std::string addr, type, name;
        if (in >> addr >> type >> name) out.insert(type + " " + name);
    }
    return out;
}

TEST(LibmemcachedDropin, ExportsExactlyDebiansFunctions) {
    for (const std::string lib : {"libmemcached.so.11", "libmemcachedutil.so.2"}) {
        const auto theirs = exported(debian_dir + "/" + lib);
        const auto ours = exported(dropin_dir + "/" + lib);
        ASSERT_FALSE(theirs.empty()) << lib;
        EXPECT_EQ(ours, theirs) << lib;
    }
    EXPECT_EQ(exported(debian_dir + "/libmemcached.so.11").size(), 138u);
    // SONAME, and the NEEDED libsasl2.so.2 that pylibmc's SASL calls rely on.
    const Outcome d = run({"readelf", "-d", dropin_dir + "/libmemcached.so.11"}, "");
    EXPECT_NE(d.out.find("Library soname: [libmemcached.so.11]"), std::string::npos) << d.out;
    EXPECT_NE(d.out.find("Shared library: [libsasl2.so.2]"), std::string::npos) << d.out;
    // No symbol versions: consumers were linked without them.
    const Outcome v = run({"readelf", "-V", dropin_dir + "/libmemcached.so.11"}, "");
    EXPECT_EQ(v.out.find(".gnu.version_d"), std::string::npos) << v.out;
}

class LibmemcachedDropinVsDebian : public testing::TestWithParam<std::string> {};

TEST_P(LibmemcachedDropinVsDebian, SameResults) {
    MemcachedServer one, two;
    const std::uint16_t dead = folsom::test::free_loopback_port();
    const auto argv = [&] {
        return std::vector<std::string>{DROPIN_CHECK,
                                        std::to_string(one.port()),
                                        std::to_string(two.port()),
                                        std::to_string(two.pid()),
                                        std::to_string(dead),
                                        GetParam()};
    };
    const Outcome theirs = run(argv(), "", {{"DROPIN_EXPECT_DIR", debian_dir}});
    EXPECT_EQ(theirs.status, 0) << theirs.out;
    // The program killed server two; bring it back on its port for the second run.
    two.kill();
    two.restart();
    const Outcome ours =
        run(argv(), dropin_dir, {{"DROPIN_EXPECT_DIR", dropin_dir}, {"DROPIN_IS_FOLSOM", "1"}});
    EXPECT_EQ(ours.status, 0) << ours.out;
    two.kill();

    // Every line not marked '~' (information that may differ) must be the same.
    std::vector<std::string> a, b;
    for (const auto& l : lines(theirs.out))
        if (l.empty() || l[0] != '~') a.push_back(l);
    for (const auto& l : lines(ours.out))
        if (l.empty() || l[0] != '~') b.push_back(l);
    EXPECT_GT(a.size(), 150u);
    ASSERT_EQ(a.size(), b.size()) << "Debian:\n" << theirs.out << "\ndrop-in:\n" << ours.out;
    std::size_t differ = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i] && ++differ < 20)
            ADD_FAILURE() << "libmemcached: " << a[i] << "\n     drop-in: " << b[i];
    EXPECT_NE(ours.out.find("~loaded " + dropin_dir), std::string::npos) << ours.out;
}

INSTANTIATE_TEST_SUITE_P(Protocols, LibmemcachedDropinVsDebian, testing::Values("ascii", "binary"),
                         [](const auto& p) { return p.param; });

/// libmemcached-tools: each program's exit code and output on the drop-in are Debian's.
TEST(LibmemcachedDropin, ToolsRunOnIt) {
    for (const char* tool : {"memccp", "memccat", "memcstat", "memcping", "memcrm", "memcexist",
                             "memctouch", "memcflush", "memcdump", "memcerror", "memcparse"})
        if (!folsom::test::have_program(tool)) GTEST_SKIP() << tool << " (libmemcached-tools)";
    MemcachedServer server;
    folsom::test::TempDir dir;
    const std::string file = dir.file("greeting.txt");
    std::ofstream(file) << "hello from a file\n";
    const std::string servers = "--servers=127.0.0.1:" + std::to_string(server.port());
    // Each step runs twice from the same server state (the key stored, or not), set up with
    // Debian's library: once on Debian's library, once on the drop-in.
    struct Step {
        bool stored;
        std::vector<std::string> argv;
    };
    const std::vector<Step> script = {
        {false, {"memccp", servers, file}},
        {true, {"memccat", servers, "greeting.txt"}},
        {false, {"memccat", servers, "greeting.txt"}},
        {true, {"memcexist", servers, "greeting.txt"}},
        {false, {"memcexist", servers, "greeting.txt"}},
        {true, {"memctouch", servers, "--expire=100", "greeting.txt"}},
        {false, {"memctouch", servers, "--expire=100", "greeting.txt"}},
        {true, {"memcdump", servers}},
        {true, {"memcping", servers}},
        {true, {"memcrm", servers, "greeting.txt"}},
        {false, {"memcrm", servers, "greeting.txt"}},
        {true, {"memcflush", servers}},
        {true, {"memcerror", "16"}},
        {true, {"memcparse", "--SERVER=localhost:11211 --BINARY-PROTOCOL"}},
    };
    const auto set_up = [&](bool stored) {
        const Outcome r =
            stored ? run({"memccp", servers, file}, "") : run({"memcflush", servers}, "");
        ASSERT_EQ(r.status, 0);
    };
    for (const auto& step : script) {
        std::string what;
        for (const auto& a : step.argv)
            what += a + " ";
        set_up(step.stored);
        const Outcome theirs = run(step.argv, "");
        set_up(step.stored);
        const Outcome ours = run(step.argv, dropin_dir);
        EXPECT_EQ(ours.status, theirs.status) << what;
        EXPECT_EQ(ours.out, theirs.out) << what;
    }
    // A configuration string it cannot read: refused by both (the messages differ).
    const std::vector<std::string> bad = {"memcparse", "--SERVER=localhost:11211 --NO-SUCH-OPTION"};
    EXPECT_NE(run(bad, dropin_dir).status, 0);
    EXPECT_NE(run(bad, "").status, 0);
    set_up(true);
    // memcstat: the server's own figures (pid, version) as Debian's library reports them.
    const Outcome stat = run({"memcstat", servers}, dropin_dir);
    EXPECT_EQ(stat.status, 0);
    EXPECT_NE(stat.out.find("Server: 127.0.0.1 (" + std::to_string(server.port()) + ")"),
              std::string::npos)
        << stat.out;
    EXPECT_NE(stat.out.find("pid: " + std::to_string(server.pid())), std::string::npos) << stat.out;

    // The proof that the tools load the drop-in: memccat waits on a frozen server while its
    // maps are read, then finishes once the server is thawed.
    std::string maps;
    server.freeze();
    const Outcome cat =
        run({"memccat", servers, "greeting.txt"}, dropin_dir, {}, std::chrono::seconds(60), nullptr,
            [&](pid_t pid) {
                for (int i = 0; i < 200 && maps.find("libmemcached") == std::string::npos; ++i) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(10));
                    std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
                    std::stringstream ss;
                    ss << in.rdbuf();
                    maps = ss.str();
                }
                server.thaw();
            });
    EXPECT_NE(maps.find(dropin_dir + "/libmemcached.so.11"), std::string::npos) << maps;
    EXPECT_EQ(maps.find(debian_dir + "/libmemcached.so"), std::string::npos) << maps;
    EXPECT_EQ(cat.status, 0);
    EXPECT_EQ(cat.out, "hello from a file\n\n");  // memccat adds a newline
}

/// SASL PLAIN over the binary protocol (memcached -S), through the tools' --username and
/// --password: memcached_set_sasl_auth_data and libmemcached_util_ping2 on the drop-in.
TEST(LibmemcachedDropin, SaslThroughTheTools) {
    if (!folsom::test::SaslDatabase::available()) GTEST_SKIP() << "saslpasswd2 (sasl2-bin)";
    for (const char* tool : {"memccp", "memccat", "memcping"})
        if (!folsom::test::have_program(tool)) GTEST_SKIP() << tool << " (libmemcached-tools)";
    folsom::test::SaslDatabase db("folsom", "s3cret pass");
    MemcachedServer server({"-S"});
    const std::string why = folsom::test::SaslDatabase::missing_plain(server.port());
    ASSERT_TRUE(why.empty()) << why;
    folsom::test::TempDir dir;
    const std::string file = dir.file("sasl.txt");
    std::ofstream(file) << "behind a login\n";
    const std::string servers = "--servers=127.0.0.1:" + std::to_string(server.port());
    const std::vector<std::vector<std::string>> script = {
        {"memccp", servers, "--binary", "--username=folsom", "--password=s3cret pass", file},
        {"memccat", servers, "--binary", "--username=folsom", "--password=s3cret pass", "sasl.txt"},
        {"memcping", servers, "--username=folsom", "--password=s3cret pass"},
        {"memccat", servers, "--binary", "--username=folsom", "--password=wrong", "sasl.txt"},
        {"memcping", servers, "--username=folsom", "--password=wrong"},
    };
    for (const auto& step : script) {
        std::string what;
        for (const auto& a : step)
            what += a + " ";
        const Outcome theirs = run(step, "");
        const Outcome ours = run(step, dropin_dir);
        EXPECT_EQ(ours.status, theirs.status) << what;
        EXPECT_EQ(ours.out, theirs.out) << what;
    }
    EXPECT_EQ(run(script[1], dropin_dir).out, "behind a login\n\n");
}

/// The C consumer's SASL part on both libraries: a flush before the login (php-memcached's
/// tests do one), then a login, a set and a get.
TEST(LibmemcachedDropin, FlushBeforeSaslLoginAsDebian) {
    if (!folsom::test::SaslDatabase::available()) GTEST_SKIP() << "saslpasswd2 (sasl2-bin)";
    folsom::test::SaslDatabase db("folsom", "s3cret pass");
    MemcachedServer server({"-S"});
    const std::string why = folsom::test::SaslDatabase::missing_plain(server.port());
    ASSERT_TRUE(why.empty()) << why;
    const std::vector<std::string> argv = {DROPIN_CHECK, "sasl", std::to_string(server.port()),
                                           "folsom", "s3cret pass"};
    const Outcome theirs = run(argv, "", {{"DROPIN_EXPECT_DIR", debian_dir}});
    const Outcome ours = run(argv, dropin_dir, {{"DROPIN_EXPECT_DIR", dropin_dir}});
    EXPECT_EQ(theirs.status, 0) << theirs.out;
    EXPECT_EQ(ours.status, 0) << ours.out;
    const auto a = lines(theirs.out), b = lines(ours.out);
    ASSERT_EQ(a.size(), b.size()) << theirs.out << "---\n" << ours.out;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].rfind("~", 0) != 0) {
            EXPECT_EQ(b[i], a[i]);
        }
    }
    EXPECT_NE(ours.out.find("get: SUCCESS sv"), std::string::npos) << ours.out;
}

/// memcached_set_encoding_key: the same ciphertext from both libraries, each reading what the
/// other wrote, and the same refusals (append, incr) and failures (a value not encrypted).
TEST(LibmemcachedDropin, EncodingKeyAsDebian) {
    for (const std::string proto : {"ascii", "binary"}) {
        MemcachedServer server;
        const std::string port = std::to_string(server.port());
        const auto compare = [&](const Outcome& theirs, const Outcome& ours, const char* what) {
            EXPECT_EQ(theirs.status, 0) << what << theirs.out;
            EXPECT_EQ(ours.status, 0) << what << ours.out;
            const auto a = lines(theirs.out), b = lines(ours.out);
            ASSERT_EQ(a.size(), b.size()) << what << theirs.out << "---\n" << ours.out;
            for (std::size_t i = 0; i < a.size(); ++i) {
                if (a[i].rfind("~", 0) != 0) {
                    EXPECT_EQ(b[i], a[i]) << what << " " << proto;
                }
            }
        };
        const auto check = [&](const char* mode, const std::string& lib) {
            return run({DROPIN_CHECK, "aes", port, mode, proto}, lib);
        };
        compare(check("both", ""), check("both", dropin_dir), "both");
        // Each library reads what the other wrote.
        const Outcome debian_wrote = check("write", "");
        const Outcome dropin_read = check("read", dropin_dir);
        const Outcome dropin_wrote = check("write", dropin_dir);
        const Outcome debian_read = check("read", "");
        compare(debian_wrote, dropin_wrote, "write");
        compare(debian_read, dropin_read, "read");
        // Over ascii each reads the other's values back (over binary libmemcached 1.1.4 does
        // not decrypt what it reads, and neither does the drop-in: the lines above compare).
        if (proto == "ascii") {
            for (const Outcome* r : {&dropin_read, &debian_read}) {
                EXPECT_NE(r->out.find("fetch aes0: SUCCESS same=1"), std::string::npos) << r->out;
                EXPECT_NE(r->out.find("read aes100: SUCCESS flags 7 same=1"), std::string::npos)
                    << r->out;
                EXPECT_NE(r->out.find("fetch aes17: SUCCESS same=1"), std::string::npos) << r->out;
            }
        }
    }
}

}  // namespace
