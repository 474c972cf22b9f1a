// A client made before fork(), used by the parent and by five children at once: each process
// sets and gets 10,000 keys of its own through the one client it inherited, and checks every
// value. Sharing a connection would hand a process another's replies (wrong values, or a
// protocol error); a child that wrote into its parent's connection would do the same to the
// parent. Both drivers: the I/O thread (which does not survive fork) and the caller-driven loop.
#include "folsom/blocking_client.hpp"

#include "support/memcached_server.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::BlockingClient;
using folsom::Status;

constexpr int children = 5;
constexpr int keys_per_process = 10000;

/// Sets and gets this process's keys; the number of wrong outcomes (0: all right).
int exercise(BlockingClient& c, const std::string& who) {
    int wrong = 0;
    for (int i = 0; i < keys_per_process; ++i) {
        const std::string key = who + ":" + std::to_string(i);
        const std::string value = "value of " + key;
        try {
            if (c.set(key, value) != Status::stored) ++wrong;
            auto v = c.get(key);
            if (!v || v->data != value) ++wrong;
        } catch (const std::exception&) {
            ++wrong;
        }
    }
    return wrong;
}

/// Waits for `pid` at most until `deadline`, then kills it. Its exit status, or -1.
int reap(pid_t pid, std::chrono::steady_clock::time_point deadline) {
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        std::this_thread::sleep_for(10ms);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return -1;
}

class AfterFork : public ::testing::TestWithParam<BlockingClient::Driver> {};

TEST_P(AfterFork, ParentAndChildrenEachGetTheirOwnReplies) {
    folsom::test::MemcachedServer server;
    folsom::Options o;
    o.servers = {server.address()};
    BlockingClient c(o, GetParam());
    // Connected, with a read pending on the I/O thread, before the fork.
    ASSERT_EQ(c.set("before", "fork"), Status::stored);

    std::vector<pid_t> pids;
    for (int n = 0; n < children; ++n) {
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            // The child: gtest's assertions are the parent's; report through the exit status.
            const int wrong = exercise(c, "child" + std::to_string(n));
            const bool inherited_ok = c.get("before") && c.get("before")->data == "fork";
            std::_Exit(wrong == 0 && inherited_ok ? 0 : 1);
        }
        pids.push_back(pid);
    }
    // The parent goes on with the same client meanwhile.
    EXPECT_EQ(exercise(c, "parent"), 0);
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    for (int n = 0; n < children; ++n)
        EXPECT_EQ(reap(pids[n], deadline), 0) << "child " << n;
    // Undisturbed: the parent's connection still serves it.
    EXPECT_EQ(c.set("after", "fork"), Status::stored);
    auto v = c.get("child4:9999");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data, "value of child4:9999");
}

TEST_P(AfterFork, AChildThatNeverCallsDestroysItsClientCleanly) {
    folsom::test::MemcachedServer server;
    folsom::Options o;
    o.servers = {server.address()};
    auto c = std::make_unique<BlockingClient>(o, GetParam());
    ASSERT_EQ(c->set("k", "v"), Status::stored);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // Must neither hang on the I/O thread that is not there nor touch the parent's
        // connection (a close of the shared socket, a shutdown).
        c.reset();
        std::_Exit(0);
    }
    EXPECT_EQ(reap(pid, std::chrono::steady_clock::now() + 30s), 0);
    EXPECT_EQ(c->get("k")->data, "v");
    EXPECT_EQ(c->set("k2", "v2"), Status::stored);
}

INSTANTIATE_TEST_SUITE_P(Drivers, AfterFork,
                         ::testing::Values(BlockingClient::Driver::io_thread,
                                           BlockingClient::Driver::caller),
                         [](const auto& param_info) {
                             return param_info.param == BlockingClient::Driver::io_thread
                                        ? std::string("io_thread")
                                        : std::string("caller");
                         });

}  // namespace
