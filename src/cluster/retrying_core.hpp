// RetryingCore: a ClientCore decorator that retries an idempotent request once when the
// connection it was in flight on is lost (Folsom's RetryingClient, restricted to requests
// whose repetition cannot change what is stored).
//
// Each retried part travels inside a RetryShim: an Operation that forwards every event to the
// real one, and on errc::connection_lost submits itself once more instead of completing. The
// real operation therefore still sees exactly one on_complete per part. Only errc::
// connection_lost triggers a retry: errc::closed (shutdown), timeouts (the server may be
// overloaded — a retry would double the load) and protocol errors are final.
#pragma once

#include "folsom/detail/client_core.hpp"

#include "cluster/forwarding_core.hpp"

#include <memory>

namespace folsom::cluster {

/// Requests that may be sent twice: retrievals, touch and delete (meta_delete too), and a
/// meta_get that cannot hand out a win token (with N or R a repeat could take the token the
/// lost reply carried, and nobody would recache until the item expires).
constexpr bool is_idempotent(const detail::Request& r) noexcept {
    using detail::OpCode;
    if (r.code == OpCode::meta_get) return !r.meta.vivify_ttl && !r.meta.recache_ttl;
    return detail::is_retrieval(r.code) || r.code == OpCode::touch || r.code == OpCode::del ||
           r.code == OpCode::meta_delete;
}

class RetryingCore final : public detail::ForwardingCore<> {
  public:
    RetryingCore(std::shared_ptr<detail::ClientCore> inner, std::size_t max_outstanding);

    void send(detail::Operation& op, std::uint32_t part, const detail::Request& request) override;
    void submit(std::size_t server, detail::Operation& op, std::uint32_t part,
                const detail::Request& request) override;
};

}  // namespace folsom::cluster
