// KeyHash dispatch: libhashkit_digest() over folsom's own implementations of each hash.
#include "folsom/cluster/distribution.hpp"

#include "cluster/hash/crc32.hpp"
#include "cluster/hash/fnv.hpp"
#include "cluster/hash/jenkins.hpp"
#include "cluster/hash/libmemcached_murmur.hpp"
#include "cluster/hash/md5.hpp"
#include "cluster/hash/murmur3.hpp"
#include "cluster/hash/one_at_a_time.hpp"

namespace folsom::cluster {

std::uint32_t key_hash(KeyHash hash, std::string_view data) noexcept {
    switch (hash) {
        case KeyHash::one_at_a_time:
            return one_at_a_time(data);
        case KeyHash::md5:
            return md5_word(md5(data), 0);
        case KeyHash::crc:
            return crc32_high15(data);
        case KeyHash::fnv1_64:
            return fnv1_64(data);
        case KeyHash::fnv1a_64:
            return fnv1a_64(data);
        case KeyHash::fnv1_32:
            return fnv1_32(data);
        case KeyHash::fnv1a_32:
            return fnv1a_32(data);
        case KeyHash::hsieh:
            return 1;  // libhashkit_digest() of a libmemcached built without hsieh
        case KeyHash::murmur:
            return libmemcached_murmur(data);
        case KeyHash::jenkins:
            return jenkins_lookup3(data);
        case KeyHash::murmur3:
            // libmemcached seeds MurmurHash3 with 0xdeadbeef * length, as its MurmurHash2.
            return murmur3_32(data, 0xdeadbeefu * static_cast<std::uint32_t>(data.size()));
        case KeyHash::crc32:
            return crc32_ieee(data);
    }
    return 1;
}

std::string_view key_hash_name(KeyHash hash) noexcept {
    switch (hash) {
        case KeyHash::one_at_a_time:
            return "one_at_a_time";
        case KeyHash::md5:
            return "md5";
        case KeyHash::crc:
            return "crc";
        case KeyHash::fnv1_64:
            return "fnv1_64";
        case KeyHash::fnv1a_64:
            return "fnv1a_64";
        case KeyHash::fnv1_32:
            return "fnv1_32";
        case KeyHash::fnv1a_32:
            return "fnv1a_32";
        case KeyHash::hsieh:
            return "hsieh";
        case KeyHash::murmur:
            return "murmur";
        case KeyHash::jenkins:
            return "jenkins";
        case KeyHash::murmur3:
            return "murmur3";
        case KeyHash::crc32:
            return "crc32";
    }
    return "?";
}

}  // namespace folsom::cluster
