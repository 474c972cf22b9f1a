#include "cluster/retrying_core.hpp"

#include "folsom/detail/request_memory.hpp"
#include "folsom/error.hpp"

#include "base/wrapper_operation.hpp"
#include "cluster/key_copies.hpp"

#include <atomic>
#include <string_view>

namespace folsom::cluster {
namespace {

class RetryShim final : public detail::WrapperOperation<RetryShim> {
  public:
    /// A part for server `server` (a multi-get part, a part of a request to every server).
    static RetryShim* create(detail::ClientCore& core, detail::Operation& op, std::size_t server,
                             std::uint32_t part, const detail::Request& request) {
        return make(core, op, server, part, request);
    }
    /// A request for one key, which the inner core places (ClientCore::send).
    static RetryShim* create_keyed(detail::ClientCore& core, detail::Operation& op,
                                   std::uint32_t part, const detail::Request& request) {
        return make(core, op, keyed, part, request);
    }

    void send() {
        if (server_ == keyed)
            core_.send(*this, part_, request_);
        else
            core_.submit(server_, *this, part_, request_);
    }

    void on_value(std::uint32_t, std::uint32_t position, const ValueView& v) override {
        // Values seen before a failure may be seen again on the retry; every collector keeps
        // the first value of a key, so a repeat is harmless.
        wrapped_.on_value(part_, position, v);
    }
    void on_stat(std::uint32_t, std::string_view name, std::string_view value) override {
        wrapped_.on_stat(part_, name, value);
    }
    void on_complete(std::uint32_t, const detail::Completion& c) override {
        if (!c.ec) [[likely]] {
            wrapped_.on_complete(part_, c);
            drop();
            return;
        }
        if (!retried_ && c.ec == errc::connection_lost) {
            retried_ = true;
            request_.retryable = false;  // the last attempt: metrics count how it ends
            // A single key is routed afresh: with failover its server may now be another one
            // (the failed connection has already told its server's health). A multi-get part
            // stays on its server (its keys were grouped by it), and so does a part of a
            // request to every server (delete_all): that server is the point.
            if (request_.keys.size() <= 1 && !request_.to_every_server) server_ = keyed;
            send();  // may complete at once (e.g. not_connected): re-enters on_complete
            return;
        }
        if (retried_ && c.ec == errc::not_connected) {
            // The retry found no other way to the server (its only connection is the one that
            // was lost, now reconnecting): what the caller needs to know is the loss itself.
            wrapped_.on_complete(part_, detail::failure(make_error_code(errc::connection_lost)));
            drop();
            return;
        }
        wrapped_.on_complete(part_, c);
        drop();
    }

  private:
    // Idempotent requests carry no value, so nothing pins them; WrapperOperation forwards pins
    // all the same.
    friend class detail::WrapperOperation<RetryShim>;

    RetryShim(detail::ClientCore& core, detail::Operation& op, std::size_t server,
              std::uint32_t part, const detail::Request& request)
        : WrapperOperation(op, 1), core_(core), server_(server), part_(part), request_(request) {
        request_.value = {};
        request_.group = {};
        request_.retryable = true;
        if (request.keys_are_stable) return;  // e.g. a multi-get part: its keys outlive it
        // Otherwise the request's views die when submit() returns; a retry needs its own copy
        // of the keys.
        std::size_t bytes = request.key.size();
        for (auto k : request.keys)
            bytes += k.size();
        keys_.reserve(bytes);
        request_.key = keys_.copy(request.key);
        // (The same view, as single-key requests make it: compared by address, not bytes.)
        if (request.keys.size() == 1 && request.keys.front().data() == request.key.data() &&
            request.keys.front().size() == request.key.size())
            request_.keys = keys_.list_of(request_.key);
        else
            request_.keys = keys_.copy_list(request.keys);
    }

    /// server_ of a request the inner core places (send()).
    static constexpr std::size_t keyed = ~std::size_t{0};

    detail::ClientCore& core_;
    std::size_t server_;  // or keyed
    const std::uint32_t part_;
    detail::Request request_;
    bool retried_ = false;
    detail::KeyCopies<256> keys_;
};

}  // namespace

RetryingCore::RetryingCore(std::shared_ptr<detail::ClientCore> inner, std::size_t max_outstanding)
    : ForwardingCore(std::move(inner), max_outstanding) {}

// Flattened: both send() and submit() make a RetryShim, so the compiler would otherwise call
// its construction out of line on every idempotent request, the hot path being this one.
[[gnu::flatten]] void RetryingCore::send(detail::Operation& op, std::uint32_t part,
                                         const detail::Request& request) {
    if (!is_idempotent(request)) {
        inner_->send(op, part, request);
        return;
    }
    RetryShim::create_keyed(*inner_, op, part, request)->send();
}

void RetryingCore::submit(std::size_t server, detail::Operation& op, std::uint32_t part,
                          const detail::Request& request) {
    if (!is_idempotent(request)) {
        inner_->submit(server, op, part, request);
        return;
    }
    RetryShim::create(*inner_, op, server, part, request)->send();
}

}  // namespace folsom::cluster
