#include "folsom/client.hpp"

#include <chrono>

namespace folsom {

namespace detail {

std::uint32_t to_exptime(Ttl ttl) noexcept {
    // memcached reads exptimes above 30 days as absolute Unix times.
    constexpr std::int64_t thirty_days = 60 * 60 * 24 * 30;
    const std::int64_t s = ttl.count();
    if (s == 0) return 0;
    // Negative: already expired. An absolute time in 1970 is in the past for memcached.
    if (s < 0) return static_cast<std::uint32_t>(thirty_days + 1);
    if (s <= thirty_days) return static_cast<std::uint32_t>(s);
    const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    const std::int64_t at = now + s;
    return at > 0xffffffffLL ? 0xffffffffu : static_cast<std::uint32_t>(at);
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
