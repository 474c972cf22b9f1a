// Quiet writes in the three drivers against scripted reply bytes: what goes on the wire (meta
// q + O<n>, the binary ...Q opcodes, ascii noreply), which writes each driver sends quietly,
// and how a reply that passes over quiet commands completes them: silent ones with their
// success, the ones a failure names with that failure, and every one of a window with an
// error line that names no request conservatively.
#include "folsom/error.hpp"
#include "folsom/protocol/binary_protocol.hpp"

#include "wire/ascii_driver.hpp"
#include "wire/binary_driver.hpp"
#include "wire/meta_driver.hpp"
#include "support/recording_operation.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace {

using namespace folsom;
using detail::OpCode;
using detail::Request;
using test::done_event;
using test::error_event;
using test::Event;

Options with(Protocol p) {
    Options o;
    o.protocol = p;
    return o;
}

/// A harness whose barrier (the connection's noop) completes a separate operation.
struct Quiet : test::DriverHarness {
    explicit Quiet(std::unique_ptr<detail::ProtocolDriver> d) : DriverHarness(std::move(d)) {}
    /// Queues a quiet write of `code` on `key` as part `part`.
    net::Command write(OpCode code, std::string_view key, std::uint32_t part,
                       std::string_view value = "v") {
        Request r;
        r.code = code;
        r.key = key;
        r.value = value;
        r.delta = 1;
        r.cas = code == OpCode::cas ? 77 : 0;
        r.quiet = true;
        EXPECT_FALSE(submit(r, part));
        return last;
    }
    void barrier() {
        Request r;
        r.code = OpCode::noop;
        EXPECT_FALSE(submit(r, 0, &barrier_op));
    }
    test::RecordingOperation barrier_op;
};

Quiet meta() {
    return Quiet(std::make_unique<detail::MetaDriver>(with(Protocol::meta)));
}

// ---- meta ---------------------------------------------------------------------------------

TEST(QuietMeta, SmallStoresDeletesAndTouchesGoQuietWithAnOpaqueTheOthersAcknowledged) {
    Quiet h = meta();
    const detail::MetaDriver& d = static_cast<const detail::MetaDriver&>(*h.driver);
    Request r;
    r.quiet = true;
    r.key = "k";
    for (OpCode c : {OpCode::set, OpCode::add, OpCode::replace, OpCode::append, OpCode::prepend,
                     OpCode::cas, OpCode::del, OpCode::touch}) {
        r.code = c;
        EXPECT_TRUE(d.sends_quietly(r)) << static_cast<int>(c);
    }
    for (OpCode c : {OpCode::incr, OpCode::decr}) {  // a non-number is an error line
        r.code = c;
        EXPECT_FALSE(d.sends_quietly(r));
    }
    r.code = OpCode::set;
    const std::string big(511, 'x');  // key + value reach 512: could be "too large"
    r.value = big;
    EXPECT_FALSE(d.sends_quietly(r));
    r.value = "v";
    r.quiet = false;
    EXPECT_FALSE(d.sends_quietly(r));

    EXPECT_TRUE(h.write(OpCode::set, "a", 0).quiet);
    EXPECT_TRUE(h.write(OpCode::del, "b", 1).quiet);
    EXPECT_TRUE(h.write(OpCode::touch, "c", 2).quiet);
    EXPECT_FALSE(h.write(OpCode::incr, "d", 3).quiet);
    const std::string wire = h.take_output();
    EXPECT_NE(wire.find("ms a 1 q O0"), std::string::npos) << wire;
    EXPECT_NE(wire.find("md b q O1"), std::string::npos) << wire;
    EXPECT_NE(wire.find("mg c q O2 T0"), std::string::npos) << wire;
    EXPECT_NE(wire.find("ma d"), std::string::npos) << wire;
    EXPECT_EQ(wire.find("ma d q"), std::string::npos) << wire;
}

TEST(QuietMeta, SilenceIsSuccessAndEachFailureFindsItsOwnWrite) {
    Quiet h = meta();
    h.write(OpCode::set, "a", 0);
    h.write(OpCode::add, "b", 1);
    h.write(OpCode::set, "c", 2);
    h.write(OpCode::cas, "d", 3);
    h.write(OpCode::del, "e", 4);
    h.write(OpCode::del, "f", 5);
    h.write(OpCode::touch, "g", 6);  // hit: HD; silence is a miss
    h.write(OpCode::touch, "h", 7);
    h.write(OpCode::replace, "i", 8);
    h.barrier();
    // Byte by byte too: the outcome must not depend on how reads cut the replies.
    const std::string replies = "NS O1\r\nEX O3\r\nNF O5\r\nHD O6\r\nMN\r\n";
    std::vector<std::size_t> cuts;
    for (std::size_t i = 1; i < replies.size(); ++i)
        cuts.push_back(i);
    ASSERT_FALSE(h.feed(replies, cuts)) << h.message;
    EXPECT_EQ(h.op.completions(),
              (std::vector<Event>{done_event(0, Status::stored), done_event(1, Status::not_stored),
                                  done_event(2, Status::stored), done_event(3, Status::exists),
                                  done_event(4, Status::deleted), done_event(5, Status::not_found),
                                  done_event(6, Status::touched), done_event(7, Status::not_found),
                                  done_event(8, Status::stored)}));
    EXPECT_EQ(h.barrier_op.completions().size(), 1u);
    EXPECT_TRUE(h.inflight.empty());
}

TEST(QuietMeta, AnOutOfMemoryLineFailsEveryStoreOfItsWindowAndNothingElse) {
    Quiet h = meta();
    h.write(OpCode::set, "a", 0);
    h.write(OpCode::set, "b", 1);
    h.write(OpCode::del, "c", 2);
    h.write(OpCode::set, "d", 3);  // named below: the window closes before it
    h.write(OpCode::set, "e", 4);
    h.barrier();
    ASSERT_FALSE(h.feed("SERVER_ERROR out of memory storing object\r\nNS O3\r\nMN\r\n"))
        << h.message;
    EXPECT_EQ(
        h.op.completions(),
        (std::vector<Event>{done_event(0, Status::out_of_memory),
                            done_event(1, Status::out_of_memory), done_event(2, Status::deleted),
                            done_event(3, Status::not_stored), done_event(4, Status::stored)}));
}

TEST(QuietMeta, AnyOtherErrorLineFailsEveryWriteOfItsWindow) {
    Quiet h = meta();
    h.write(OpCode::set, "a", 0);
    h.write(OpCode::del, "b", 1);
    h.barrier();
    h.write(OpCode::set, "c", 2);
    h.barrier();
    ASSERT_FALSE(h.feed("CLIENT_ERROR bad data chunk\r\nMN\r\nMN\r\n")) << h.message;
    EXPECT_EQ(h.op.completions(), (std::vector<Event>{error_event(0, errc::client_error),
                                                      error_event(1, errc::client_error),
                                                      done_event(2, Status::stored)}));
}

TEST(QuietMeta, AnOpaqueNoQuietWriteHasIsOutOfStep) {
    Quiet h = meta();
    h.write(OpCode::set, "a", 0);
    h.barrier();
    EXPECT_EQ(h.feed("NS O9\r\n"), errc::protocol_error);
}

// ---- binary -------------------------------------------------------------------------------

TEST(QuietBinary, QuietOpcodesAndOutcomesByOpaque) {
    Quiet h(std::make_unique<detail::BinaryDriver>(with(Protocol::binary)));
    const auto a = h.write(OpCode::set, "a", 0);
    const auto b = h.write(OpCode::add, "b", 1);
    h.write(OpCode::del, "c", 2);
    const auto d = h.write(OpCode::incr, "d", 3);
    const auto t = h.write(OpCode::touch, "t", 4);  // no quiet touch: acknowledged
    EXPECT_TRUE(a.quiet && b.quiet && d.quiet);
    EXPECT_FALSE(t.quiet);
    const std::string wire = h.take_output();
    namespace bin = protocol::binary;
    ASSERT_GE(wire.size(), 24u);
    EXPECT_EQ(static_cast<unsigned char>(wire[1]), static_cast<unsigned>(bin::Opcode::setq));
    h.barrier();
    h.take_output();
    // add of an existing key fails (KEY_EXISTS, opaque of b); the touch answers; NOOP closes.
    auto reply = [](bin::Opcode op, bin::ResponseStatus st, std::uint32_t opaque) {
        std::string s(24, '\0');
        s[0] = '\x81';
        s[1] = static_cast<char>(op);
        s[6] = static_cast<char>(static_cast<unsigned>(st) >> 8);
        s[7] = static_cast<char>(static_cast<unsigned>(st) & 0xff);
        for (int i = 0; i < 4; ++i)
            s[12 + i] = static_cast<char>(opaque >> (24 - 8 * i));
        return s;
    };
    const std::string replies =
        reply(bin::Opcode::addq, bin::ResponseStatus::key_exists, b.opaque) +
        reply(bin::Opcode::touch, bin::ResponseStatus::no_error, t.opaque) +
        reply(bin::Opcode::noop, bin::ResponseStatus::no_error, t.opaque + 1);
    ASSERT_FALSE(h.feed(replies)) << h.message;
    EXPECT_EQ(h.op.completions(),
              (std::vector<Event>{done_event(0, Status::stored), done_event(1, Status::not_stored),
                                  done_event(2, Status::deleted), done_event(3, Status::ok),
                                  done_event(4, Status::touched)}));
    EXPECT_TRUE(h.inflight.empty());
}

// ---- ascii --------------------------------------------------------------------------------

TEST(QuietAscii, NoreplyUnlessTheOutcomeIsRequired) {
    Quiet h(std::make_unique<detail::AsciiDriver>(with(Protocol::ascii)));
    const auto s = h.write(OpCode::set, "a", 0);
    const auto del = h.write(OpCode::del, "b", 1);
    const auto inc = h.write(OpCode::incr, "c", 2);
    const auto t = h.write(OpCode::touch, "d", 3);
    EXPECT_TRUE(s.unanswered && del.unanswered && inc.unanswered && t.unanswered);
    EXPECT_EQ(h.take_output(),
              "set a 0 0 1 noreply\r\nv\r\ndelete b noreply\r\nincr c 1 noreply\r\n"
              "touch d 0 noreply\r\n");
    Request r;
    r.code = OpCode::set;
    r.key = "e";
    r.value = "v";
    r.quiet = true;
    r.outcome_required = true;  // a multi-key write: acknowledged
    ASSERT_FALSE(h.submit(r, 4));
    EXPECT_FALSE(h.last.unanswered);
    EXPECT_EQ(h.take_output(), "set e 0 0 1\r\nv\r\n");
    // The noreply writes ahead of a reply complete as sent; the reply goes to its own write.
    ASSERT_FALSE(h.feed("STORED\r\n")) << h.message;
    EXPECT_EQ(h.op.completions(),
              (std::vector<Event>{done_event(0, Status::sent), done_event(1, Status::sent),
                                  done_event(2, Status::sent), done_event(3, Status::sent),
                                  done_event(4, Status::stored)}));
}

}  // namespace
