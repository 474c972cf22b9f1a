#include "cluster/key_prefix_core.hpp"

#include "folsom/detail/request_memory.hpp"
#include "folsom/error.hpp"
#include "folsom/protocol/key.hpp"
#include "folsom/protocol/limits.hpp"

#include "base/wrapper_operation.hpp"
#include "cluster/key_copies.hpp"

#include <atomic>
#include <cstring>
#include <string_view>

namespace folsom::detail {
namespace {

using protocol::max_key_length;

/// True when `key`, once prefixed, is still a key memcached accepts by length (`limit`: 250,
/// or 186 raw bytes for binary keys). An empty key is refused although the prefix alone would
/// be a valid key: the caller named no item.
bool fits(std::size_t prefix, std::string_view key, std::size_t limit) noexcept {
    return !key.empty() && key.size() <= limit - prefix;
}

/// `prefix` + `key` in `buf`, for a key the inner core hashes or encodes before it returns
/// (fits() has checked the length).
std::string_view prefixed_in(char (&buf)[max_key_length], std::string_view prefix,
                             std::string_view key) noexcept {
    std::memcpy(buf, prefix.data(), prefix.size());
    std::memcpy(buf + prefix.size(), key.data(), key.size());
    return {buf, prefix.size() + key.size()};
}

bool is_keyed(OpCode c) noexcept {
    return c != OpCode::flush_all && c != OpCode::stats && c != OpCode::version &&
           c != OpCode::verbosity && c != OpCode::noop;
}

/// One retrieval part with prefixed keys. Owns the keys for as long as the part is in flight
/// (the connection encodes them at once, but a retry may send them again) and hands every
/// value to the real operation under the caller's key.
class PrefixShim final : public WrapperOperation<PrefixShim> {
  public:
    static PrefixShim* create(Operation& op, std::uint32_t part, std::string_view prefix,
                              const Request& request) {
        return make(op, part, prefix, request);
    }

    const Request& request() const noexcept { return request_; }

    void on_value(std::uint32_t, std::uint32_t position, const ValueView& v) override {
        ValueView unprefixed = v;
        if (unprefixed.key.starts_with(prefix_)) unprefixed.key.remove_prefix(prefix_.size());
        wrapped_.on_value(part_, position, unprefixed);
    }
    void on_stat(std::uint32_t, std::string_view name, std::string_view value) override {
        wrapped_.on_stat(part_, name, value);
    }
    void on_complete(std::uint32_t, const Completion& c) override {
        wrapped_.on_complete(part_, c);
        drop();
    }

  private:
    // Retrievals carry no value, so nothing pins them; WrapperOperation forwards pins all the
    // same.
    friend class WrapperOperation<PrefixShim>;

    PrefixShim(Operation& op, std::uint32_t part, std::string_view prefix, const Request& request)
        : WrapperOperation(op, 1), part_(part), prefix_(prefix), request_(request) {
        std::size_t bytes = 0;
        for (auto k : request.keys)
            bytes += prefix.size() + k.size();
        keys_.reserve(bytes);
        request_.keys = keys_.copy_list(request.keys, prefix);
        request_.key = request_.keys.empty() ? std::string_view{} : request_.keys.front();
    }

    const std::uint32_t part_;
    const std::string_view prefix_;  // the core's, which outlives every request
    Request request_;
    KeyCopies<max_key_length> keys_;
};

}  // namespace

std::error_code validate_key_prefix(std::string_view prefix, bool binary_keys) noexcept {
    // Binary keys: any bytes, encoded together with the key (which needs one byte of its own).
    if (binary_keys)
        return prefix.size() >= protocol::max_binary_key_length ? errc::invalid_argument
                                                                : std::error_code{};
    if (prefix.size() >= max_key_length) return errc::invalid_argument;
    for (char c : prefix) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7f) return errc::invalid_argument;
    }
    return {};
}

KeyPrefixCore::KeyPrefixCore(std::shared_ptr<ClientCore> inner, std::string prefix,
                             bool hash_with_prefix, std::size_t max_outstanding, bool binary_keys)
    : ForwardingCore(std::move(inner), max_outstanding),
      prefix_(std::move(prefix)),
      hash_with_prefix_(hash_with_prefix),
      key_limit_(binary_keys ? protocol::max_binary_key_length : max_key_length) {}

std::size_t KeyPrefixCore::server_for(std::string_view key) const noexcept {
    // A key too long to prefix is refused by submit(); any server will do for it.
    if (!hash_with_prefix_ || !fits(prefix_.size(), key, key_limit_))
        return inner_->server_for(key);
    char buf[max_key_length];
    return inner_->server_for(prefixed_in(buf, prefix_, key));
}

template <class Forward>
void KeyPrefixCore::prefix_then(Operation& op, std::uint32_t part, const Request& request,
                                Forward forward) {
    if (!is_keyed(request.code)) {
        forward(op, request);
        return;
    }
    if (is_retrieval(request.code)) {
        for (auto k : request.keys) {
            if (!fits(prefix_.size(), k, key_limit_)) {
                op.on_complete(part, failure(make_error_code(errc::invalid_key)));
                return;
            }
        }
        PrefixShim* shim = PrefixShim::create(op, part, prefix_, request);
        forward(*shim, shim->request());
        return;
    }
    if (!fits(prefix_.size(), request.key, key_limit_)) {
        op.on_complete(part, failure(make_error_code(errc::invalid_key)));
        return;
    }
    // The encoder copies the key before the inner core returns: a stack buffer is enough.
    char buf[max_key_length];
    Request prefixed = request;
    prefixed.key = prefixed_in(buf, prefix_, request.key);
    prefixed.keys_are_stable = false;
    forward(op, prefixed);
}

void KeyPrefixCore::send(Operation& op, std::uint32_t part, const Request& request) {
    if (hash_with_prefix_) {
        // The inner core places the prefixed key it is given.
        prefix_then(op, part, request,
                    [&](Operation& o, const Request& r) { inner_->send(o, part, r); });
        return;
    }
    // Placed by the key as given (libmemcached's default), sent prefixed.
    const std::size_t server = inner_->server_for(request.key);
    prefix_then(op, part, request,
                [&](Operation& o, const Request& r) { inner_->submit(server, o, part, r); });
}

void KeyPrefixCore::submit(std::size_t server, Operation& op, std::uint32_t part,
                           const Request& request) {
    prefix_then(op, part, request,
                [&](Operation& o, const Request& r) { inner_->submit(server, o, part, r); });
}

}  // namespace folsom::detail
