// KeyPrefixCore without a server: keys are placed exactly where libmemcached places them with
// the same namespace (MEMCACHED_CALLBACK_PREFIX_KEY), both with and without
// MEMCACHED_BEHAVIOR_HASH_WITH_PREFIX_KEY; every keyed request reaches the inner core with its
// key prefixed, values come back under the caller's key, the prefix counts toward the key
// limit, and invalid prefixes are refused.
#include "cluster/key_prefix_core.hpp"

#include "folsom/cluster/continuum.hpp"
#include "folsom/detail/client_core.hpp"
#include "folsom/error.hpp"

#include "support/recording_operation.hpp"

#include <asio/io_context.hpp>
#include <gtest/gtest.h>
#include <libmemcached/memcached.h>

#include <memory>
#include <string>
#include <vector>

namespace {

using folsom::errc;
using folsom::ServerAddress;
using folsom::detail::KeyPrefixCore;
using folsom::detail::OpCode;
using folsom::detail::Request;
using folsom::test::RecordingOperation;

/// The inner core: places keys on a libmemcached-compatible ring and writes down every request
/// it is given (with owning copies of the keys), answering each with one scripted value.
class RingCore final : public folsom::detail::ClientCore {
  public:
    RingCore(asio::io_context& io, const std::vector<ServerAddress>& servers)
        : ClientCore(100),
          io_(io),
          ring_(servers, folsom::cluster::Distribution::ketama_libmemcached),
          count_(servers.size()) {}

    struct Seen {
        std::size_t server;
        OpCode code;
        std::string key;
        std::vector<std::string> keys;
    };

    asio::any_io_executor executor() const noexcept override { return io_.get_executor(); }
    std::size_t server_count() const noexcept override { return count_; }
    std::size_t server_for(std::string_view key) const noexcept override {
        return ring_.server_index(key);
    }
    const std::string& server_name(std::size_t) const noexcept override { return name_; }
    std::size_t max_value_size() const noexcept override { return 1024 * 1024; }
    void shutdown() override {}
    void submit(std::size_t server, folsom::detail::Operation& op, std::uint32_t part,
                const Request& r) override {
        Seen s{server, r.code, std::string(r.key), {}};
        for (auto k : r.keys)
            s.keys.emplace_back(k);
        seen.push_back(s);
        // A retrieval answers every key, naming it as the server does (ASCII names keys).
        for (std::size_t i = 0; i < r.keys.size(); ++i)
            op.on_value(part, static_cast<std::uint32_t>(i),
                        folsom::ValueView{r.keys[i], "v", 0, 0});
        op.on_complete(part, folsom::detail::Completion{});
    }

    std::vector<Seen> seen;

  private:
    asio::io_context& io_;
    folsom::cluster::Continuum ring_;
    std::size_t count_;
    std::string name_ = "ring";
};

/// libmemcached with a namespace, placing keys without connecting.
class Libmemcached {
  public:
    Libmemcached(const std::vector<ServerAddress>& servers, const std::string& prefix,
                 bool hash_with_prefix)
        : memc_(memcached_create(nullptr)) {
        EXPECT_EQ(memcached_behavior_set(memc_, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1),
                  MEMCACHED_SUCCESS);
        for (const auto& s : servers)
            EXPECT_EQ(memcached_server_add_with_weight(memc_, s.host.c_str(), s.port, s.weight),
                      MEMCACHED_SUCCESS);
        EXPECT_EQ(memcached_callback_set(memc_, MEMCACHED_CALLBACK_PREFIX_KEY, prefix.c_str()),
                  MEMCACHED_SUCCESS);
        EXPECT_EQ(memcached_behavior_set(memc_, MEMCACHED_BEHAVIOR_HASH_WITH_PREFIX_KEY,
                                         hash_with_prefix ? 1 : 0),
                  MEMCACHED_SUCCESS);
    }
    ~Libmemcached() { memcached_free(memc_); }
    Libmemcached(const Libmemcached&) = delete;
    Libmemcached& operator=(const Libmemcached&) = delete;
    std::size_t server_index(const std::string& key) const {
        return memcached_generate_hash(memc_, key.data(), key.size());
    }

  private:
    memcached_st* memc_;
};

const std::vector<ServerAddress> servers = {{"10.0.0.1", 11211, 1},
                                            {"10.0.0.2", 11212, 2},
                                            {"cache-c.example", 11211, 1},
                                            {"10.0.0.4", 22122, 3},
                                            {"10.0.0.5", 11211, 1}};

void expect_libmemcached_placement(const std::string& prefix, bool hash_with_prefix) {
    asio::io_context io;
    auto ring = std::make_shared<RingCore>(io, servers);
    const KeyPrefixCore core(ring, prefix, hash_with_prefix, 100);
    const Libmemcached reference(servers, prefix, hash_with_prefix);
    std::size_t mismatches = 0, moved = 0;
    for (int i = 0; i < 5000; ++i) {
        const std::string key = "user:" + std::to_string(i);
        const std::size_t ours = core.server_for(key);
        if (ours != reference.server_index(key) && ++mismatches <= 5)
            ADD_FAILURE() << key << ": libmemcached " << reference.server_index(key) << ", ours "
                          << ours;
        if (ours != ring->server_for(key)) ++moved;
    }
    EXPECT_EQ(mismatches, 0u);
    // Guard against a vacuous pass: hashing with the prefix really moves keys; without it,
    // none.
    if (hash_with_prefix)
        EXPECT_GT(moved, 1000u);
    else
        EXPECT_EQ(moved, 0u);
}

TEST(KeyPrefixCore, PlacementMatchesLibmemcachedHashingWithThePrefix) {
    expect_libmemcached_placement("app:", true);
    expect_libmemcached_placement("a-much-longer-namespace.v2/", true);
}

TEST(KeyPrefixCore, PlacementMatchesLibmemcachedHashingWithoutThePrefix) {
    expect_libmemcached_placement("app:", false);
}

class Requests : public ::testing::Test {
  protected:
    asio::io_context io_;
    std::shared_ptr<RingCore> ring_ = std::make_shared<RingCore>(io_, servers);
    KeyPrefixCore core_{ring_, "ns:", true, 100};
};

TEST_F(Requests, StoresAndOtherKeyedRequestsArePrefixed) {
    for (OpCode code : {OpCode::set, OpCode::cas, OpCode::del, OpCode::touch, OpCode::incr}) {
        RecordingOperation op;
        Request r;
        r.code = code;
        r.key = "k1";
        r.value = "v";
        core_.submit(3, op, 0, r);
        ASSERT_FALSE(ring_->seen.empty());
        EXPECT_EQ(ring_->seen.back().key, "ns:k1");
        EXPECT_EQ(ring_->seen.back().server, 3u);  // the caller's routing stands
        ASSERT_EQ(op.completions().size(), 1u);
        EXPECT_FALSE(op.completions()[0].ec);
    }
}

TEST_F(Requests, RetrievalsArePrefixedAndValuesComeBackUnderTheCallersKey) {
    RecordingOperation op;
    const std::string_view keys[] = {"a", "bb", "ccc"};
    Request r;
    r.code = OpCode::get;
    r.keys = keys;
    r.key = keys[0];
    core_.submit(1, op, 7, r);
    ASSERT_EQ(ring_->seen.size(), 1u);
    EXPECT_EQ(ring_->seen[0].keys, (std::vector<std::string>{"ns:a", "ns:bb", "ns:ccc"}));
    EXPECT_EQ(ring_->seen[0].key, "ns:a");
    ASSERT_EQ(op.events.size(), 4u);
    EXPECT_EQ(op.events[0], folsom::test::value_event(7, 0, "a", "v"));
    EXPECT_EQ(op.events[1], folsom::test::value_event(7, 1, "bb", "v"));
    EXPECT_EQ(op.events[2], folsom::test::value_event(7, 2, "ccc", "v"));
    EXPECT_EQ(op.events[3], folsom::test::done_event(7));

    // One key, as Client::get sends it (key and keys both set).
    RecordingOperation one;
    Request g;
    g.code = OpCode::gets;
    g.key = "solo";
    g.keys = {&g.key, 1};
    core_.submit(0, one, 0, g);
    EXPECT_EQ(ring_->seen.back().keys, (std::vector<std::string>{"ns:solo"}));
    ASSERT_EQ(one.events.size(), 2u);
    EXPECT_EQ(one.events[0].key, "solo");
}

TEST_F(Requests, ThePrefixCountsTowardTheKeyLimit) {
    const std::string fits(247, 'k');      // "ns:" + 247 = 250
    const std::string too_long(248, 'k');  // 251
    for (const std::string* key : {&fits, &too_long}) {
        RecordingOperation store;
        Request s;
        s.code = OpCode::set;
        s.key = *key;
        core_.submit(0, store, 0, s);
        ASSERT_EQ(store.completions().size(), 1u);
        RecordingOperation get;
        Request g;
        g.code = OpCode::get;
        g.key = *key;
        g.keys = {&g.key, 1};
        core_.submit(0, get, 0, g);
        ASSERT_EQ(get.completions().size(), 1u);
        const std::error_code expected =
            key == &too_long ? std::error_code(errc::invalid_key) : std::error_code();
        EXPECT_EQ(store.completions()[0].ec, expected) << key->size();
        EXPECT_EQ(get.completions()[0].ec, expected) << key->size();
    }
    // An empty key stays invalid although "ns:" alone would be a key.
    RecordingOperation empty;
    Request e;
    e.code = OpCode::del;
    core_.submit(0, empty, 0, e);
    ASSERT_EQ(empty.completions().size(), 1u);
    EXPECT_EQ(empty.completions()[0].ec, errc::invalid_key);
    // Neither the too-long nor the empty key reached the inner core.
    for (const auto& s : ring_->seen) {
        EXPECT_LE(s.key.size(), 250u);
        EXPECT_NE(s.key, "ns:");
    }
}

TEST_F(Requests, RequestsWithoutKeysPassUntouched) {
    RecordingOperation op;
    Request r;
    r.code = OpCode::stats;
    r.group = "slabs";
    core_.submit(2, op, 0, r);
    ASSERT_EQ(ring_->seen.size(), 1u);
    EXPECT_EQ(ring_->seen[0].code, OpCode::stats);
    EXPECT_EQ(ring_->seen[0].key, "");
}

// send(): the core places the key itself, where server_for() says (the prefixed key, or the
// key as given), and the inner core receives it prefixed.
void expect_send_places_as_server_for(bool hash_with_prefix) {
    asio::io_context io;
    auto ring = std::make_shared<RingCore>(io, servers);
    KeyPrefixCore core(ring, "ns:", hash_with_prefix, 100);
    std::size_t moved = 0;
    for (int i = 0; i < 200; ++i) {
        const std::string key = "user:" + std::to_string(i);
        for (OpCode code : {OpCode::set, OpCode::get}) {
            RecordingOperation op;
            Request r;
            r.code = code;
            r.key = key;
            r.keys = {&r.key, 1};
            r.value = "v";
            core.send(op, 0, r);
            ASSERT_FALSE(ring->seen.empty());
            EXPECT_EQ(ring->seen.back().server, core.server_for(key)) << key;
            EXPECT_EQ(ring->seen.back().key, "ns:" + key);
            ASSERT_EQ(op.completions().size(), 1u);
            EXPECT_FALSE(op.completions()[0].ec);
        }
        if (ring->seen.back().server != ring->server_for(key)) ++moved;
    }
    EXPECT_EQ(ring->seen.size(), 400u);
    // Not vacuous: with the prefix hashed, keys land elsewhere than their bare hash says.
    if (hash_with_prefix)
        EXPECT_GT(moved, 20u);
    else
        EXPECT_EQ(moved, 0u);
}

TEST(KeyPrefixCore, SendPlacesTheKeyAsServerForSaysAndSendsItPrefixed) {
    expect_send_places_as_server_for(true);
    expect_send_places_as_server_for(false);
}

TEST_F(Requests, SendRefusesAKeyTooLongToPrefixWithoutPassingItOn) {
    RecordingOperation op;
    Request r;
    r.code = OpCode::get;
    const std::string too_long(248, 'k');
    r.key = too_long;
    r.keys = {&r.key, 1};
    core_.send(op, 0, r);
    ASSERT_EQ(op.completions().size(), 1u);
    EXPECT_EQ(op.completions()[0].ec, errc::invalid_key);
    EXPECT_TRUE(ring_->seen.empty());
}

TEST(KeyPrefix, WithBinaryKeysAPrefixOfAnyBytesIsPutInFrontOfTheRawKeyAndCountsTo186) {
    asio::io_context io;
    auto ring = std::make_shared<RingCore>(io, servers);
    const std::string prefix("\0ns \xff", 5);
    KeyPrefixCore core(ring, prefix, true, 100, true);
    const std::string key("\r\n\x80", 3);
    // Placement hashes prefix + key as raw bytes, as the inner core would for the whole key.
    EXPECT_EQ(core.server_for(key), ring->server_for(prefix + key));
    RecordingOperation get;
    Request g;
    g.code = OpCode::get;
    std::vector<std::string_view> keys{key, "x"};
    g.keys = keys;
    g.key = keys.front();
    core.submit(0, get, 0, g);
    ASSERT_EQ(ring->seen.size(), 1u);
    EXPECT_EQ(ring->seen[0].keys, (std::vector<std::string>{prefix + key, prefix + "x"}));
    ASSERT_EQ(get.events.size(), 3u);
    EXPECT_EQ(get.events[0].key, key);  // the caller's raw bytes, without the prefix
    EXPECT_EQ(get.events[1].key, "x");
    // 181 + 5 = 186 fits; 182 + 5 does not, and never reaches the inner core.
    for (std::size_t n : {181u, 182u}) {
        RecordingOperation del;
        Request d;
        d.code = OpCode::del;
        const std::string k(n, '\n');
        d.key = k;
        core.submit(0, del, 0, d);
        ASSERT_EQ(del.completions().size(), 1u);
        EXPECT_EQ(del.completions()[0].ec,
                  n == 181 ? std::error_code() : std::error_code(errc::invalid_key));
    }
    EXPECT_EQ(ring->seen.size(), 2u);
    EXPECT_EQ(ring->seen[1].key.size(), 186u);

    using folsom::detail::validate_key_prefix;
    EXPECT_FALSE(validate_key_prefix(std::string(185, '\0'), true));
    EXPECT_EQ(validate_key_prefix(std::string(186, 'p'), true), errc::invalid_argument);
    EXPECT_FALSE(validate_key_prefix("a b\r\n", true));
}

TEST(KeyPrefix, Validation) {
    using folsom::detail::validate_key_prefix;
    EXPECT_FALSE(validate_key_prefix(""));
    EXPECT_FALSE(validate_key_prefix("app:v2/"));
    EXPECT_FALSE(validate_key_prefix(std::string(249, 'p')));
    EXPECT_EQ(validate_key_prefix(std::string(250, 'p')), errc::invalid_argument);
    for (const char* bad : {"a b", "tab\t", "nl\n", "cr\r", "del\x7f"})
        EXPECT_EQ(validate_key_prefix(bad), errc::invalid_argument) << bad;
    EXPECT_EQ(validate_key_prefix(std::string_view("nul\0", 4)), errc::invalid_argument);
}

}  // namespace
