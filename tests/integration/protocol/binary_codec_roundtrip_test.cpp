// The binary encoder and decoder against a real memcached, over a plain blocking socket: the
// server is the judge of whether our requests are well formed and our decoding is right.
#include "folsom/protocol/binary_decoder.hpp"
#include "folsom/protocol/binary_encoder.hpp"

#include "support/memcached_server.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <chrono>
#include <map>
#include <netinet/in.h>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace {

using namespace folsom::protocol;
using namespace folsom::protocol::binary;

// A decoded response with owned bytes (the read buffer is reused between reads).
struct Reply {
    Opcode opcode;
    ResponseStatus status;
    std::uint32_t opaque;
    std::uint64_t cas;
    std::string key, value;
    std::uint32_t flags;
    bool has_flags;
    std::uint64_t number;
};

class Connection {
  public:
    explicit Connection(std::uint16_t port) {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd_ < 0) throw std::runtime_error("socket() failed");
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(port);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
            throw std::runtime_error("connect() failed");
    }
    ~Connection() { ::close(fd_); }
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    /// Writes everything in `out` (every segment, so referenced values go out too).
    void send(OutputBuffer& out) {
        out.for_each_segment([&](OutputBuffer::Segment s) {
            std::size_t off = 0;
            while (off < s.size) {
                const ssize_t n = ::send(fd_, s.data + off, s.size - off, MSG_NOSIGNAL);
                if (n <= 0) throw std::runtime_error("send() failed");
                off += static_cast<std::size_t>(n);
            }
        });
        out.clear();
    }

    /// Reads until the decoder yields one response (5 s at most).
    Reply receive() {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        for (;;) {
            Response r;
            const ParseResult res = decoder_.parse(std::string_view(buffer_).substr(consumed_), r);
            if (res.state == ParseState::error)
                throw std::runtime_error("decode error: " + decoder_.error().message());
            if (res.state == ParseState::complete) {
                Reply out{r.opcode, r.status,           r.opaque,
                          r.cas,    std::string(r.key), std::string(r.value),
                          r.flags,  r.has_flags,        r.number};
                consumed_ += res.consumed;
                return out;
            }
            if (std::chrono::steady_clock::now() > deadline)
                throw std::runtime_error("timed out waiting for a response");
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, 100) <= 0) continue;
            // Read at least what the decoder says it needs (here: whatever is available).
            char buf[65536];
            const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
            if (n <= 0) throw std::runtime_error("connection closed by the server");
            buffer_.erase(0, consumed_);
            consumed_ = 0;
            buffer_.append(buf, static_cast<std::size_t>(n));
        }
    }

    /// True when no bytes are waiting (quiet commands really were quiet).
    bool nothing_pending() {
        pollfd p{fd_, POLLIN, 0};
        return consumed_ == buffer_.size() && ::poll(&p, 1, 50) == 0;
    }

  private:
    int fd_ = -1;
    Decoder decoder_;
    std::string buffer_;
    std::size_t consumed_ = 0;
};

class BinaryCodecRoundTrip : public ::testing::Test {
  protected:
    folsom::test::MemcachedServer server_;
    Connection conn_{server_.port()};
    OutputBuffer out_;
};

TEST_F(BinaryCodecRoundTrip, SetThenGetHitAndMiss) {
    ASSERT_FALSE(
        encode_store(out_, StoreCommand::set, "greeting", "hello", 0xcafe, 0, 0, false, 11));
    conn_.send(out_);
    const Reply set = conn_.receive();
    EXPECT_EQ(set.opcode, Opcode::set);
    EXPECT_EQ(set.status, ResponseStatus::no_error);
    EXPECT_EQ(set.opaque, 11u);
    EXPECT_NE(set.cas, 0u);

    ASSERT_FALSE(encode_get(out_, GetCommand::get, "greeting", 12));
    ASSERT_FALSE(encode_get(out_, GetCommand::get, "absent", 13));
    conn_.send(out_);
    const Reply hit = conn_.receive();
    EXPECT_EQ(hit.opcode, Opcode::get);
    EXPECT_EQ(hit.status, ResponseStatus::no_error);
    EXPECT_EQ(hit.opaque, 12u);
    EXPECT_EQ(hit.value, "hello");
    EXPECT_TRUE(hit.has_flags);
    EXPECT_EQ(hit.flags, 0xcafeu);
    EXPECT_EQ(hit.cas, set.cas);
    const Reply miss = conn_.receive();
    EXPECT_EQ(miss.status, ResponseStatus::key_not_found);
    EXPECT_EQ(miss.opaque, 13u);
    EXPECT_FALSE(miss.has_flags);
}

TEST_F(BinaryCodecRoundTrip, BinaryKeyAndLargeReferencedValue) {
    using namespace std::string_view_literals;
    const auto key = "key with spaces\r\nand\0nul"sv;
    const std::string value(200 * 1024, 'z');
    ASSERT_FALSE(encode_store(out_, StoreCommand::set, key, value, 1, 0));
    EXPECT_EQ(out_.ref_count(), 1u);  // the value goes out by reference
    conn_.send(out_);
    EXPECT_EQ(conn_.receive().status, ResponseStatus::no_error);
    ASSERT_FALSE(encode_get(out_, GetCommand::getk, key));
    conn_.send(out_);
    const Reply hit = conn_.receive();
    EXPECT_EQ(hit.status, ResponseStatus::no_error);
    EXPECT_EQ(hit.key, key);
    EXPECT_EQ(hit.value, value);
}

TEST_F(BinaryCodecRoundTrip, QuietMultiGetClosedByNoop) {
    ASSERT_FALSE(encode_store(out_, StoreCommand::set, "a", "1", 0, 0));
    ASSERT_FALSE(encode_store(out_, StoreCommand::set, "c", "3", 0, 0));
    conn_.send(out_);
    conn_.receive();
    conn_.receive();

    ASSERT_FALSE(encode_get(out_, GetCommand::getkq, "a", 1));
    ASSERT_FALSE(encode_get(out_, GetCommand::getkq, "b", 2));  // a miss: no reply at all
    ASSERT_FALSE(encode_get(out_, GetCommand::getkq, "c", 3));
    ASSERT_FALSE(encode_noop(out_, 4));
    conn_.send(out_);
    const Reply a = conn_.receive();
    const Reply c = conn_.receive();
    const Reply noop = conn_.receive();
    EXPECT_EQ(a.opcode, Opcode::getkq);
    EXPECT_EQ(a.opaque, 1u);
    EXPECT_EQ(a.key, "a");
    EXPECT_EQ(a.value, "1");
    EXPECT_EQ(c.opaque, 3u);
    EXPECT_EQ(c.key, "c");
    EXPECT_EQ(c.value, "3");
    EXPECT_EQ(noop.opcode, Opcode::noop);
    EXPECT_EQ(noop.opaque, 4u);
    EXPECT_TRUE(conn_.nothing_pending());
}

TEST_F(BinaryCodecRoundTrip, IncrementWithInitialValueThenDecrement) {
    ASSERT_FALSE(encode_arith(out_, ArithCommand::increment, "counter", 5, 40, 0));
    conn_.send(out_);
    const Reply created = conn_.receive();
    EXPECT_EQ(created.status, ResponseStatus::no_error);
    EXPECT_EQ(created.number, 40u);  // absent: seeded with the initial value

    ASSERT_FALSE(encode_arith(out_, ArithCommand::increment, "counter", 5, 40, 0));
    ASSERT_FALSE(encode_arith(out_, ArithCommand::decrement, "counter", 100, 0, 0));
    ASSERT_FALSE(encode_arith(out_, ArithCommand::increment, "nothing", 1, 0, no_auto_create));
    conn_.send(out_);
    EXPECT_EQ(conn_.receive().number, 45u);
    EXPECT_EQ(conn_.receive().number, 0u);  // decrement stops at zero
    EXPECT_EQ(conn_.receive().status, ResponseStatus::key_not_found);

    ASSERT_FALSE(encode_store(out_, StoreCommand::set, "text", "abc", 0, 0));
    ASSERT_FALSE(encode_arith(out_, ArithCommand::increment, "text", 1, 0, 0));
    conn_.send(out_);
    conn_.receive();
    const Reply bad = conn_.receive();
    EXPECT_EQ(bad.status, ResponseStatus::non_numeric);
    EXPECT_FALSE(bad.value.empty());  // the server's explanation
}

TEST_F(BinaryCodecRoundTrip, DeleteHitAndMiss) {
    ASSERT_FALSE(encode_store(out_, StoreCommand::set, "doomed", "x", 0, 0));
    ASSERT_FALSE(encode_delete(out_, "doomed", 0, false, 7));
    ASSERT_FALSE(encode_delete(out_, "doomed", 0, false, 8));
    conn_.send(out_);
    conn_.receive();
    const Reply deleted = conn_.receive();
    EXPECT_EQ(deleted.opcode, Opcode::delete_);
    EXPECT_EQ(deleted.status, ResponseStatus::no_error);
    EXPECT_EQ(deleted.opaque, 7u);
    const Reply again = conn_.receive();
    EXPECT_EQ(again.status, ResponseStatus::key_not_found);
    EXPECT_EQ(again.opaque, 8u);
}

TEST_F(BinaryCodecRoundTrip, CasMismatchAndAddOnExistingKey) {
    ASSERT_FALSE(encode_store(out_, StoreCommand::set, "k", "v1", 0, 0));
    conn_.send(out_);
    const std::uint64_t cas = conn_.receive().cas;
    ASSERT_FALSE(encode_store(out_, StoreCommand::set, "k", "v2", 0, 0, cas + 1));
    ASSERT_FALSE(encode_store(out_, StoreCommand::add, "k", "v3", 0, 0));
    ASSERT_FALSE(encode_store(out_, StoreCommand::set, "k", "v4", 0, 0, cas));
    conn_.send(out_);
    EXPECT_EQ(conn_.receive().status, ResponseStatus::key_exists);
    EXPECT_EQ(conn_.receive().status, ResponseStatus::key_exists);
    EXPECT_EQ(conn_.receive().status, ResponseStatus::no_error);
}

TEST_F(BinaryCodecRoundTrip, Version) {
    ASSERT_FALSE(encode_version(out_, 99));
    conn_.send(out_);
    const Reply v = conn_.receive();
    EXPECT_EQ(v.opcode, Opcode::version);
    EXPECT_EQ(v.status, ResponseStatus::no_error);
    EXPECT_EQ(v.opaque, 99u);
    // The same text the server gives over the text protocol.
    const std::string text = folsom::test::raw_request(server_.port(), "version\r\n");
    EXPECT_EQ(text, "VERSION " + v.value + "\r\n");
}

TEST_F(BinaryCodecRoundTrip, StatListingEndsWithAnEmptyPacket) {
    ASSERT_FALSE(encode_stat(out_));
    conn_.send(out_);
    std::map<std::string, std::string> stats;
    for (;;) {
        const Reply r = conn_.receive();
        ASSERT_EQ(r.opcode, Opcode::stat);
        ASSERT_EQ(r.status, ResponseStatus::no_error);
        if (r.key.empty() && r.value.empty()) break;
        stats[r.key] = r.value;
    }
    EXPECT_EQ(stats["pid"], std::to_string(server_.pid()));
    EXPECT_TRUE(stats.count("uptime"));
    EXPECT_TRUE(stats.count("curr_connections"));

    ASSERT_FALSE(encode_stat(out_, "settings"));
    conn_.send(out_);
    std::map<std::string, std::string> settings;
    for (;;) {
        const Reply r = conn_.receive();
        if (r.key.empty()) break;
        settings[r.key] = r.value;
    }
    EXPECT_EQ(settings["tcpport"], std::to_string(server_.port()));
}

TEST_F(BinaryCodecRoundTrip, TouchGatFlushAndQuietMutations) {
    ASSERT_FALSE(encode_store(out_, StoreCommand::set, "t", "v", 3, 0, 0, /*quiet=*/true));
    ASSERT_FALSE(encode_touch(out_, "t", 1000, 1));
    ASSERT_FALSE(encode_gat(out_, GatCommand::gatk, "t", 2000, 2));
    conn_.send(out_);
    const Reply touched = conn_.receive();  // the quiet set sent nothing
    EXPECT_EQ(touched.opcode, Opcode::touch);
    EXPECT_EQ(touched.status, ResponseStatus::no_error);
    const Reply gat = conn_.receive();
    EXPECT_EQ(gat.opcode, Opcode::gatk);
    EXPECT_EQ(gat.key, "t");
    EXPECT_EQ(gat.value, "v");
    EXPECT_EQ(gat.flags, 3u);

    ASSERT_FALSE(encode_flush(out_));
    ASSERT_FALSE(encode_get(out_, GetCommand::get, "t"));
    conn_.send(out_);
    EXPECT_EQ(conn_.receive().opcode, Opcode::flush);
    EXPECT_EQ(conn_.receive().status, ResponseStatus::key_not_found);
}

}  // namespace
