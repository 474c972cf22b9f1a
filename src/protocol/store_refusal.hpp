// The two SERVER_ERROR texts with which memcached refuses a store it cannot take: outcomes of
// the store (Status::value_too_large, Status::out_of_memory), not failures. The same words come
// over the classic text protocol and the meta protocol.
#pragma once

#include "folsom/status.hpp"

#include <optional>
#include <string_view>

namespace folsom::protocol {

/// The status a SERVER_ERROR's text stands for when it is one of the two, else nothing.
constexpr std::optional<Status> store_refusal(std::string_view server_error_text) noexcept {
    if (server_error_text == "object too large for cache") return Status::value_too_large;
    if (server_error_text == "out of memory storing object") return Status::out_of_memory;
    return std::nullopt;
}

}  // namespace folsom::protocol
