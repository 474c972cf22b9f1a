// Limits every decoder and encoder enforces, so that neither a caller nor a server can make
// the client allocate or send without bound.
#pragma once

#include "folsom/export.hpp"

#include <cstddef>

namespace folsom::protocol {

/// Longest key the text and meta protocols accept (memcached's KEY_MAX_LENGTH).
inline constexpr std::size_t max_key_length = 250;

/// Longest binary key (Options::binary_keys), in raw bytes: the meta protocol sends it in
/// base64, and memcached checks the *encoded* key against its 250-byte limit, so at most 186
/// raw bytes fit (4 * ceil(186 / 3) = 248; 187 bytes would encode to 252).
inline constexpr std::size_t max_binary_key_length = 186;

/// The key bytes (keys and the spaces between them) one retrieval command carries at most. A
/// long multi-get is cut into commands of this size, and pipelined single-key text-protocol
/// gets are joined into one "get k1 k2 ..." line up to it: long enough that memcached answers
/// a whole pipeline window in a few large writes, short enough that its replies start early
/// and the line stays far below its input buffer's limits.
inline constexpr std::size_t max_retrieval_key_bytes = 16 * 1024;

struct FOLSOM_EXPORT Limits {
    /// Largest value accepted on the way out (encoders) and on the way in (decoders).
    /// memcached's default item size limit is 1 MiB.
    std::size_t max_value_size = 1024 * 1024;
    /// Longest reply line (everything up to and including "\r\n") a decoder accepts before it
    /// calls the reply malformed. A VALUE header with a 250-byte key fits in ~300 bytes; STAT
    /// lines are shorter; 8 KiB leaves room for long SERVER_ERROR texts.
    std::size_t max_line_length = 8 * 1024;
};

}  // namespace folsom::protocol
