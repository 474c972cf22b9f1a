// Client::delete_all (Folsom's deleteAll) against three real memcached servers, over every
// protocol: the key is written to each server directly (not through the client, whose
// placement would put it on one), then deleted everywhere at once.
#include "folsom/blocking_client.hpp"
#include "folsom/cluster/discovery.hpp"

#include "support/memcached_server.hpp"
#include "support/protocols.hpp"

#include <gtest/gtest.h>

#include <array>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace std::chrono_literals;
using folsom::errc;
using folsom::NodeResult;
using folsom::Protocol;
using folsom::Status;
using folsom::test::MemcachedServer;
using folsom::test::raw_request;
using folsom::test::stat_value;

class DeleteAll : public ::testing::TestWithParam<Protocol> {
  protected:
    void SetUp() override {
        folsom::Options o;
        o.protocol = GetParam();
        for (auto& s : servers_)
            o.servers.push_back(s.address());
        o.connect_timeout = 2000ms;
        o.request_timeout = 2000ms;
        client_ = std::make_unique<folsom::BlockingClient>(o);
    }

    /// Stores `key` on server `i` itself, behind the client's back.
    void store_on(std::size_t i, const std::string& key) {
        ASSERT_EQ(raw_request(servers_[i].port(), "set " + key + " 0 0 5\r\nhello\r\n"),
                  "STORED\r\n");
    }
    bool present_on(std::size_t i, const std::string& key) {
        return raw_request(servers_[i].port(), "get " + key + "\r\n", "END\r\n")
                   .find("VALUE " + key) != std::string::npos;
    }
    /// delete hits + misses the server has counted: how many deletes reached it.
    long long deletes_seen(std::size_t i) {
        const auto stats = raw_request(servers_[i].port(), "stats\r\n", "END\r\n");
        return stat_value(stats, "delete_hits") + stat_value(stats, "delete_misses");
    }
    /// The results by server address.
    static std::map<std::string, NodeResult<Status>> by_server(
        const std::vector<NodeResult<Status>>& results) {
        std::map<std::string, NodeResult<Status>> m;
        for (const auto& r : results)
            m[r.server] = r;
        return m;
    }

    std::array<MemcachedServer, 3> servers_;
    std::unique_ptr<folsom::BlockingClient> client_;
};

TEST_P(DeleteAll, AKeyOnEveryServerIsGoneFromAll) {
    for (std::size_t i = 0; i < servers_.size(); ++i)
        store_on(i, "everywhere");
    const auto results = by_server(client_->delete_all("everywhere"));
    ASSERT_EQ(results.size(), 3u);
    for (std::size_t i = 0; i < servers_.size(); ++i) {
        const auto& r = results.at(servers_[i].address());
        EXPECT_FALSE(r.error) << r.error.message();
        EXPECT_EQ(r.value, Status::deleted);
        EXPECT_FALSE(present_on(i, "everywhere"));
    }
    EXPECT_FALSE(client_->get("everywhere"));
}

TEST_P(DeleteAll, EachServerSaysWhetherItHadTheKey) {
    store_on(0, "some");
    store_on(2, "some");
    store_on(1, "other");  // a different key on the middle one stays
    const auto results = by_server(client_->delete_all("some"));
    ASSERT_EQ(results.size(), 3u);
    EXPECT_EQ(results.at(servers_[0].address()).value, Status::deleted);
    EXPECT_EQ(results.at(servers_[1].address()).value, Status::not_found);
    EXPECT_EQ(results.at(servers_[2].address()).value, Status::deleted);
    for (const auto& [name, r] : results)
        EXPECT_FALSE(r.error) << name << ": " << r.error.message();
    EXPECT_FALSE(present_on(0, "some"));
    EXPECT_FALSE(present_on(2, "some"));
    EXPECT_TRUE(present_on(1, "other"));
    // Nowhere now: not_found everywhere, which is no error.
    for (const auto& r : client_->delete_all("some")) {
        EXPECT_FALSE(r.error);
        EXPECT_EQ(r.value, Status::not_found);
    }
}

TEST_P(DeleteAll, ADeadServerReportsItsErrorWhileTheOthersDelete) {
    for (std::size_t i = 0; i < servers_.size(); ++i)
        store_on(i, "k");
    ASSERT_EQ(client_->set("warm-up", "x"), Status::stored);  // connections are up
    servers_[1].kill();
    // The first request after the kill may still be in flight when the connection drops;
    // whichever way it fails, it must fail on that server alone.
    const auto results = by_server(client_->delete_all("k"));
    ASSERT_EQ(results.size(), 3u);
    EXPECT_TRUE(results.at(servers_[1].address()).error)
        << folsom::to_string(results.at(servers_[1].address()).value);
    for (std::size_t i : {0u, 2u}) {
        const auto& r = results.at(servers_[i].address());
        EXPECT_FALSE(r.error) << r.error.message();
        EXPECT_EQ(r.value, Status::deleted);
        EXPECT_FALSE(present_on(i, "k"));
    }
    // And again, now that the client knows the server is down.
    const auto later = by_server(client_->delete_all("k"));
    EXPECT_TRUE(later.at(servers_[1].address()).error);
    EXPECT_EQ(later.at(servers_[0].address()).value, Status::not_found);
}

TEST_P(DeleteAll, EveryServerDownIsAnError) {
    ASSERT_EQ(client_->set("warm-up", "x"), Status::stored);
    for (auto& s : servers_)
        s.kill();
    std::error_code ec;
    try {
        client_->delete_all("k");
    } catch (const std::system_error& e) {
        ec = e.code();
    }
    EXPECT_TRUE(ec);
    EXPECT_NE(ec, errc::invalid_key);
}

TEST_P(DeleteAll, AnInvalidKeyIsRefusedWithNothingSent) {
    ASSERT_EQ(client_->set("warm-up", "x"), Status::stored);
    std::array<long long, 3> before{};
    for (std::size_t i = 0; i < servers_.size(); ++i)
        before[i] = deletes_seen(i);
    for (const std::string& bad :
         {std::string("has space"), std::string(251, 'k'), std::string(), std::string("a\r\nb")}) {
        using Outcome = std::pair<std::error_code, std::vector<NodeResult<Status>>>;
        std::promise<Outcome> done;
        client_->async().delete_all(bad, [&](std::error_code e, std::vector<NodeResult<Status>> r) {
            done.set_value({e, std::move(r)});
        });
        auto f = done.get_future();
        ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
        const auto [ec, results] = f.get();
        EXPECT_EQ(ec, errc::invalid_key) << bad.size();
        ASSERT_EQ(results.size(), 3u);
        for (const auto& r : results)
            EXPECT_EQ(r.error, errc::invalid_key);
        EXPECT_THROW(client_->delete_all(bad), std::system_error);
    }
    for (std::size_t i = 0; i < servers_.size(); ++i)
        EXPECT_EQ(deletes_seen(i), before[i]) << "server " << i;
    EXPECT_EQ(client_->async().outstanding(), 0u);
}

TEST(DeleteAllWithoutServers, AnInvalidKeyIsStillRefused) {
    // A discovered client before its first answer has no server: nothing to delete on, but a
    // bad key is still an error rather than an empty success.
    folsom::Options o;
    o.discovery = std::make_shared<folsom::cluster::StaticDiscovery>();
    folsom::BlockingClient client(o);
    EXPECT_TRUE(client.delete_all("fine").empty());
    try {
        client.delete_all("not fine");
        ADD_FAILURE() << "no error";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::invalid_key);
    }
}

INSTANTIATE_TEST_SUITE_P(Protocols, DeleteAll, folsom::test::all_protocols,
                         folsom::test::protocol_name);

}  // namespace
