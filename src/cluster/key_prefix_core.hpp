// KeyPrefixCore: a ClientCore decorator that puts Options::key_prefix in front of every key
// (libmemcached's MEMCACHED_CALLBACK_PREFIX_KEY), installed only when a prefix is configured,
// so that a client without one runs exactly the undecorated request path.
//
// Placement: server_for() hashes the prefixed key (Options::hash_with_key_prefix, the default)
// or the key as given (libmemcached's default, MEMCACHED_BEHAVIOR_HASH_WITH_PREFIX_KEY off).
//
// Keys on the wire: a store, delete, touch or counter request is passed on with its key
// prefixed in a stack buffer (the encoder copies it before the inner core returns). A retrieval
// travels inside a PrefixShim, an Operation that owns the prefixed keys and strips the prefix
// from the key of every value before it reaches the real operation: ASCII multi-get replies
// name their keys, and the caller's keys are unprefixed (so are ValueView::key and
// MultiGetResult). The prefix counts toward the 250-byte key limit: a key that no longer fits
// fails with errc::invalid_key, as does an empty key (which the prefix would otherwise hide).
//
// Binary keys (Options::binary_keys): the prefix may hold any bytes; prefix and key are one
// raw key, which the meta driver encodes in base64 as a whole, and the limit is 186 raw bytes
// for the two together. The server returns a hit's key in base64; the driver decodes it before
// this core strips the prefix, so stripping works on raw bytes either way.
//
// Decorator order (make_client_core): ServerCore <- DiscoveringCore <- KeyPrefixCore <-
// RetryingCore, so that a retry re-routes and re-prefixes the caller's key through this core.
#pragma once

#include "folsom/detail/client_core.hpp"

#include "cluster/forwarding_core.hpp"

#include <memory>
#include <string>
#include <system_error>

namespace folsom::detail {

/// {} when `prefix` may be used as Options::key_prefix: at most 249 bytes (a key of one byte
/// must still fit in memcached's 250) and no space, control character or DEL, since it is
/// sent as part of every key. With `binary_keys`: any bytes, at most 185 (a one-byte key must
/// still fit the 186 raw bytes a binary key may have). errc::invalid_argument otherwise.
std::error_code validate_key_prefix(std::string_view prefix, bool binary_keys = false) noexcept;

class KeyPrefixCore final : public ForwardingCore<> {
  public:
    /// `prefix` must be non-empty and valid (validate_key_prefix, with the same `binary_keys`).
    KeyPrefixCore(std::shared_ptr<ClientCore> inner, std::string prefix, bool hash_with_prefix,
                  std::size_t max_outstanding, bool binary_keys = false);

    std::size_t server_for(std::string_view key) const noexcept override;
    /// ClientCore's loop over server_for(), which prefixes (the inner core's would not).
    void servers_for(std::span<const std::string_view> keys,
                     std::span<std::uint32_t> out) const noexcept override {
        ClientCore::servers_for(keys, out);
    }

    /// Placed as server_for() places the key, sent with the prefix.
    void send(Operation& op, std::uint32_t part, const Request& request) override;
    void submit(std::size_t server, Operation& op, std::uint32_t part,
                const Request& request) override;

    const std::string& prefix() const noexcept { return prefix_; }

  private:
    /// Checks and prefixes the keys of `request` (a retrieval travels in a PrefixShim), then
    /// calls forward(operation, prefixed request), or fails the part with invalid_key.
    template <class Forward>
    void prefix_then(Operation& op, std::uint32_t part, const Request& request, Forward forward);

    const std::string prefix_;
    const bool hash_with_prefix_;
    const std::size_t key_limit_;  // raw bytes of prefix + key at most (250, or 186 if binary)
};

}  // namespace folsom::detail
