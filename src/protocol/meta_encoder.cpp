#include "folsom/protocol/meta_encoder.hpp"

#include "folsom/error.hpp"
#include "folsom/protocol/base64.hpp"
#include "folsom/protocol/key.hpp"

namespace folsom::protocol::meta {
namespace {

std::error_code check_key(std::string_view key, bool base64) noexcept {
    if (!base64) return validate_key(key);
    // Any bytes are fine: only their base64 form, which cannot hold a space or control
    // character, goes on the wire.
    if (key.empty() || key.size() > max_base64_key_length) return errc::invalid_key;
    return {};
}

std::error_code check_opaque(std::string_view opaque) noexcept {
    if (opaque.empty()) return {};
    // The opaque is a token on the command line: the key rules keep it from splitting it.
    if (opaque.size() > max_opaque_length || validate_key(opaque)) return errc::invalid_argument;
    return {};
}

// Writes " <key>" (or its base64 form); the key was checked by check_key().
void write_key(OutputBuffer& out, std::string_view key, bool base64) {
    out.append(' ');
    if (!base64) {
        out.append(key);
        return;
    }
    char buf[base64_encoded_size(max_base64_key_length)];
    out.append(std::string_view(buf, base64_encode(key, buf)));
}

void flag(OutputBuffer& out, bool on, char f) {
    if (!on) return;
    out.append(' ');
    out.append(f);
}

/// A run of one-letter flags gathered on the stack and written with one append, rather than two
/// appends a flag (a multi-get encodes a get per key, each with up to eleven flags).
class FlagRun {
  public:
    void add(bool on, char f) noexcept {
        if (!on) return;
        buf_[n_++] = ' ';
        buf_[n_++] = f;
    }
    void write(OutputBuffer& out) const {
        if (n_ != 0) out.append(std::string_view(buf_, n_));
    }

  private:
    char buf_[32];  // room for 16 flags; encode_get adds 11
    std::size_t n_ = 0;
};

template <class T>
void numeric_flag(OutputBuffer& out, const std::optional<T>& v, char f) {
    if (!v) return;
    out.append(' ');
    out.append(f);
    out.append_decimal(*v);
}

void opaque_flag(OutputBuffer& out, std::string_view opaque) {
    if (opaque.empty()) return;
    out.append(" O");
    out.append(opaque);
}

// The M token of ms; nullptr for set, the server's default.
constexpr const char* set_mode_token(SetMode m) {
    switch (m) {
        case SetMode::set:
            return nullptr;
        case SetMode::add:
            return " ME";
        case SetMode::replace:
            return " MR";
        case SetMode::append:
            return " MA";
        case SetMode::prepend:
            return " MP";
    }
    return nullptr;
}

}  // namespace

std::error_code encode_get(OutputBuffer& out, std::string_view key, const GetFlags& f) {
    if (auto ec = check_key(key, f.base64_key)) return ec;
    if (auto ec = check_opaque(f.opaque)) return ec;
    out.append("mg");
    write_key(out, key, f.base64_key);
    FlagRun flags;
    flags.add(f.base64_key, 'b');
    flags.add(f.value, 'v');
    flags.add(f.key, 'k');
    flags.add(f.cas, 'c');
    flags.add(f.client_flags, 'f');
    flags.add(f.ttl, 't');
    flags.add(f.size, 's');
    flags.add(f.hit_before, 'h');
    flags.add(f.last_access, 'l');
    flags.add(f.no_bump, 'u');
    flags.add(f.quiet, 'q');
    flags.write(out);
    opaque_flag(out, f.opaque);
    numeric_flag(out, f.touch_ttl, 'T');
    numeric_flag(out, f.vivify_ttl, 'N');
    numeric_flag(out, f.recache_ttl, 'R');
    numeric_flag(out, f.new_cas, 'E');
    out.append("\r\n");
    return {};
}

std::error_code encode_set(OutputBuffer& out, std::string_view key, std::string_view data,
                           const SetFlags& f, const Limits& limits, std::size_t ref_threshold) {
    if (auto ec = check_key(key, f.base64_key)) return ec;
    if (data.size() > limits.max_value_size) return errc::value_too_large;
    if (auto ec = check_opaque(f.opaque)) return ec;
    out.append("ms");
    write_key(out, key, f.base64_key);
    out.append(' ');
    out.append_decimal(data.size());
    flag(out, f.base64_key, 'b');
    if (const char* m = set_mode_token(f.mode)) out.append(m);
    if (f.client_flags != 0) numeric_flag(out, std::optional(f.client_flags), 'F');
    numeric_flag(out, f.ttl, 'T');
    numeric_flag(out, f.compare_cas, 'C');
    numeric_flag(out, f.new_cas, 'E');
    flag(out, f.invalidate, 'I');
    flag(out, f.return_key, 'k');
    flag(out, f.return_cas, 'c');
    flag(out, f.quiet, 'q');
    opaque_flag(out, f.opaque);
    out.append("\r\n");
    out.append_value(data, ref_threshold);
    out.append("\r\n");
    return {};
}

std::error_code encode_delete(OutputBuffer& out, std::string_view key, const DeleteFlags& f) {
    if (auto ec = check_key(key, f.base64_key)) return ec;
    if (auto ec = check_opaque(f.opaque)) return ec;
    out.append("md");
    write_key(out, key, f.base64_key);
    flag(out, f.base64_key, 'b');
    numeric_flag(out, f.compare_cas, 'C');
    numeric_flag(out, f.new_cas, 'E');
    flag(out, f.invalidate, 'I');
    numeric_flag(out, f.ttl, 'T');
    flag(out, f.return_key, 'k');
    flag(out, f.quiet, 'q');
    opaque_flag(out, f.opaque);
    out.append("\r\n");
    return {};
}

std::error_code encode_arith(OutputBuffer& out, std::string_view key, const ArithFlags& f) {
    if (auto ec = check_key(key, f.base64_key)) return ec;
    if (auto ec = check_opaque(f.opaque)) return ec;
    // The server ignores an initial value without auto-creation; refusing it catches the
    // caller's mistake instead of silently counting from nothing.
    if (f.initial && !f.vivify_ttl) return errc::invalid_argument;
    out.append("ma");
    write_key(out, key, f.base64_key);
    flag(out, f.base64_key, 'b');
    if (f.mode == ArithMode::decrement) out.append(" MD");
    numeric_flag(out, f.delta, 'D');
    numeric_flag(out, f.vivify_ttl, 'N');
    numeric_flag(out, f.initial, 'J');
    numeric_flag(out, f.ttl, 'T');
    numeric_flag(out, f.compare_cas, 'C');
    numeric_flag(out, f.new_cas, 'E');
    flag(out, f.return_ttl, 't');
    flag(out, f.return_cas, 'c');
    flag(out, f.return_value, 'v');
    flag(out, f.return_key, 'k');
    flag(out, f.quiet, 'q');
    opaque_flag(out, f.opaque);
    out.append("\r\n");
    return {};
}

std::error_code encode_noop(OutputBuffer& out) {
    out.append("mn\r\n");
    return {};
}

std::error_code encode_debug(OutputBuffer& out, std::string_view key, bool base64_key) {
    if (auto ec = check_key(key, base64_key)) return ec;
    out.append("me");
    write_key(out, key, base64_key);
    flag(out, base64_key, 'b');
    out.append("\r\n");
    return {};
}

}  // namespace folsom::protocol::meta
