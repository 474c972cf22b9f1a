// RetryingCore without a server: a request for one key reaches the inner core through send()
// (the inner core places it), a part for a named server through submit(); an idempotent one
// lost with its connection is sent once more (a single key placed afresh by the inner core, a
// multi-key part or a part to every server to the same server), and the caller sees exactly
// one completion either way.
#include "cluster/retrying_core.hpp"

#include "folsom/detail/client_core.hpp"
#include "folsom/error.hpp"

#include "support/recording_operation.hpp"

#include <asio/io_context.hpp>
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace {

using folsom::errc;
using folsom::cluster::RetryingCore;
using folsom::detail::Completion;
using folsom::detail::OpCode;
using folsom::detail::Operation;
using folsom::detail::Request;
using folsom::test::RecordingOperation;

/// Writes down how each request arrived (send, or submit to which server) and answers it at
/// once with the next scripted error ({} once the script is used up).
class ScriptedCore final : public folsom::detail::ClientCore {
  public:
    explicit ScriptedCore(asio::io_context& io) : ClientCore(100), io_(io) {}

    struct Arrival {
        bool keyed;          // through send()
        std::size_t server;  // submit()'s server; send()'s is the core's own choice
        std::string key;
        bool retryable;
    };

    asio::any_io_executor executor() const noexcept override { return io_.get_executor(); }
    std::size_t server_count() const noexcept override { return 4; }
    std::size_t server_for(std::string_view key) const noexcept override { return key.size() % 4; }
    const std::string& server_name(std::size_t) const noexcept override { return name_; }
    std::size_t max_value_size() const noexcept override { return 1024; }
    void shutdown() override {}
    void send(Operation& op, std::uint32_t part, const Request& r) override {
        answer(Arrival{true, server_for(r.key), std::string(r.key), r.retryable}, op, part);
    }
    void submit(std::size_t server, Operation& op, std::uint32_t part, const Request& r) override {
        answer(Arrival{false, server, std::string(r.key), r.retryable}, op, part);
    }

    std::vector<Arrival> arrivals;
    std::deque<std::error_code> script;

  private:
    void answer(Arrival a, Operation& op, std::uint32_t part) {
        arrivals.push_back(std::move(a));
        Completion c;
        if (!script.empty()) {
            c.ec = script.front();
            script.pop_front();
        }
        op.on_complete(part, c);
    }
    asio::io_context& io_;
    std::string name_ = "scripted";
};

class Retrying : public ::testing::Test {
  protected:
    /// A request for one key as Client makes it (keys views key: fill it in place).
    static void keyed(Request& r, OpCode code, std::string_view key) {
        r.code = code;
        r.key = key;
        r.keys = {&r.key, 1};
    }
    asio::io_context io_;
    std::shared_ptr<ScriptedCore> inner_ = std::make_shared<ScriptedCore>(io_);
    RetryingCore core_{inner_, 100};
};

TEST_F(Retrying, ASingleKeyLostWithItsConnectionIsSentOnceMoreThroughSend) {
    inner_->script = {errc::connection_lost};
    RecordingOperation op;
    Request r;
    keyed(r, OpCode::get, "abc");
    core_.send(op, 3, r);
    ASSERT_EQ(inner_->arrivals.size(), 2u);
    for (const auto& a : inner_->arrivals) {
        EXPECT_TRUE(a.keyed);  // the inner core places the key, both times
        EXPECT_EQ(a.key, "abc");
    }
    EXPECT_TRUE(inner_->arrivals[0].retryable);
    EXPECT_FALSE(inner_->arrivals[1].retryable);  // the last attempt
    ASSERT_EQ(op.completions().size(), 1u);
    EXPECT_EQ(op.events.back().part, 3u);
    EXPECT_FALSE(op.completions()[0].ec);
}

TEST_F(Retrying, OnlyOnceAndOnlyForALostConnection) {
    inner_->script = {errc::connection_lost, errc::connection_lost};
    RecordingOperation twice;
    Request r;
    keyed(r, OpCode::get, "k");
    core_.send(twice, 0, r);
    EXPECT_EQ(inner_->arrivals.size(), 2u);
    ASSERT_EQ(twice.completions().size(), 1u);
    EXPECT_EQ(twice.completions()[0].ec, errc::connection_lost);

    inner_->arrivals.clear();
    inner_->script = {errc::timeout};
    RecordingOperation timed_out;
    core_.send(timed_out, 0, r);
    EXPECT_EQ(inner_->arrivals.size(), 1u);
    ASSERT_EQ(timed_out.completions().size(), 1u);
    EXPECT_EQ(timed_out.completions()[0].ec, errc::timeout);
}

TEST_F(Retrying, AWriteIsSentOnceAndPassedOnAsItCame) {
    inner_->script = {errc::connection_lost};
    RecordingOperation op;
    Request set;
    keyed(set, OpCode::set, "k");
    set.value = "v";
    core_.send(op, 0, set);
    ASSERT_EQ(inner_->arrivals.size(), 1u);
    EXPECT_TRUE(inner_->arrivals[0].keyed);
    EXPECT_FALSE(inner_->arrivals[0].retryable);
    ASSERT_EQ(op.completions().size(), 1u);
    EXPECT_EQ(op.completions()[0].ec, errc::connection_lost);
}

TEST_F(Retrying, AMultiKeyPartStaysOnItsServer) {
    inner_->script = {errc::connection_lost};
    RecordingOperation op;
    const std::string_view keys[] = {"a", "bb"};
    Request r;
    r.code = OpCode::get;
    r.keys = keys;
    r.key = keys[0];
    r.keys_are_stable = true;
    core_.submit(2, op, 1, r);
    ASSERT_EQ(inner_->arrivals.size(), 2u);
    for (const auto& a : inner_->arrivals) {
        EXPECT_FALSE(a.keyed);
        EXPECT_EQ(a.server, 2u);
    }
    ASSERT_EQ(op.completions().size(), 1u);
    EXPECT_FALSE(op.completions()[0].ec);
}

TEST_F(Retrying, AOneKeyPartForANamedServerIsPlacedAfreshOnItsRetry) {
    // With failover the key's server may now be another one: the inner core decides.
    inner_->script = {errc::connection_lost};
    RecordingOperation op;
    Request r;
    keyed(r, OpCode::get, "xyz");
    core_.submit(0, op, 0, r);
    ASSERT_EQ(inner_->arrivals.size(), 2u);
    EXPECT_FALSE(inner_->arrivals[0].keyed);
    EXPECT_EQ(inner_->arrivals[0].server, 0u);
    EXPECT_TRUE(inner_->arrivals[1].keyed);
    EXPECT_EQ(inner_->arrivals[1].key, "xyz");
    ASSERT_EQ(op.completions().size(), 1u);
}

}  // namespace
