// Runs every program under examples/ against a real memcached (its address as argv[1]) and
// checks that it exits 0 and says what its comments promise.
#include "folsom/error.hpp"

#include "support/memcached_server.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace {

struct Run {
    int exit_code = -1;
    std::string output;  // stdout and stderr
};

/// Runs examples/<name> with `args`, waiting for it to finish.
Run run_example(const std::string& name, const std::string& args) {
#ifndef FOLSOM_EXAMPLES_DIR
    (void)name;
    (void)args;
    return {};
#else
    const std::string command =
        std::string(FOLSOM_EXAMPLES_DIR) + "/" + name + " " + args + " 2>&1";
    Run r;
    FILE* p = ::popen(command.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
        r.output.append(buf, n);
    const int status = ::pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
#endif
}

class Examples : public ::testing::Test {
  protected:
    void SetUp() override {
#ifndef FOLSOM_EXAMPLES_DIR
        GTEST_SKIP() << "examples are not built (FOLSOM_BUILD_EXAMPLES=OFF)";
#endif
    }
    folsom::test::MemcachedServer server_;
};

TEST_F(Examples, Hello) {
    auto r = run_example("01_hello", server_.address());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("set: STORED\n"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("hello: world\n"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("missing: miss\n"), std::string::npos) << r.output;
}

TEST_F(Examples, Callbacks) {
    auto r = run_example("02_callbacks", server_.address());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output, "set: STORED\nincr: 42\nget: 42\n");
}

TEST_F(Examples, Futures) {
    auto r = run_example("03_futures", server_.address());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const std::string expected =
        "set fruit:1: STORED\nset fruit:2: STORED\nadd fruit:1: NOT_STORED\nfruit:1 = apple\n"
        "bad key: " +
        make_error_code(folsom::errc::invalid_key).message() + "\n";
    EXPECT_EQ(r.output, expected);
}

TEST_F(Examples, Coroutines) {
    auto r = run_example("04_coroutines", server_.address());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output, "words: one,two,three\n");
    // Run again: it starts from scratch (deletes its item first).
    r = run_example("04_coroutines", server_.address());
    EXPECT_EQ(r.output, "words: one,two,three\n");
}

TEST_F(Examples, MultiGetAcrossServers) {
    folsom::test::MemcachedServer second, third;
    auto r = run_example("05_multi_get",
                         server_.address() + " " + second.address() + " " + third.address());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("user:0 @ 127.0.0.1:"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("user:1 @ 127.0.0.1:"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(": (miss)\n"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(": name-10\n"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("hits: 6 of 12\n"), std::string::npos) << r.output;
    // name-0, name-2 .. name-8 (6 bytes each) and name-10 (7).
    EXPECT_NE(r.output.find("zero-copy: 6 hits, 37 bytes\n"), std::string::npos) << r.output;
    // Which servers twelve keys land on depends on the ports; at least two of three is sure
    // enough, and the count of servers is exact.
    EXPECT_NE(r.output.find(" of 3\n"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("servers used: 1 of 3"), std::string::npos) << r.output;
}

TEST_F(Examples, TypedJsonCompressed) {
    auto r = run_example("08_typed_json", server_.address());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output,
              "set profile:ada: STORED\n"
              "stored: smaller than its JSON, zstd flag set\n"
              "profile:ada: Ada Lovelace, born 1815, tags [mathematics] [analytical engine], bio "
              "intact\n"
              "profile:bad: decode_failed\n"
              "profile:nobody: (miss)\n");
}

TEST_F(Examples, FakeClientNeedsNoServer) {
    auto r = run_example("06_fake_client_in_tests", "");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("all checks passed\n"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("FAILED"), std::string::npos) << r.output;
}

TEST_F(Examples, StaleWhileRevalidate) {
    auto r = run_example("07_stale_while_revalidate", server_.address());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output,
              "cold: 1 filled, 4 waited, value price=100, backend calls 1\n"
              "invalidated\n"
              "stale: 5 served price=100 at once, 1 refreshing\n"
              "refreshed: stored\n"
              "fresh: price=101 (hit), backend calls 2\n");
    // The server holds the refreshed price, as an ordinary (not stale) item.
    EXPECT_EQ(folsom::test::raw_request(server_.port(), "get price:42\r\n", "END\r\n"),
              "VALUE price:42 0 9\r\nprice=101\r\nEND\r\n");
    EXPECT_EQ(folsom::test::raw_request(server_.port(), "mg price:42\r\n"), "HD\r\n");
}

TEST_F(Examples, TraceSpans) {
    const std::string a = server_.address();
    auto r = run_example("09_trace_spans", a);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const std::string& line : std::vector<std::string>{
             "span set key=greeting server=" + a + " -> stored (",
             "span get key=greeting server=" + a + " -> hit (",
             "span get key=nobody-stored-this server=" + a + " -> miss (",
             "span get_multi key=greeting server=* -> hit (",
             "span get key=not a valid key server=" + a + " -> error invalid_key (",
             "refused: " + make_error_code(folsom::errc::invalid_key).message() + "\n"})
        EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
    // One span per operation: the delete, set, two gets, the multi-get and the refused get.
    std::size_t spans = 0;
    for (std::size_t at = 0; (at = r.output.find("span ", at)) != std::string::npos; ++at)
        ++spans;
    EXPECT_EQ(spans, 6u) << r.output;
}

TEST_F(Examples, MetricsExport) {
    const std::string s = "{server=\"" + server_.address() + "\",";
    auto r = run_example("10_metrics_export", server_.address());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const std::string& line : std::vector<std::string>{
             "requests: 261, hits: 110, misses: 60, errors: 0,",
             "# TYPE folsom_requests_total counter\n",
             "folsom_requests_total" + s + "op=\"set\",outcome=\"stored\"} 100\n",
             // 100 single-key hits and the multi-get.
             "folsom_requests_total" + s + "op=\"get\",outcome=\"hit\"} 101\n",
             "folsom_requests_total" + s + "op=\"get\",outcome=\"miss\"} 50\n",
             "folsom_requests_total" + s + "op=\"delete\",outcome=\"not_found\"} 10\n",
             "folsom_retrieval_keys_total" + s + "op=\"get\",result=\"hit\"} 110\n",
             "folsom_retrieval_keys_total" + s + "op=\"get\",result=\"miss\"} 60\n",
             "# TYPE folsom_request_duration_seconds summary\n",
             "folsom_request_duration_seconds" + s + "op=\"get\",quantile=\"0.99\"} ",
             "folsom_request_duration_seconds_count" + s + "op=\"get\"} 151\n",
             "folsom_outstanding_requests{server=\"" + server_.address() + "\"} 0\n",
             "folsom_connects_total{server=\"" + server_.address() + "\"} 1\n",
         })
        EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
}

TEST_F(Examples, BlockingLikeLibmemcached) {
    auto r = run_example("11_blocking_like_libmemcached", server_.address());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output, "visits: 1000\nfailures: 0\n");
}

}  // namespace
