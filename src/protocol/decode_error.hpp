// How the three decoders fill a DecodeError (decode_result.hpp): the reason, the offset, and the
// offending bytes written into its fixed context buffer, so that describing an error later
// allocates nothing and the bytes read the same whichever decoder met them.
#pragma once

#include "folsom/protocol/decode_result.hpp"

#include <cstddef>
#include <string_view>

namespace folsom::protocol {

/// For the text decoders (ascii, meta): printable bytes as they are, the others escaped
/// (\r \n \t \\ \" \xNN); when they do not fit, what fits (never half an escape) and "...".
/// NUL-terminated.
DecodeError text_decode_error(const char* reason, std::size_t offset,
                              std::string_view bytes) noexcept;

/// For the binary decoder: every byte as \xNN (a header is easiest compared with a packet dump
/// written the same way), as many whole escapes as fit.
DecodeError binary_decode_error(const char* reason, std::size_t offset,
                                std::string_view bytes) noexcept;

}  // namespace folsom::protocol
