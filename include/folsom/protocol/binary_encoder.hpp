// Encoder for memcached's binary protocol (doc/protocol-binary.xml in memcached, plus the
// later opcodes: touch, gat, verbosity and SASL).
//
// Every function validates its arguments first and appends exactly one request (24-byte
// header, extras, key, value) to `out`, or appends nothing and returns an error:
//   errc::invalid_key       a key that validate_binary_key() refuses (empty or over 250 bytes)
//   errc::value_too_large   a value over limits.max_value_size
//   errc::invalid_argument  e.g. a stat group or SASL mechanism over 250 bytes, a SASL PLAIN
//                           user name holding a NUL byte
// Binary keys are length-prefixed, so unlike the text protocol they may hold any byte
// (spaces, \r\n, NUL): nothing in a key can be read as a second command.
//
// `opaque` is copied into the header and echoed by the server in the reply: the connection
// uses it to match replies to requests when quiet commands make some replies go missing.
// `cas` (where accepted) makes a mutation conditional: 0 means "unconditionally".
//
// Pure: no I/O, no threads, no Asio. Allocation only as `out` grows (amortised to none when
// the caller reuses the buffer). A value of at least `ref_threshold` bytes is referenced, not
// copied (see OutputBuffer's lifetime rule).
#pragma once

#include "folsom/export.hpp"
#include "folsom/protocol/binary_protocol.hpp"
#include "folsom/protocol/limits.hpp"
#include "folsom/protocol/output_buffer.hpp"

#include <cstdint>
#include <optional>
#include <string_view>
#include <system_error>

namespace folsom::protocol::binary {

enum class GetCommand : std::uint8_t { get, getq, getk, getkq };
enum class GatCommand : std::uint8_t { gat, gatq, gatk, gatkq };
enum class StoreCommand : std::uint8_t { set, add, replace };
enum class ConcatCommand : std::uint8_t { append, prepend };
enum class ArithCommand : std::uint8_t { increment, decrement };

/// Values at least this long are referenced by the OutputBuffer instead of copied.
inline constexpr std::size_t default_ref_threshold = 16 * 1024;

/// Arithmetic exptime meaning "fail with key_not_found instead of creating the counter".
inline constexpr std::uint32_t no_auto_create = 0xffffffff;

/// {} when `key` may be sent as a binary protocol key: 1 to 250 bytes, any byte values.
FOLSOM_EXPORT std::error_code validate_binary_key(std::string_view key) noexcept;

/// get/getq/getk/getkq: no extras, key, no value. The k variants echo the key in the reply;
/// the q variants send no reply on a miss.
FOLSOM_EXPORT std::error_code encode_get(OutputBuffer& out, GetCommand cmd, std::string_view key,
                                         std::uint32_t opaque = 0);

/// gat/gatq/gatk/gatkq (get and touch): extras = 4-byte exptime, key.
FOLSOM_EXPORT std::error_code encode_gat(OutputBuffer& out, GatCommand cmd, std::string_view key,
                                         std::uint32_t exptime, std::uint32_t opaque = 0);

/// set/add/replace (setq/addq/replaceq when `quiet`): extras = flags, exptime; key; value.
FOLSOM_EXPORT std::error_code encode_store(OutputBuffer& out, StoreCommand cmd,
                                           std::string_view key, std::string_view data,
                                           std::uint32_t flags, std::uint32_t exptime,
                                           std::uint64_t cas = 0, bool quiet = false,
                                           std::uint32_t opaque = 0, const Limits& limits = {},
                                           std::size_t ref_threshold = default_ref_threshold);

/// append/prepend (appendq/prependq when `quiet`): no extras (the item keeps its flags and
/// exptime); key; value.
FOLSOM_EXPORT std::error_code encode_concat(OutputBuffer& out, ConcatCommand cmd,
                                            std::string_view key, std::string_view data,
                                            std::uint64_t cas = 0, bool quiet = false,
                                            std::uint32_t opaque = 0, const Limits& limits = {},
                                            std::size_t ref_threshold = default_ref_threshold);

/// delete (deleteq when `quiet`): key only.
FOLSOM_EXPORT std::error_code encode_delete(OutputBuffer& out, std::string_view key,
                                            std::uint64_t cas = 0, bool quiet = false,
                                            std::uint32_t opaque = 0);

/// increment/decrement (the q variants when `quiet`): extras = 8-byte delta, 8-byte initial
/// value, 4-byte exptime; key. A missing counter is created with `initial` unless `exptime`
/// is no_auto_create.
FOLSOM_EXPORT std::error_code encode_arith(OutputBuffer& out, ArithCommand cmd,
                                           std::string_view key, std::uint64_t delta,
                                           std::uint64_t initial, std::uint32_t exptime,
                                           std::uint64_t cas = 0, bool quiet = false,
                                           std::uint32_t opaque = 0);

/// touch: extras = 4-byte exptime; key.
FOLSOM_EXPORT std::error_code encode_touch(OutputBuffer& out, std::string_view key,
                                           std::uint32_t exptime, std::uint32_t opaque = 0);

/// noop: header only. Its reply closes a pipeline of quiet commands.
FOLSOM_EXPORT std::error_code encode_noop(OutputBuffer& out, std::uint32_t opaque = 0);

/// flush (flushq when `quiet`): extras = 4-byte delay when given, else none.
FOLSOM_EXPORT std::error_code encode_flush(OutputBuffer& out,
                                           std::optional<std::uint32_t> delay = {},
                                           bool quiet = false, std::uint32_t opaque = 0);

/// version: header only; the reply's value is the version text.
FOLSOM_EXPORT std::error_code encode_version(OutputBuffer& out, std::uint32_t opaque = 0);

/// stat: the optional `group` ("items", "slabs", "settings", ...) travels as the key. The
/// server answers with one reply per statistic and an empty-key reply at the end.
FOLSOM_EXPORT std::error_code encode_stat(OutputBuffer& out, std::string_view group = {},
                                          std::uint32_t opaque = 0);

/// verbosity: extras = 4-byte level.
FOLSOM_EXPORT std::error_code encode_verbosity(OutputBuffer& out, std::uint32_t level,
                                               std::uint32_t opaque = 0);

/// quit (quitq when `quiet`: the server closes the connection without replying).
FOLSOM_EXPORT std::error_code encode_quit(OutputBuffer& out, bool quiet = false,
                                          std::uint32_t opaque = 0);

/// sasl_list_mechs: header only; the reply's value lists the mechanisms, space separated.
FOLSOM_EXPORT std::error_code encode_sasl_list_mechs(OutputBuffer& out, std::uint32_t opaque = 0);

/// sasl_auth: the mechanism name as the key, the mechanism's first message as the value.
FOLSOM_EXPORT std::error_code encode_sasl_auth(OutputBuffer& out, std::string_view mechanism,
                                               std::string_view data, std::uint32_t opaque = 0,
                                               const Limits& limits = {});

/// sasl_auth with mechanism "PLAIN" and value "\0<user>\0<password>" (RFC 4616, empty
/// authorization identity). A NUL in `user` or `password` would shift the fields, so it is
/// refused with errc::invalid_argument.
FOLSOM_EXPORT std::error_code encode_sasl_auth_plain(OutputBuffer& out, std::string_view user,
                                                     std::string_view password,
                                                     std::uint32_t opaque = 0,
                                                     const Limits& limits = {});

/// sasl_step: the mechanism name as the key, the answer to the server's challenge as the value.
FOLSOM_EXPORT std::error_code encode_sasl_step(OutputBuffer& out, std::string_view mechanism,
                                               std::string_view data, std::uint32_t opaque = 0,
                                               const Limits& limits = {});

}  // namespace folsom::protocol::binary
