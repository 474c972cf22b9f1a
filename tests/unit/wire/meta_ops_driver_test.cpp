// The meta-only operations (meta_get, meta_set, meta_delete) in the drivers, against scripted
// bytes: what each puts on the wire for every flag, how W/X/Z and the return flags reach the
// result, at every split of the reply; and that the ascii and binary drivers refuse them
// without writing a byte.
#include "folsom/blocking_client.hpp"
#include "folsom/detail/collectors.hpp"
#include "folsom/error.hpp"
#include "folsom/fake_client.hpp"

#include "wire/ascii_driver.hpp"
#include "wire/binary_driver.hpp"
#include "wire/meta_driver.hpp"
#include "cluster/retrying_core.hpp"
#include "support/recording_operation.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace folsom;
using detail::OpCode;
using detail::Request;

Options with(Protocol p) {
    Options o;
    o.protocol = p;
    return o;
}

/// An Operation that collects a meta_get the way the Client does.
struct MetaGetOp final : detail::Operation {
    void on_value(std::uint32_t p, std::uint32_t pos, const ValueView& v) override {
        collector.on_value(p, pos, v);
    }
    void on_stat(std::uint32_t, std::string_view, std::string_view) override {}
    void on_complete(std::uint32_t p, const detail::Completion& c) override {
        collector.on_complete(p, c);
        ++completions;
    }
    void pin() noexcept override {}
    void unpin() override {}
    detail::MetaGetCollector collector;
    int completions = 0;
};

Request meta_get(std::string_view key) {
    Request r;
    r.code = OpCode::meta_get;
    r.key = key;
    return r;
}

TEST(MetaOpsDriver, MetaGetWritesEveryFlagAskedFor) {
    test::DriverHarness h(std::make_unique<detail::MetaDriver>(with(Protocol::meta)));
    Request r = meta_get("k");
    ASSERT_FALSE(h.submit(r));
    EXPECT_EQ(h.take_output(), "mg k v c f\r\n");
    r.meta.return_ttl = true;
    r.meta.return_hit_before = true;
    r.meta.return_last_access = true;
    r.meta.no_bump = true;
    r.meta.touch_ttl = 60;
    r.meta.vivify_ttl = 30;
    r.meta.recache_ttl = 10;
    ASSERT_FALSE(h.submit(r));
    EXPECT_EQ(h.take_output(), "mg k v c f t h l u T60 N30 R10\r\n");
}

TEST(MetaOpsDriver, MetaSetAndDeleteFlags) {
    test::DriverHarness h(std::make_unique<detail::MetaDriver>(with(Protocol::meta)));
    Request s;
    s.code = OpCode::meta_set;
    s.key = "k";
    s.value = "abc";
    ASSERT_FALSE(h.submit(s));
    EXPECT_EQ(h.take_output(), "ms k 3\r\nabc\r\n");
    s.flags = 9;
    s.exptime = 60;
    s.cas = 77;
    s.meta.invalidate = true;
    s.meta.set_mode = static_cast<std::uint8_t>(MetaSetMode::add);
    ASSERT_FALSE(h.submit(s));
    EXPECT_EQ(h.take_output(), "ms k 3 ME F9 T60 C77 I\r\nabc\r\n");
    s.meta.set_mode = 99;  // not a mode
    EXPECT_EQ(h.submit(s), errc::invalid_argument);
    EXPECT_EQ(h.take_output(), "");

    Request d;
    d.code = OpCode::meta_delete;
    d.key = "k";
    ASSERT_FALSE(h.submit(d));
    EXPECT_EQ(h.take_output(), "md k\r\n");
    d.cas = 5;
    d.meta.invalidate = true;
    d.meta.delete_ttl = 30;
    ASSERT_FALSE(h.submit(d));
    EXPECT_EQ(h.take_output(), "md k C5 I T30\r\n");

    const std::vector<std::pair<std::string, Status>> set_replies = {
        {"HD\r\n", Status::stored},
        {"NS\r\n", Status::not_stored},
        {"EX\r\n", Status::exists},
        {"NF\r\n", Status::not_found},
        {"SERVER_ERROR object too large for cache\r\n", Status::value_too_large}};
    for (const auto& [reply, status] : set_replies) {
        test::DriverHarness hs(std::make_unique<detail::MetaDriver>(with(Protocol::meta)));
        s.meta.set_mode = 0;
        ASSERT_FALSE(hs.submit(s));
        ASSERT_FALSE(hs.feed(reply)) << reply;
        // A SERVER_ERROR mapped to a Status keeps the server's text.
        const std::string text =
            status == Status::value_too_large ? "object too large for cache" : "";
        EXPECT_EQ(hs.op.completions(),
                  std::vector<test::Event>{test::done_event(0, status, 0, text)})
            << reply;
    }
    const std::vector<std::pair<std::string, Status>> delete_replies = {
        {"HD\r\n", Status::deleted}, {"NF\r\n", Status::not_found}, {"EX\r\n", Status::exists}};
    for (const auto& [reply, status] : delete_replies) {
        test::DriverHarness hd(std::make_unique<detail::MetaDriver>(with(Protocol::meta)));
        ASSERT_FALSE(hd.submit(d));
        ASSERT_FALSE(hd.feed(reply)) << reply;
        EXPECT_EQ(hd.op.completions(), std::vector<test::Event>{test::done_event(0, status)})
            << reply;
    }
}

TEST(MetaOpsDriver, MetaGetResultCarriesWinStaleAndReturnFlagsAtEverySplit) {
    const std::string reply = "VA 2 c42 f7 t30 h1 l3 Z X\r\nhi\r\n";
    for (std::size_t cut = 0; cut <= reply.size(); ++cut) {
        test::DriverHarness h(std::make_unique<detail::MetaDriver>(with(Protocol::meta)));
        MetaGetOp op;
        ASSERT_FALSE(h.submit(meta_get("k"), 0, &op));
        ASSERT_FALSE(h.feed(reply, {cut})) << cut;
        ASSERT_EQ(op.completions, 1) << cut;
        auto [ec, r] = op.collector.result();
        EXPECT_FALSE(ec);
        ASSERT_TRUE(r.value);
        EXPECT_EQ(r.value->data, "hi");
        EXPECT_EQ(r.value->cas, 42u);
        EXPECT_EQ(r.value->flags, 7u);
        EXPECT_EQ(r.cas, 42u);
        EXPECT_EQ(r.flags, 7u);
        EXPECT_EQ(r.ttl, 30);
        EXPECT_EQ(r.hit_before, true);
        EXPECT_EQ(r.last_access, 3u);
        EXPECT_TRUE(r.stale);
        EXPECT_TRUE(r.win_sent);
        EXPECT_FALSE(r.win);
    }
}

TEST(MetaOpsDriver, MetaGetStubMissAndErrors) {
    {
        test::DriverHarness h(std::make_unique<detail::MetaDriver>(with(Protocol::meta)));
        MetaGetOp op;
        ASSERT_FALSE(h.submit(meta_get("k"), 0, &op));
        ASSERT_FALSE(h.feed("VA 0 c1 f0 t-1 W\r\n\r\n"));  // memcached 1.6.18's vivified stub
        auto [ec, r] = op.collector.result();
        ASSERT_TRUE(r.value);
        EXPECT_EQ(r.value->data, "");
        EXPECT_TRUE(r.win);
        EXPECT_EQ(r.ttl, -1);
    }
    {
        test::DriverHarness h(std::make_unique<detail::MetaDriver>(with(Protocol::meta)));
        MetaGetOp op;
        ASSERT_FALSE(h.submit(meta_get("k"), 0, &op));
        ASSERT_FALSE(h.feed("EN\r\n"));
        auto [ec, r] = op.collector.result();
        EXPECT_FALSE(ec);
        EXPECT_FALSE(r.value);
        EXPECT_FALSE(r.win || r.stale || r.win_sent);
    }
    {
        test::DriverHarness h(std::make_unique<detail::MetaDriver>(with(Protocol::meta)));
        MetaGetOp op;
        ASSERT_FALSE(h.submit(meta_get("k"), 0, &op));
        ASSERT_FALSE(h.feed("CLIENT_ERROR bad command line format\r\n"));
        auto [ec, r] = op.collector.result();
        EXPECT_EQ(ec, errc::client_error);
        EXPECT_FALSE(r.value);
    }
    {
        // A reply that cannot answer a meta_get is out of step.
        test::DriverHarness h(std::make_unique<detail::MetaDriver>(with(Protocol::meta)));
        MetaGetOp op;
        ASSERT_FALSE(h.submit(meta_get("k"), 0, &op));
        EXPECT_EQ(h.feed("NS\r\n"), errc::protocol_error);
        EXPECT_EQ(op.completions, 0);
    }
}

TEST(MetaOpsDriver, AsciiAndBinaryRefuseMetaOpsWithoutWriting) {
    for (auto p : {Protocol::ascii, Protocol::binary}) {
        std::unique_ptr<detail::ProtocolDriver> d;
        if (p == Protocol::ascii)
            d = std::make_unique<detail::AsciiDriver>(with(p));
        else
            d = std::make_unique<detail::BinaryDriver>(with(p));
        test::DriverHarness h(std::move(d));
        for (OpCode code : {OpCode::meta_get, OpCode::meta_set, OpCode::meta_delete}) {
            Request r;
            r.code = code;
            r.key = "k";
            r.value = "v";
            EXPECT_EQ(h.submit(r), errc::unsupported);
            EXPECT_EQ(h.take_output(), "");
            EXPECT_TRUE(h.inflight.empty());
        }
    }
}

TEST(MetaOpsDriver, TheFakeClientAnswersAsAsciiDoes) {
    BlockingClient c([](asio::any_io_executor ex) { return make_fake_client(ex); });
    auto code_of = [](auto&& f) {
        try {
            f();
        } catch (const std::system_error& e) {
            return e.code();
        }
        return std::error_code{};
    };
    EXPECT_EQ(code_of([&] { c.meta_get("k"); }), errc::unsupported);
    EXPECT_EQ(code_of([&] { c.meta_set("k", "v"); }), errc::unsupported);
    EXPECT_EQ(code_of([&] { c.meta_delete("k"); }), errc::unsupported);
    EXPECT_FALSE(c.get("k"));
}

TEST(MetaOpsDriver, OnlyMetaGetsThatCannotWinAreRetried) {
    Request g = meta_get("k");
    EXPECT_TRUE(cluster::is_idempotent(g));
    g.meta.touch_ttl = 10;
    EXPECT_TRUE(cluster::is_idempotent(g));
    Request n = meta_get("k");
    n.meta.vivify_ttl = 30;
    EXPECT_FALSE(cluster::is_idempotent(n));
    Request r = meta_get("k");
    r.meta.recache_ttl = 30;
    EXPECT_FALSE(cluster::is_idempotent(r));
    Request s;
    s.code = OpCode::meta_set;
    EXPECT_FALSE(cluster::is_idempotent(s));
    Request d;
    d.code = OpCode::meta_delete;
    EXPECT_TRUE(cluster::is_idempotent(d));
}

}  // namespace
