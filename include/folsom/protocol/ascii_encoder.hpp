// Encoder for memcached's classic text protocol (doc/protocol.txt in memcached).
//
// Every function validates its arguments first and appends exactly one command to `out`, or
// appends nothing and returns an error:
//   errc::invalid_key       a key that validate_key() refuses
//   errc::value_too_large   a value over limits.max_value_size
//   errc::invalid_argument  e.g. a retrieval with no keys
// So bad input never reaches the wire, and no key can smuggle in a second command.
//
// Pure: no I/O, no threads, no Asio. Allocation only as `out` grows (amortised to none when
// the caller reuses the buffer).
#pragma once

#include "folsom/export.hpp"
#include "folsom/protocol/limits.hpp"
#include "folsom/protocol/output_buffer.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>

namespace folsom::protocol::ascii {

enum class RetrieveCommand : std::uint8_t { get, gets, gat, gats };
enum class StoreCommand : std::uint8_t { set, add, replace, append, prepend, cas };
enum class ArithCommand : std::uint8_t { incr, decr };

/// Values at least this long are referenced by the OutputBuffer instead of copied.
inline constexpr std::size_t default_ref_threshold = 16 * 1024;

/// "get|gets <key>*\r\n" or "gat|gats <exptime> <key>*\r\n". `exptime` is used by gat/gats only.
FOLSOM_EXPORT std::error_code encode_retrieve(OutputBuffer& out, RetrieveCommand cmd,
                                              std::span<const std::string_view> keys,
                                              std::uint32_t exptime = 0);

/// Appends one more key to the get/gets command that ends `out` ("get a\r\n" becomes
/// "get a b\r\n"), so pipelined single-key gets travel, and are answered, as one multi-key
/// command. The caller guarantees that `out` ends with a get or gets line it encoded; the key
/// is validated first (errc::invalid_key: `out` unchanged).
FOLSOM_EXPORT std::error_code encode_retrieve_more(OutputBuffer& out, std::string_view key);

/// "<cmd> <key> <flags> <exptime> <bytes> [<cas>] [noreply]\r\n<data>\r\n".
/// `cas` is written only for StoreCommand::cas.
FOLSOM_EXPORT std::error_code encode_store(OutputBuffer& out, StoreCommand cmd,
                                           std::string_view key, std::string_view data,
                                           std::uint32_t flags, std::uint32_t exptime,
                                           std::uint64_t cas, bool noreply,
                                           const Limits& limits = {},
                                           std::size_t ref_threshold = default_ref_threshold);

/// "delete <key> [noreply]\r\n"
FOLSOM_EXPORT std::error_code encode_delete(OutputBuffer& out, std::string_view key,
                                            bool noreply = false);

/// "incr|decr <key> <delta> [noreply]\r\n"
FOLSOM_EXPORT std::error_code encode_arith(OutputBuffer& out, ArithCommand cmd,
                                           std::string_view key, std::uint64_t delta,
                                           bool noreply = false);

/// "touch <key> <exptime> [noreply]\r\n"
FOLSOM_EXPORT std::error_code encode_touch(OutputBuffer& out, std::string_view key,
                                           std::uint32_t exptime, bool noreply = false);

/// "flush_all [delay] [noreply]\r\n"
FOLSOM_EXPORT std::error_code encode_flush_all(OutputBuffer& out,
                                               std::optional<std::uint32_t> delay = {},
                                               bool noreply = false);

/// "stats [group]\r\n". `group` (e.g. "items", "slabs", "settings") must be a valid token.
FOLSOM_EXPORT std::error_code encode_stats(OutputBuffer& out, std::string_view group = {});

/// "version\r\n"
FOLSOM_EXPORT std::error_code encode_version(OutputBuffer& out);

/// "verbosity <level> [noreply]\r\n"
FOLSOM_EXPORT std::error_code encode_verbosity(OutputBuffer& out, std::uint32_t level,
                                               bool noreply = false);

/// "quit\r\n" (the server closes the connection; there is no reply).
FOLSOM_EXPORT std::error_code encode_quit(OutputBuffer& out);

}  // namespace folsom::protocol::ascii
