// OpenSSL 3 deprecates the low-level MD5 API in favour of EVP, but an EVP digest allocates a
// context on every call, and ketama hashes every key: we keep the stack-only MD5_CTX.
#define OPENSSL_SUPPRESS_DEPRECATED

#include "cluster/hash/md5.hpp"

#include <openssl/md5.h>

namespace folsom::cluster {

Md5Digest md5(std::string_view data) noexcept {
    static_assert(MD5_DIGEST_LENGTH == 16);
    Md5Digest digest{};
    MD5_CTX ctx;
    MD5_Init(&ctx);
    MD5_Update(&ctx, data.data(), data.size());
    MD5_Final(digest.data(), &ctx);
    return digest;
}

}  // namespace folsom::cluster
