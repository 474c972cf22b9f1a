#include "folsom/protocol/binary_encoder.hpp"

#include "folsom/error.hpp"

#include <limits>

namespace folsom::protocol::binary {
namespace {

// Big-endian stores into a byte array (the wire order of every multi-byte field).
void put16(char* p, std::uint16_t v) noexcept {
    p[0] = static_cast<char>(v >> 8);
    p[1] = static_cast<char>(v);
}

void put32(char* p, std::uint32_t v) noexcept {
    for (int i = 3; i >= 0; --i) {
        p[i] = static_cast<char>(v);
        v >>= 8;
    }
}

void put64(char* p, std::uint64_t v) noexcept {
    for (int i = 7; i >= 0; --i) {
        p[i] = static_cast<char>(v);
        v >>= 8;
    }
}

void append32(OutputBuffer& out, std::uint32_t v) {
    char b[4];
    put32(b, v);
    out.append(std::string_view(b, sizeof b));
}

void append64(OutputBuffer& out, std::uint64_t v) {
    char b[8];
    put64(b, v);
    out.append(std::string_view(b, sizeof b));
}

// Callers have validated the sizes (key <= 250, extras <= 20, body fits in 32 bits), so the
// narrowing casts below cannot truncate.
void append_header(OutputBuffer& out, Opcode op, std::size_t key_length, std::size_t extras_length,
                   std::size_t value_length, std::uint32_t opaque, std::uint64_t cas) {
    char h[header_size] = {};
    h[0] = static_cast<char>(request_magic);
    h[1] = static_cast<char>(op);
    put16(h + 2, static_cast<std::uint16_t>(key_length));
    h[4] = static_cast<char>(extras_length);
    h[5] = static_cast<char>(raw_data_type);
    // h[6..7]: vbucket id, always 0 for memcached.
    put32(h + 8, static_cast<std::uint32_t>(extras_length + key_length + value_length));
    put32(h + 12, opaque);
    put64(h + 16, cas);
    out.append(std::string_view(h, sizeof h));
}

// The body length field is 32 bits: a Limits configured above 4 GiB must still not wrap it.
std::error_code check_value(std::size_t value_size, std::size_t other_body,
                            const Limits& limits) noexcept {
    if (value_size > limits.max_value_size) return errc::value_too_large;
    if (value_size > std::numeric_limits<std::uint32_t>::max() - other_body)
        return errc::value_too_large;
    return {};
}

// A stat group or SASL mechanism name is not a cache key, but travels in the key field.
std::error_code check_name(std::string_view name) noexcept {
    return name.size() > max_key_length ? std::error_code(errc::invalid_argument)
                                        : std::error_code();
}

// A request with no extras, an optional key and no value.
std::error_code encode_simple(OutputBuffer& out, Opcode op, std::uint32_t opaque,
                              std::string_view key = {}, std::uint64_t cas = 0) {
    append_header(out, op, key.size(), 0, 0, opaque, cas);
    out.append(key);
    return {};
}

std::error_code encode_sasl(OutputBuffer& out, Opcode op, std::string_view mechanism,
                            std::string_view data, std::uint32_t opaque, const Limits& limits) {
    if (mechanism.empty() || check_name(mechanism)) return errc::invalid_argument;
    if (auto ec = check_value(data.size(), mechanism.size(), limits)) return ec;
    append_header(out, op, mechanism.size(), 0, data.size(), opaque, 0);
    out.append(mechanism);
    out.append(data);
    return {};
}

constexpr Opcode get_opcode(GetCommand c) noexcept {
    switch (c) {
        case GetCommand::get:
            return Opcode::get;
        case GetCommand::getq:
            return Opcode::getq;
        case GetCommand::getk:
            return Opcode::getk;
        case GetCommand::getkq:
            return Opcode::getkq;
    }
    return Opcode::get;
}

constexpr Opcode gat_opcode(GatCommand c) noexcept {
    switch (c) {
        case GatCommand::gat:
            return Opcode::gat;
        case GatCommand::gatq:
            return Opcode::gatq;
        case GatCommand::gatk:
            return Opcode::gatk;
        case GatCommand::gatkq:
            return Opcode::gatkq;
    }
    return Opcode::gat;
}

constexpr Opcode store_opcode(StoreCommand c, bool quiet) noexcept {
    switch (c) {
        case StoreCommand::set:
            return quiet ? Opcode::setq : Opcode::set;
        case StoreCommand::add:
            return quiet ? Opcode::addq : Opcode::add;
        case StoreCommand::replace:
            return quiet ? Opcode::replaceq : Opcode::replace;
    }
    return Opcode::set;
}

constexpr Opcode concat_opcode(ConcatCommand c, bool quiet) noexcept {
    if (c == ConcatCommand::prepend) return quiet ? Opcode::prependq : Opcode::prepend;
    return quiet ? Opcode::appendq : Opcode::append;
}

constexpr Opcode arith_opcode(ArithCommand c, bool quiet) noexcept {
    if (c == ArithCommand::decrement) return quiet ? Opcode::decrementq : Opcode::decrement;
    return quiet ? Opcode::incrementq : Opcode::increment;
}

}  // namespace

std::error_code validate_binary_key(std::string_view key) noexcept {
    if (key.empty() || key.size() > max_key_length) return errc::invalid_key;
    return {};
}

std::error_code encode_get(OutputBuffer& out, GetCommand cmd, std::string_view key,
                           std::uint32_t opaque) {
    if (auto ec = validate_binary_key(key)) return ec;
    return encode_simple(out, get_opcode(cmd), opaque, key);
}

std::error_code encode_gat(OutputBuffer& out, GatCommand cmd, std::string_view key,
                           std::uint32_t exptime, std::uint32_t opaque) {
    if (auto ec = validate_binary_key(key)) return ec;
    append_header(out, gat_opcode(cmd), key.size(), 4, 0, opaque, 0);
    append32(out, exptime);
    out.append(key);
    return {};
}

std::error_code encode_store(OutputBuffer& out, StoreCommand cmd, std::string_view key,
                             std::string_view data, std::uint32_t flags, std::uint32_t exptime,
                             std::uint64_t cas, bool quiet, std::uint32_t opaque,
                             const Limits& limits, std::size_t ref_threshold) {
    if (auto ec = validate_binary_key(key)) return ec;
    if (auto ec = check_value(data.size(), 8 + key.size(), limits)) return ec;
    append_header(out, store_opcode(cmd, quiet), key.size(), 8, data.size(), opaque, cas);
    append32(out, flags);
    append32(out, exptime);
    out.append(key);
    out.append_value(data, ref_threshold);
    return {};
}

std::error_code encode_concat(OutputBuffer& out, ConcatCommand cmd, std::string_view key,
                              std::string_view data, std::uint64_t cas, bool quiet,
                              std::uint32_t opaque, const Limits& limits,
                              std::size_t ref_threshold) {
    if (auto ec = validate_binary_key(key)) return ec;
    if (auto ec = check_value(data.size(), key.size(), limits)) return ec;
    append_header(out, concat_opcode(cmd, quiet), key.size(), 0, data.size(), opaque, cas);
    out.append(key);
    out.append_value(data, ref_threshold);
    return {};
}

std::error_code encode_delete(OutputBuffer& out, std::string_view key, std::uint64_t cas,
                              bool quiet, std::uint32_t opaque) {
    if (auto ec = validate_binary_key(key)) return ec;
    return encode_simple(out, quiet ? Opcode::deleteq : Opcode::delete_, opaque, key, cas);
}

std::error_code encode_arith(OutputBuffer& out, ArithCommand cmd, std::string_view key,
                             std::uint64_t delta, std::uint64_t initial, std::uint32_t exptime,
                             std::uint64_t cas, bool quiet, std::uint32_t opaque) {
    if (auto ec = validate_binary_key(key)) return ec;
    append_header(out, arith_opcode(cmd, quiet), key.size(), 20, 0, opaque, cas);
    append64(out, delta);
    append64(out, initial);
    append32(out, exptime);
    out.append(key);
    return {};
}

std::error_code encode_touch(OutputBuffer& out, std::string_view key, std::uint32_t exptime,
                             std::uint32_t opaque) {
    if (auto ec = validate_binary_key(key)) return ec;
    append_header(out, Opcode::touch, key.size(), 4, 0, opaque, 0);
    append32(out, exptime);
    out.append(key);
    return {};
}

std::error_code encode_noop(OutputBuffer& out, std::uint32_t opaque) {
    return encode_simple(out, Opcode::noop, opaque);
}

std::error_code encode_flush(OutputBuffer& out, std::optional<std::uint32_t> delay, bool quiet,
                             std::uint32_t opaque) {
    const Opcode op = quiet ? Opcode::flushq : Opcode::flush;
    if (!delay) return encode_simple(out, op, opaque);
    append_header(out, op, 0, 4, 0, opaque, 0);
    append32(out, *delay);
    return {};
}

std::error_code encode_version(OutputBuffer& out, std::uint32_t opaque) {
    return encode_simple(out, Opcode::version, opaque);
}

std::error_code encode_stat(OutputBuffer& out, std::string_view group, std::uint32_t opaque) {
    if (auto ec = check_name(group)) return ec;
    return encode_simple(out, Opcode::stat, opaque, group);
}

std::error_code encode_verbosity(OutputBuffer& out, std::uint32_t level, std::uint32_t opaque) {
    append_header(out, Opcode::verbosity, 0, 4, 0, opaque, 0);
    append32(out, level);
    return {};
}

std::error_code encode_quit(OutputBuffer& out, bool quiet, std::uint32_t opaque) {
    return encode_simple(out, quiet ? Opcode::quitq : Opcode::quit, opaque);
}

std::error_code encode_sasl_list_mechs(OutputBuffer& out, std::uint32_t opaque) {
    return encode_simple(out, Opcode::sasl_list_mechs, opaque);
}

std::error_code encode_sasl_auth(OutputBuffer& out, std::string_view mechanism,
                                 std::string_view data, std::uint32_t opaque,
                                 const Limits& limits) {
    return encode_sasl(out, Opcode::sasl_auth, mechanism, data, opaque, limits);
}

std::error_code encode_sasl_auth_plain(OutputBuffer& out, std::string_view user,
                                       std::string_view password, std::uint32_t opaque,
                                       const Limits& limits) {
    constexpr std::string_view mechanism = "PLAIN";
    if (user.find('\0') != std::string_view::npos || password.find('\0') != std::string_view::npos)
        return errc::invalid_argument;
    const std::size_t value_size = 1 + user.size() + 1 + password.size();
    if (auto ec = check_value(value_size, mechanism.size(), limits)) return ec;
    // Written piecewise so the "\0user\0password" message is never assembled in a temporary.
    append_header(out, Opcode::sasl_auth, mechanism.size(), 0, value_size, opaque, 0);
    out.append(mechanism);
    out.append('\0');
    out.append(user);
    out.append('\0');
    out.append(password);
    return {};
}

std::error_code encode_sasl_step(OutputBuffer& out, std::string_view mechanism,
                                 std::string_view data, std::uint32_t opaque,
                                 const Limits& limits) {
    return encode_sasl(out, Opcode::sasl_step, mechanism, data, opaque, limits);
}

}  // namespace folsom::protocol::binary
