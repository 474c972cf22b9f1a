// Distribution names (what --distribution, Python's distribution= and a route pool's "hash"
// take), and the refusals: an unknown name, a hash a scheme does not take, a weight of 0.
#include "folsom/cluster/continuum.hpp"
#include "folsom/cluster/distribution.hpp"
#include "folsom/error.hpp"
#include "folsom/server_address.hpp"

#include <gtest/gtest.h>

#include <string>
#include <system_error>
#include <vector>

namespace {

using folsom::ServerAddress;
using folsom::cluster::Continuum;
using folsom::cluster::Distribution;
using folsom::cluster::KeyHash;
using folsom::cluster::parse_distribution;

TEST(DistributionName, EveryNameReadsBack) {
    const std::vector<std::string> names = {"ketama_libmemcached",
                                            "ketama_libmemcached:crc",
                                            "ketama_spymemcached",
                                            "folsom_murmur",
                                            "mcrouter_ch3",
                                            "pymemcache_rendezvous",
                                            "pymemcache_rendezvous_bytes",
                                            "libmemcached_modula",
                                            "libmemcached_modula:md5",
                                            "libmemcached_modula:murmur3",
                                            "libmemcached_consistent",
                                            "libmemcached_consistent:fnv1a_64",
                                            "gomemcache",
                                            "dalli",
                                            "cache_memcached",
                                            "cache_memcached_fast",
                                            "pecl_memcache_consistent",
                                            "pecl_memcache_consistent:fnv1a_32",
                                            "pecl_memcache_standard",
                                            "pecl_memcache_standard:fnv1a_32"};
    for (const auto& name : names) {
        std::string why;
        const auto d = parse_distribution(name, &why);
        ASSERT_TRUE(d) << name << ": " << why;
        EXPECT_EQ(folsom::cluster::distribution_name(*d), name);
        EXPECT_EQ(folsom::cluster::distribution_error(*d), "") << name;
    }
}

TEST(DistributionName, AliasesAndDefaults) {
    EXPECT_EQ(parse_distribution("ketama"), Distribution::ketama_libmemcached);
    EXPECT_EQ(parse_distribution("modula"), Distribution::libmemcached_modula);
    EXPECT_EQ(parse_distribution("modula:default"), Distribution::libmemcached_modula);
    EXPECT_EQ(parse_distribution("libmemcached_modula:one_at_a_time"),
              Distribution::libmemcached_modula);
    EXPECT_EQ(parse_distribution("pymemcache"), Distribution::pymemcache_rendezvous);
    EXPECT_EQ(parse_distribution("Ch3"), Distribution::mcrouter_ch3);
    EXPECT_EQ(parse_distribution("pecl_memcache:fnv"),
              Distribution::pecl_memcache_consistent.with_hash(KeyHash::fnv1a_32));
    EXPECT_EQ(parse_distribution("ketama_libmemcached:md5"), Distribution::ketama_libmemcached);
}

TEST(DistributionName, RefusesWithOneLine) {
    std::string why;
    EXPECT_FALSE(parse_distribution("consistent", &why));
    EXPECT_NE(why.find("unknown distribution 'consistent'"), std::string::npos) << why;
    EXPECT_NE(why.find("gomemcache"), std::string::npos) << why;  // lists the names
    EXPECT_FALSE(parse_distribution("", &why));
    EXPECT_FALSE(parse_distribution("libmemcached_modula:sha1", &why));
    EXPECT_NE(why.find("unknown hash 'sha1'"), std::string::npos) << why;
    EXPECT_FALSE(parse_distribution("gomemcache:md5", &why));
    EXPECT_NE(why.find("fixed hash"), std::string::npos) << why;
    EXPECT_FALSE(parse_distribution("pecl_memcache_standard:md5", &why));
    EXPECT_NE(why.find("crc32 or fnv"), std::string::npos) << why;
    EXPECT_FALSE(parse_distribution("libmemcached_modula:hsieh", &why));
    EXPECT_NE(why.find("hsieh"), std::string::npos) << why;
    EXPECT_FALSE(parse_distribution("libmemcached_modula:crc32", &why));
    for (const auto& line : {why})
        EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(DistributionName, ContinuumRefusesBadInput) {
    const std::vector<ServerAddress> servers = {{"10.0.0.1", 11211, 1}, {"10.0.0.2", 11211, 0}};
    for (const Distribution d : {Distribution::ketama_libmemcached, Distribution::dalli,
                                 Distribution::cache_memcached, Distribution::gomemcache}) {
        try {
            const Continuum c(servers, d);
            ADD_FAILURE() << "weight 0 accepted by " << folsom::cluster::distribution_name(d);
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), folsom::make_error_code(folsom::errc::invalid_argument));
            EXPECT_NE(std::string(e.what()).find("weight 0"), std::string::npos) << e.what();
        }
    }
    const std::vector<ServerAddress> fine = {{"10.0.0.1", 11211, 1}};
    EXPECT_THROW(Continuum(fine, Distribution::gomemcache.with_hash(KeyHash::md5)),
                 std::system_error);
}

TEST(DistributionName, WeightZeroIsRefusedWhenParsingServers) {
    ServerAddress out;
    std::string why;
    EXPECT_TRUE(folsom::parse_server_address("10.0.0.1:11211:0", out, &why));
    EXPECT_FALSE(why.empty());
}

}  // namespace
