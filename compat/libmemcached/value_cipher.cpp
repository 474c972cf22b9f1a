// memcached_set_encoding_key: values encrypted as libmemcached 1.1.4 built with OpenSSL
// (Debian's) encrypts them (libhashkit/aes.cc), so that either library reads what the other
// wrote:
//   - AES-256-CBC with PKCS#7 padding, through OpenSSL's EVP interface;
//   - the IV: EVP_BytesToKey(aes-256-cbc, sha256, no salt, the key, 5 rounds), its IV part;
//   - the cipher key: the caller's key bytes themselves (libmemcached derives a key with
//     EVP_BytesToKey too, but passes the caller's bytes to EVP_EncryptInit_ex), the first 32.
//     libmemcached reads 32 bytes from the caller's pointer whatever the key's length, so a
//     key shorter than 32 bytes is padded there with whatever memory follows it; here with
//     zeroes. Keys of 32 bytes or more encrypt identically in both libraries.
// Every value starts from the same IV (OpenSSL 3 resets a CBC context's IV at each init).
#include "handle.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <memory>

namespace folsom::compat {

namespace {

struct CipherContextFree {
    void operator()(EVP_CIPHER_CTX* c) const noexcept { EVP_CIPHER_CTX_free(c); }
};
using CipherContext = std::unique_ptr<EVP_CIPHER_CTX, CipherContextFree>;

bool run_cipher(const ValueCipher& c, bool encrypt, std::string_view in, std::string& out) {
    CipherContext ctx(EVP_CIPHER_CTX_new());
    if (!ctx || in.size() > static_cast<std::size_t>(INT32_MAX - 32)) return false;
    if (EVP_CipherInit_ex(ctx.get(), EVP_aes_256_cbc(), nullptr, c.key.data(), c.iv.data(),
                          encrypt ? 1 : 0) != 1)
        return false;
    out.resize(in.size() + EVP_MAX_BLOCK_LENGTH);
    auto* o = reinterpret_cast<unsigned char*>(out.data());
    int n = 0, last = 0;
    if (EVP_CipherUpdate(ctx.get(), o, &n, reinterpret_cast<const unsigned char*>(in.data()),
                         static_cast<int>(in.size())) != 1 ||
        EVP_CipherFinal_ex(ctx.get(), o + n, &last) != 1)
        return false;
    out.resize(static_cast<std::size_t>(n) + static_cast<std::size_t>(last));
    return true;
}

}  // namespace

std::optional<ValueCipher> make_value_cipher(const char* key, std::size_t key_length) {
    if (!key) return std::nullopt;  // libmemcached: no key, no encryption
    ValueCipher c{};
    unsigned char derived_key[EVP_MAX_KEY_LENGTH];
    unsigned char derived_iv[EVP_MAX_IV_LENGTH];
    constexpr int rounds = 5;
    if (key_length > static_cast<std::size_t>(INT32_MAX) ||
        EVP_BytesToKey(EVP_aes_256_cbc(), EVP_sha256(), nullptr,
                       reinterpret_cast<const unsigned char*>(key), static_cast<int>(key_length),
                       rounds, derived_key, derived_iv) != static_cast<int>(c.key.size()))
        return std::nullopt;
    std::copy_n(derived_iv, c.iv.size(), c.iv.begin());
    std::copy_n(reinterpret_cast<const unsigned char*>(key), std::min(key_length, c.key.size()),
                c.key.begin());
    return c;
}

bool encrypt_value(const ValueCipher& c, std::string_view plain, std::string& out) {
    return run_cipher(c, true, plain, out);
}

bool decrypt_value(const ValueCipher& c, std::string_view cipher, std::string& out) {
    return run_cipher(c, false, cipher, out);
}

}  // namespace folsom::compat

memcached_return_t memcached_set_encoding_key(memcached_st* ptr, const char* key,
                                              size_t key_length) {
    folsom::compat::Handle* h = folsom::compat::handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    h->cipher = folsom::compat::make_value_cipher(key, key_length);
    return MEMCACHED_SUCCESS;
}
