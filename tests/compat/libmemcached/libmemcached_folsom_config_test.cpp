// What libmemcached cannot do, switched on in folsom's libmemcached.so.11 by configuration
// alone: a program that only calls memcached_create + memcached_server_add (config_consumer.c,
// built against Debian's libmemcached) and an unchanged PHP script get TLS to `memcached -Z`
// (verified, SNI, client certificates), the meta protocol with quiet writes, route trees
// (AllSyncRoute replication, FailoverRoute) and DNS SRV discovery, from the file
// FOLSOM_LIBMEMCACHED_CONFIG names or from libmemcached's own configuration string. Each is
// proved where it shows: each server read directly, memcached's -vv log of the commands it
// read, the process's /proc maps.
#include "folsom/blocking_client.hpp"

#include "support/child_process.hpp"
#include "support/elasticache_endpoint.hpp"
#include "support/memcached_server.hpp"
#include "support/tls_files.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using folsom::test::ChildProcess;
using folsom::test::MemcachedServer;
using folsom::test::TlsFiles;

const std::string dropin_dir = DROPIN_DIR;

/// Runs argv on the drop-in (LD_LIBRARY_PATH) with `env` added; stdout and stderr together.
/// Killed after 30 s.
std::string run(const std::vector<std::string>& argv,
                const std::vector<std::pair<std::string, std::string>>& env, int* status_out) {
    int fds[2];
    if (pipe(fds) != 0) return {};
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        setenv("LD_LIBRARY_PATH", dropin_dir.c_str(), 1);
        unsetenv("FOLSOM_LIBMEMCACHED_CONFIG");
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
    std::string out;
    std::thread reader([&] {
        char buf[4096];
        ssize_t n;
        while ((n = read(fds[0], buf, sizeof buf)) > 0)
            out.append(buf, static_cast<std::size_t>(n));
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            ADD_FAILURE() << argv[0] << " did not finish within 30 s";
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    reader.join();
    close(fds[0]);
    if (status_out) *status_out = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
}

/// A file in a private temporary directory, removed with the object.
class TempFile {
  public:
    TempFile(const std::string& name, const std::string& text) {
        char dir[] = "/tmp/folsom-lmcfg-XXXXXX";
        if (!mkdtemp(dir)) throw std::runtime_error("mkdtemp failed");
        dir_ = dir;
        path_ = dir_ + "/" + name;
        std::ofstream(path_) << text;
    }
    ~TempFile() {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    const std::string& path() const { return path_; }

  private:
    std::string dir_, path_;
};

std::string consumer(const std::string& config_file, const std::vector<std::string>& servers,
                     int* status = nullptr) {
    std::vector<std::string> argv = {CONFIG_CONSUMER};
    argv.insert(argv.end(), servers.begin(), servers.end());
    return run(argv, {{"FOLSOM_LIBMEMCACHED_CONFIG", config_file}}, status);
}

const std::string all_ok =
    "set: SUCCESS\n"
    "get: SUCCESS replicated flags=7\n"
    "add: NOT STORED\n"
    "mget: SUCCESS\n"
    "fetch: folsom-config-key=replicated\n";

/// The value of `key` read straight from one server (with folsom's own client), or "(miss)".
std::string read_directly(const std::string& server,
                          std::optional<folsom::TlsOptions> tls = std::nullopt) {
    folsom::Options o;
    o.servers = {server};
    o.tls = std::move(tls);
    folsom::BlockingClient c(o);
    auto v = c.get("folsom-config-key");
    return v ? v->data : "(miss)";
}

std::string route_json(const std::string& type, const std::vector<std::string>& servers) {
    std::string pools, children;
    for (std::size_t i = 0; i < servers.size(); ++i) {
        const std::string name = "P" + std::to_string(i);
        pools += (i ? "," : "") + ("\"" + name + "\": {\"servers\": [\"" + servers[i] + "\"]}");
        children += (i ? "," : "") + ("\"PoolRoute|" + name + "\"");
    }
    return "{\"pools\": {" + pools + "}, \"route\": {\"type\": \"" + type + "\", \"children\": [" +
           children + "]}}";
}

std::vector<std::string> tls_server_args(const TlsFiles& f, bool client_cert) {
    return f.memcached_args(client_cert);
}

TEST(LibmemcachedFolsomConfig, TlsVerifiedWithSniAndClientCertificate) {
    TlsFiles f;
    MemcachedServer server(tls_server_args(f, true));
    const std::string where = "127.0.0.1:" + std::to_string(server.port());
    const std::string tls = "--TLS --TLS-CA=" + f.p("ca.pem") + " --TLS-CERT=" + f.p("client.pem") +
                            " --TLS-KEY=" + f.p("client.key") + " --TLS-SNI=localhost\n";
    TempFile good("folsom.conf", "# TLS for every handle\n" + tls);
    EXPECT_EQ(consumer(good.path(), {where}), all_ok);
    folsom::TlsOptions direct{f.p("ca.pem"), f.p("client.pem"), f.p("client.key"), "localhost"};
    EXPECT_EQ(read_directly(where, direct), "replicated");

    // The same through libmemcached's configuration string, with no file.
    int status = 0;
    const std::string out =
        run({CONFIG_CONSUMER, "--config", "--SERVER=" + where + " " + tls}, {}, &status);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(out, all_ok);

    // A server the CA did not sign is refused: the certificate is verified.
    TempFile wrong_ca("folsom.conf", "--TLS --TLS-CA=" + f.p("other.pem") + " --TLS-CERT=" +
                                         f.p("client.pem") + " --TLS-KEY=" + f.p("client.key"));
    EXPECT_EQ(consumer(wrong_ca.path(), {where}).substr(0, 30), "set: CONNECTION FAILURE\nerror:");
    // Without the client certificate the server refuses the handshake.
    TempFile no_cert("folsom.conf", "--TLS --TLS-CA=" + f.p("ca.pem"));
    EXPECT_EQ(consumer(no_cert.path(), {where}).substr(0, 23), "set: CONNECTION FAILURE");
    // A name the certificate does not carry is refused (SNI and the name check).
    TempFile bad_name("folsom.conf",
                      "--TLS --TLS-CA=" + f.p("ca.pem") + " --TLS-CERT=" + f.p("client.pem") +
                          " --TLS-KEY=" + f.p("client.key") + " --TLS-SNI=not-the-server.example");
    EXPECT_EQ(consumer(bad_name.path(), {where}).substr(0, 23), "set: CONNECTION FAILURE");
}

/// memcached with -vv, its log (every command line it reads) kept in a file.
struct VerboseMemcached {
    std::uint16_t port = folsom::test::free_loopback_port();
    TempFile log{"memcached.log", ""};
    ChildProcess process;
    VerboseMemcached() {
        std::vector<std::string> argv = {"memcached",          "-l", "127.0.0.1", "-p",
                                         std::to_string(port), "-U", "0",         "-vv"};
        if (geteuid() == 0) argv.insert(argv.end(), {"-u", "nobody"});
        process = ChildProcess(argv, log.path());
        if (!folsom::test::wait_until_listening(port, 5000))
            throw std::runtime_error("memcached did not start");
    }
    std::string where() const { return "127.0.0.1:" + std::to_string(port); }
    std::string text() const {
        std::ifstream in(log.path());
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }
};

TEST(LibmemcachedFolsomConfig, MetaProtocolWithQuietWritesOnTheWire) {
    VerboseMemcached server;
    TempFile conf("folsom.conf", "--META --QUIET-WRITES\n");
    EXPECT_EQ(consumer(conf.path(), {server.where()}), all_ok);
    const std::string log = server.text();
    // The set went as a quiet meta set (q), the add too (its refusal still reported: NOT
    // STORED above), the get as a meta get; no text-protocol store was sent. (A multi-key get
    // goes as one classic `get k1 k2`, as the core sends it over meta: docs/meta-protocol.md.)
    EXPECT_NE(log.find(" ms folsom-config-key 10 "), std::string::npos) << log;
    EXPECT_NE(log.find(" mg folsom-config-key "), std::string::npos) << log;
    EXPECT_NE(log.find(" mn\n"), std::string::npos) << log;
    EXPECT_EQ(log.find(" set folsom-config-key"), std::string::npos) << log;
    EXPECT_EQ(log.find(" add folsom-config-key"), std::string::npos) << log;
    std::istringstream lines(log);
    int quiet_sets = 0;
    for (std::string l; std::getline(lines, l);)
        if (l.find(" ms folsom-config-key ") != std::string::npos &&
            (l.find(" q ") != std::string::npos || l.ends_with(" q")))
            ++quiet_sets;
    EXPECT_EQ(quiet_sets, 2) << log;  // the set and the add

    // --META wins over BINARY_PROTOCOL (given in the program's configuration string).
    VerboseMemcached second;
    int status = 0;
    std::string out = run(
        {CONFIG_CONSUMER, "--config", "--SERVER=" + second.where() + " --BINARY-PROTOCOL --META"},
        {}, &status);
    EXPECT_EQ(out, all_ok);
    // Its keys are libmemcached's binary keys (any bytes): sent in base64 with meta's b flag.
    EXPECT_NE(second.text().find(" mg Zm9sc29tLWNvbmZpZy1rZXk= b"), std::string::npos)
        << second.text();

    // BUFFER_REQUESTS with --QUIET-WRITES: the held set goes quiet when the get flushes it.
    VerboseMemcached third;
    out = run({CONFIG_CONSUMER, "--config",
               "--SERVER=" + third.where() + " --BUFFER-REQUESTS --META --QUIET-WRITES"},
              {}, &status);
    EXPECT_EQ(out.rfind("set: ACTION QUEUED\n", 0), 0u) << out;  // MEMCACHED_BUFFERED
    EXPECT_NE(out.find("get: SUCCESS replicated flags=7\n"), std::string::npos) << out;
    EXPECT_NE(third.text().find(" ms folsom-config-key 10 F7 q "), std::string::npos)
        << third.text();
}

TEST(LibmemcachedFolsomConfig, AllSyncRouteReplicatesToBothServers) {
    MemcachedServer a, b;
    TempFile routes("routes.json", route_json("AllSyncRoute", {a.address(), b.address()}));
    TempFile conf("folsom.conf", "--ROUTE-FILE=" + routes.path() + "\n");
    // The program's own server is not used for keys: the route tree names the servers.
    EXPECT_EQ(consumer(conf.path(), {"127.0.0.1:1"}), all_ok);
    EXPECT_EQ(read_directly(a.address()), "replicated");
    EXPECT_EQ(read_directly(b.address()), "replicated");
}

TEST(LibmemcachedFolsomConfig, FailoverRouteServesWhileTheFirstServerIsDown) {
    auto down = std::make_unique<MemcachedServer>();
    const std::string gone = down->address();
    down.reset();  // nothing listens there now
    MemcachedServer backup;
    TempFile routes("routes.json", route_json("FailoverRoute", {gone, backup.address()}));
    TempFile conf("folsom.conf", "--ROUTE-FILE=" + routes.path());
    EXPECT_EQ(consumer(conf.path(), {"127.0.0.1:1"}), all_ok);
    EXPECT_EQ(read_directly(backup.address()), "replicated");
}

TEST(LibmemcachedFolsomConfig, SrvDiscoveryFromALoopbackDnsServer) {
    if (!folsom::test::have_program("dnsmasq")) GTEST_SKIP() << "dnsmasq is not installed";
    MemcachedServer server;
    const std::uint16_t dns_port = folsom::test::free_loopback_port();
    const std::string name = "_memcache._tcp.folsom.test";
    ChildProcess dns(
        {"dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--port=" + std::to_string(dns_port),
         "--listen-address=127.0.0.1", "--bind-interfaces", "--no-resolv", "--no-hosts",
         "--pid-file", "--user=root", "--log-facility=-",
         "--srv-host=" + name + ",127.0.0.1," + std::to_string(server.port()) + ",0,1"});
    ASSERT_TRUE(folsom::test::wait_until_listening(dns_port, 5000)) << "dnsmasq did not start";
    TempFile conf("folsom.conf",
                  "--SRV=" + name + " --SRV-NAMESERVERS=127.0.0.1:" + std::to_string(dns_port));
    EXPECT_EQ(consumer(conf.path(), {"127.0.0.1:1"}), all_ok);
    EXPECT_EQ(read_directly(server.address()), "replicated");
}

TEST(LibmemcachedFolsomConfig, ElastiCacheDiscoveryFromAConfigurationEndpoint) {
    MemcachedServer a, b;
    folsom::test::ElastiCacheEndpoint endpoint;
    endpoint.serve(1, folsom::test::ElastiCacheEndpoint::entries(
                          {folsom::ServerAddress{"127.0.0.1", a.port(), 1},
                           folsom::ServerAddress{"127.0.0.1", b.port(), 1}}));
    TempFile conf("folsom.conf", "--ELASTICACHE=" + endpoint.address());
    EXPECT_EQ(consumer(conf.path(), {"127.0.0.1:1"}), all_ok);
    // The key is on exactly one of the two discovered servers (the ring's choice).
    const std::string on_a = read_directly(a.address()), on_b = read_directly(b.address());
    EXPECT_EQ((on_a == "replicated") + (on_b == "replicated"), 1) << on_a << " " << on_b;
}

TEST(LibmemcachedFolsomConfig, BadConfigurationIsRefusedAndNothingIsSent) {
    int status = 0;
    // The environment's file: memcached_create() gives no handle, the reason on stderr.
    TempFile bad("folsom.conf", "--TLS --TLS-CA=/nonexistent/ca.pem\n");
    std::string out = consumer(bad.path(), {"127.0.0.1:1"}, &status);
    EXPECT_EQ(status, 2);
    EXPECT_NE(out.find("FOLSOM_LIBMEMCACHED_CONFIG=" + bad.path() + ": (0x"), std::string::npos)
        << out;
    EXPECT_NE(out.find("cannot read the CA file /nonexistent/ca.pem"), std::string::npos) << out;
    EXPECT_NE(out.find("create: NULL"), std::string::npos) << out;
    TempFile servers("folsom.conf", "--SERVER=127.0.0.1:11211");
    out = consumer(servers.path(), {}, &status);
    EXPECT_EQ(status, 2);
    EXPECT_NE(out.find("servers are the program's to name"), std::string::npos) << out;
    // libmemcached's configuration string: memcached() gives NULL, and
    // libmemcached_check_configuration() says why in libmemcached's words.
    TempFile broken("routes.json", "{\"route\": {\"type\": \"NoSuchRoute\"}}");
    out = run({CONFIG_CONSUMER, "--config", "--SERVER=127.0.0.1:1 --ROUTE-FILE=" + broken.path()},
              {}, &status);
    EXPECT_EQ(status, 2);
    EXPECT_NE(out.find("create: NULL: (0x"), std::string::npos) << out;
    EXPECT_NE(out.find("Error occured during parsing (route file " + broken.path()),
              std::string::npos)
        << out;
    out = run({CONFIG_CONSUMER, "--config", "--SERVER=127.0.0.1:1 --META=yes"}, {}, &status);
    EXPECT_NE(out.find("--META takes no value"), std::string::npos) << out;
    out = run({CONFIG_CONSUMER, "--config", "--SERVER=127.0.0.1:1 --DISCOVERY-INTERVAL=0"}, {},
              &status);
    EXPECT_NE(out.find("--DISCOVERY-INTERVAL needs milliseconds"), std::string::npos) << out;
}

// The demonstration: an unchanged PHP script talks TLS to `memcached -Z` and reads
// values replicated by an AllSyncRoute, php-memcached running on the drop-in.
TEST(LibmemcachedFolsomConfig, PhpScriptUnchangedGetsTlsAndReplication) {
    if (!folsom::test::have_program("php")) GTEST_SKIP() << "php is not installed";
    int status = 0;
    if (run({"php", "-r", "exit(class_exists('Memcached') ? 0 : 1);"}, {}, &status); status != 0)
        GTEST_SKIP() << "php's memcached extension is not installed";
    TlsFiles f;
    MemcachedServer a(tls_server_args(f, true)), b(tls_server_args(f, true));
    folsom::TlsOptions tls{f.p("ca.pem"), f.p("client.pem"), f.p("client.key"), "localhost"};
    // A value the test stores on both servers itself, for the script to read.
    for (const auto* s : {&a, &b}) {
        folsom::Options o;
        o.servers = {s->address()};
        o.tls = tls;
        folsom::BlockingClient c(o);
        ASSERT_EQ(c.set("test-written", "on-both", std::chrono::seconds(0)),
                  folsom::Status::stored);
    }
    TempFile routes("routes.json", route_json("AllSyncRoute", {a.address(), b.address()}));
    TempFile conf("folsom.conf", "--TLS --TLS-CA=" + f.p("ca.pem") + " --TLS-CERT=" +
                                     f.p("client.pem") + " --TLS-KEY=" + f.p("client.key") +
                                     " --TLS-SNI=localhost\n--ROUTE-FILE=" + routes.path() + "\n");
    const std::string out = run({"php", PHP_SCRIPT, std::to_string(a.port())},
                                {{"FOLSOM_LIBMEMCACHED_CONFIG", conf.path()}}, &status);
    EXPECT_EQ(status, 0) << out;
    EXPECT_NE(out.find("set: ok\n"), std::string::npos) << out;
    EXPECT_NE(out.find("get: 'from-php'\n"), std::string::npos) << out;
    EXPECT_NE(out.find("replicated: 'on-both'\n"), std::string::npos) << out;
    EXPECT_NE(out.find("multi: {\"php-written\":\"from-php\",\"test-written\":\"on-both\"}"),
              std::string::npos)
        << out;
    // The process mapped the drop-in, and no other libmemcached.
    EXPECT_NE(out.find("mapped: " + dropin_dir + "/libmemcached.so.11"), std::string::npos) << out;
    EXPECT_EQ(out.find("mapped: /usr/lib"), std::string::npos) << out;
    // The script's write is on both servers (each read directly over TLS).
    for (const auto* s : {&a, &b}) {
        folsom::Options o;
        o.servers = {s->address()};
        o.tls = tls;
        folsom::BlockingClient c(o);
        auto v = c.get("php-written");
        ASSERT_TRUE(v) << s->address();
        EXPECT_EQ(v->data, "from-php");
    }
}

}  // namespace
