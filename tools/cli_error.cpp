#include "cli_error.hpp"

#include "folsom/error.hpp"

#include <fmt/format.h>

namespace folsom::cli {

std::string printable(std::string_view text, std::size_t max) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (out.size() >= max) {
            out += "...";
            break;
        }
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c >= 0x7f || c == '\\' || c == '"')
            out += fmt::format("\\x{:02x}", c);
        else
            out += static_cast<char>(c);
    }
    return out;
}

std::string describe(std::error_code ec, const ErrorContext& ctx) {
    const std::string server(ctx.server);
    auto at = [&](std::string_view what) {
        return server.empty() ? std::string(what) : fmt::format("{}: {}", server, what);
    };
    if (ec.category() != folsom::category()) return at(ec.message());
    switch (static_cast<errc>(ec.value())) {
        case errc::invalid_key:
            return fmt::format(
                "invalid key \"{}\": a key is 1 to 250 bytes, without spaces or control "
                "characters",
                printable(ctx.key));
        case errc::value_too_large:
            return fmt::format("value too large: {} bytes (the limit is {})", ctx.value_size,
                               ctx.max_value_size);
        case errc::connect_failed:
        case errc::not_connected:
            return fmt::format("cannot connect to {}", server);
        case errc::resolve_failed:
            return fmt::format("cannot resolve {}", server);
        case errc::timeout:
            return at(fmt::format("timed out (nothing within {} ms)", ctx.timeout_ms));
        case errc::protocol_error:
            return at("protocol error: the server sent a malformed reply");
        case errc::server_error:
            return at("the server reported an error (SERVER_ERROR or ERROR)");
        case errc::client_error:
            return at("the server rejected the request (CLIENT_ERROR)");
        case errc::closed:
            return at("connection closed");
        default:
            return at(ec.message());
    }
}

}  // namespace folsom::cli
