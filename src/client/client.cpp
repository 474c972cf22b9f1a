#include "folsom/client.hpp"

#include <chrono>

namespace folsom {

namespace detail {

std::uint32_t to_exptime(Expiry e) noexcept {
    // The clock is read only when it matters: a duration over 30 days becomes now + ttl.
    if (e.kind() != Expiry::Kind::relative || e.count() <= thirty_days) return to_exptime(e, 0);
    const auto now = std::chrono::floor<std::chrono::seconds>(
        std::chrono::system_clock::now().time_since_epoch());
    return to_exptime(e, now.count());
}

}  // namespace detail

Client Client::connect(asio::any_io_executor ex, const Options& options) {
    return Client(detail::make_client_core(std::move(ex), options));
}

Client Client::connect(asio::any_io_executor io, const Options& options,
                       asio::any_io_executor reply_executor) {
    auto core = detail::make_client_core(std::move(io), options);
    core->set_reply_executor(std::move(reply_executor));
    return Client(std::move(core));
}

}  // namespace folsom
