// The two SERVER_ERROR texts with which memcached refuses a store it cannot take: outcomes of
// the store (Status::value_too_large, Status::out_of_memory), not failures. The same words come
// over the classic text protocol and the meta protocol.
#pragma once

#include <cstdint>
#include <string_view>

namespace folsom::protocol {

enum class StoreRefusal : std::uint8_t { none, value_too_large, out_of_memory };

/// Which of the two a SERVER_ERROR's text is, or none.
constexpr StoreRefusal store_refusal(std::string_view server_error_text) noexcept {
    if (server_error_text == "object too large for cache") return StoreRefusal::value_too_large;
    if (server_error_text == "out of memory storing object") return StoreRefusal::out_of_memory;
    return StoreRefusal::none;
}

}  // namespace folsom::protocol
