// NullRoute (the default reply at once: a miss, not_stored, not_found) and ErrorRoute (an
// error at once): routes that send nothing.
#pragma once

#include "folsom/error.hpp"

#include "routing/route.hpp"

#include <string>

namespace folsom::routing {

class NullRoute final : public Route {
  public:
    using Route::Route;
    void send(detail::Operation& op, std::uint32_t part, const detail::Request& r) override {
        count_request();
        op.on_complete(part, default_reply(r.code));
    }
    std::size_t server_for(std::string_view, detail::OpCode) const noexcept override { return 0; }
};

class ErrorRoute final : public Route {
  public:
    ErrorRoute(RouteCounters& counters, std::string message)
        : Route(counters), message_(std::move(message)) {}
    /// errc::server_error, carrying the configured message as the server's error text.
    void send(detail::Operation& op, std::uint32_t part, const detail::Request&) override {
        count_request();
        detail::Completion c = detail::failure(make_error_code(errc::server_error));
        c.text = message_;
        op.on_complete(part, c);
    }
    std::size_t server_for(std::string_view, detail::OpCode) const noexcept override { return 0; }

  private:
    const std::string message_;
};

}  // namespace folsom::routing
