// Asks Debian's gomemcache (golang-github-bradfitz-gomemcache-dev, built with golang-go at test
// time, offline, in GOPATH mode from /usr/share/gocode) which server its ServerList picks for
// each key, and checks that Distribution::gomemcache agrees key by key.
#include "folsom/cluster/continuum.hpp"
#include "folsom/cluster/distribution.hpp"

#include "support/reference_client.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace {

using folsom::ServerAddress;
using folsom::cluster::Continuum;
using folsom::cluster::Distribution;
namespace test = folsom::test;

constexpr const char* gomemcache_source = "/usr/share/gocode/src/github.com/bradfitz/gomemcache";

// Servers from argv, keys from stdin; prints PickServer's address per key.
constexpr const char* reference_program = R"(package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/bradfitz/gomemcache/memcache"
)

func main() {
	var ss memcache.ServerList
	if err := ss.SetServers(os.Args[1:]...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 4096), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		addr, err := ss.PickServer(in.Text())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Fprintln(out, addr.String())
	}
}
)";

struct Server {
    ServerAddress address;
    std::string go;  // as gomemcache is given it, and as it prints it
};

void expect_same_placement(const std::vector<Server>& servers) {
    if (!std::filesystem::exists("/usr/bin/go"))
        GTEST_SKIP() << "golang-go is not installed (/usr/bin/go)";
    if (!std::filesystem::exists(gomemcache_source))
        GTEST_SKIP() << "golang-github-bradfitz-gomemcache-dev is not installed ("
                     << gomemcache_source << ")";
    const test::ScratchDir dir;
    const std::string program = dir.write("placement.go", reference_program);
    std::vector<std::string> argv = {"/usr/bin/env",
                                     "GO111MODULE=off",
                                     "GOPATH=/usr/share/gocode",
                                     "GOCACHE=" + dir.path() + "/cache",
                                     "GOFLAGS=",
                                     "GOPROXY=off",
                                     "/usr/bin/go",
                                     "run",
                                     program};
    std::vector<ServerAddress> addresses;
    std::vector<std::string> names;
    for (const auto& s : servers) {
        argv.push_back(s.go);
        addresses.push_back(s.address);
        names.push_back(s.go);
    }
    const auto keys = test::placement_keys();
    const auto run =
        test::run_reference(argv, test::lines_of(keys), keys.size(), std::chrono::seconds(120));
    ASSERT_TRUE(run.ran) << run.why_not;
    const Continuum ours(addresses, Distribution::gomemcache);
    EXPECT_EQ(test::count_mismatches(keys, run.lines, names,
                                     [&](const std::string& k) { return ours.server_index(k); }),
              0u)
        << "of " << keys.size() << " keys on " << servers.size() << " servers";
}

std::vector<Server> three_servers() {
    return {{{"10.0.0.1", 11211, 1}, "10.0.0.1:11211"},
            {{"10.0.0.2", 11212, 1}, "10.0.0.2:11212"},
            {{"10.0.0.3", 11211, 1}, "10.0.0.3:11211"}};
}

// One build of the Go program per server list: both lists in one test keep the run short.
TEST(GomemcacheCompat, ThreeAndTenServers) {
    expect_same_placement(three_servers());
    if (HasFatalFailure() || IsSkipped()) return;
    std::vector<Server> ten = three_servers();
    ten.push_back({{"::1", 11213, 1}, "[::1]:11213"});
    ten.push_back({ServerAddress::unix_socket("/run/memcached/mc.sock"), "/run/memcached/mc.sock"});
    for (int i = 6; i <= 10; ++i) {
        const std::string host = "10.0.1." + std::to_string(i);
        ten.push_back({{host, 22122, 1}, host + ":22122"});
    }
    expect_same_placement(ten);
}

}  // namespace
