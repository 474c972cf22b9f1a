// libFuzzer target: the meta protocol encoder, given any keys (text or binary), values, flags
// and opaques, either appends exactly one well-formed command or refuses and appends nothing.
// The bytes are read back: one "\r\n"-terminated line; the command word; a key token that is a
// valid key and equals the key given (for a binary key: whose base64 decoding equals it); the
// flags the request asked for, each once, in the documented order; for ms exactly the declared
// data block. A refusal must be justified and a valid request never refused.
#include "folsom/protocol/base64.hpp"
#include "folsom/protocol/meta_encoder.hpp"
#include "folsom/protocol/output_buffer.hpp"

#include "encoder_check.hpp"

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace folsom;
using namespace folsom::protocol;
using namespace folsom::protocol::meta;
using folsom::fuzz::Command;

template <class T>
std::optional<T> maybe(FuzzedDataProvider& p) {
    if (!p.ConsumeBool()) return std::nullopt;
    return p.ConsumeIntegral<T>();
}

// An opaque: usually absent or a short token, sometimes too long or holding a space.
std::string fuzz_opaque(FuzzedDataProvider& p) {
    switch (p.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:
            return {};
        case 1:
            return std::to_string(p.ConsumeIntegral<std::uint32_t>());
        default:
            return p.ConsumeRandomLengthString(40);
    }
}

// The flags a command wrote, in order, built from the request as the header documents them.
struct Expected {
    std::vector<std::string> flags;
    void on(bool b, char f) {
        if (b) flags.emplace_back(1, f);
    }
    template <class T>
    void num(const std::optional<T>& v, char f) {
        if (v) flags.push_back(f + std::to_string(*v));
    }
    void opaque(const std::string& o) {
        if (!o.empty()) flags.push_back("O" + o);
    }
};

// Checks the key token (tokens[1]) against the key the caller gave.
void expect_key(const Command& c, const std::string& key, bool base64) {
    FUZZ_CHECK(c.tokens.size() >= 2, "no key token");
    const std::string_view tok = c.tokens[1];
    FUZZ_CHECK(fuzz::checked_key_ok(tok), "the key token is not a valid key");
    if (!base64) {
        FUZZ_CHECK(tok == key, "the key token differs from the key");
        return;
    }
    std::string decoded(base64_max_decoded_size(tok.size()), '\0');
    std::size_t n = 0;
    FUZZ_CHECK(base64_decode(tok, decoded.data(), n), "the base64 key token does not decode");
    decoded.resize(n);
    FUZZ_CHECK(decoded == key, "the base64 key token decodes to another key");
}

// tokens = word, key, [fixed...], flags...
void expect_line(const Command& c, std::string_view word, const std::string& key, bool base64,
                 const std::vector<std::string>& fixed, const Expected& e) {
    FUZZ_CHECK(c.tokens.size() == 2 + fixed.size() + e.flags.size(), "wrong number of tokens");
    FUZZ_CHECK(c.tokens[0] == word, "wrong command word");
    expect_key(c, key, base64);
    std::size_t i = 2;
    for (const auto& f : fixed)
        FUZZ_CHECK(c.tokens[i++] == f, "a positional token differs");
    for (const auto& f : e.flags)
        FUZZ_CHECK(c.tokens[i++] == f, "a flag is missing or moved");
}

void expect_no_data(const Command& c) {
    FUZZ_CHECK(c.after_line.empty(), "bytes after the command line of a command with no data");
}

bool opaque_ok(const std::string& o) {
    return o.empty() || (o.size() <= max_opaque_length && fuzz::checked_key_ok(o));
}

// The key rules for the chosen mode: a binary key is any 1..186 bytes.
bool meta_key_ok(const std::string& key, bool base64) {
    if (base64) return !key.empty() && key.size() <= max_base64_key_length;
    return fuzz::checked_key_ok(key);
}

void one_command(FuzzedDataProvider& p, OutputBuffer& out, std::deque<std::string>& keep,
                 const Limits& limits, std::size_t ref_threshold) {
    const std::size_t before = out.size();
    const std::string prefix = out.contiguous();
    std::error_code ec;
    std::vector<errc> refuse;
    std::function<void(const Command&)> check_wire;

    const std::string key = fuzz::fuzz_key(p);
    const bool b64 = p.ConsumeBool();
    const std::string opaque = fuzz_opaque(p);
    if (!meta_key_ok(key, b64)) refuse.push_back(errc::invalid_key);

    switch (p.ConsumeIntegralInRange<int>(0, 5)) {
        case 0: {  // mg
            GetFlags f;
            f.base64_key = b64;
            f.value = p.ConsumeBool();
            f.key = p.ConsumeBool();
            f.cas = p.ConsumeBool();
            f.client_flags = p.ConsumeBool();
            f.ttl = p.ConsumeBool();
            f.size = p.ConsumeBool();
            f.hit_before = p.ConsumeBool();
            f.last_access = p.ConsumeBool();
            f.no_bump = p.ConsumeBool();
            f.quiet = p.ConsumeBool();
            f.opaque = opaque;
            f.touch_ttl = maybe<std::uint32_t>(p);
            f.vivify_ttl = maybe<std::uint32_t>(p);
            f.recache_ttl = maybe<std::uint32_t>(p);
            f.new_cas = maybe<std::uint64_t>(p);
            ec = encode_get(out, key, f);
            if (!opaque_ok(opaque)) refuse.push_back(errc::invalid_argument);
            Expected e;  // b v k c f t s h l u q O T N R E
            e.on(f.base64_key, 'b');
            e.on(f.value, 'v');
            e.on(f.key, 'k');
            e.on(f.cas, 'c');
            e.on(f.client_flags, 'f');
            e.on(f.ttl, 't');
            e.on(f.size, 's');
            e.on(f.hit_before, 'h');
            e.on(f.last_access, 'l');
            e.on(f.no_bump, 'u');
            e.on(f.quiet, 'q');
            e.opaque(opaque);
            e.num(f.touch_ttl, 'T');
            e.num(f.vivify_ttl, 'N');
            e.num(f.recache_ttl, 'R');
            e.num(f.new_cas, 'E');
            check_wire = [=](const Command& c) {
                expect_line(c, "mg", key, b64, {}, e);
                expect_no_data(c);
            };
            break;
        }
        case 1: {  // ms
            SetFlags f;
            f.base64_key = b64;
            f.mode = static_cast<SetMode>(p.ConsumeIntegralInRange<int>(0, 4));
            f.client_flags = p.ConsumeBool() ? p.ConsumeIntegral<std::uint32_t>() : 0;
            f.ttl = maybe<std::uint32_t>(p);
            f.compare_cas = maybe<std::uint64_t>(p);
            f.new_cas = maybe<std::uint64_t>(p);
            f.invalidate = p.ConsumeBool();
            f.return_key = p.ConsumeBool();
            f.return_cas = p.ConsumeBool();
            f.quiet = p.ConsumeBool();
            f.opaque = opaque;
            // Values at or over ref_threshold are referenced, not copied: keep them alive.
            const std::string& data = keep.emplace_back(fuzz::fuzz_data(p));
            ec = encode_set(out, key, data, f, limits, ref_threshold);
            if (data.size() > limits.max_value_size) refuse.push_back(errc::value_too_large);
            if (!opaque_ok(opaque)) refuse.push_back(errc::invalid_argument);
            Expected e;  // b M F T C E I k c q O
            e.on(f.base64_key, 'b');
            static constexpr const char* modes[] = {nullptr, "ME", "MR", "MA", "MP"};
            if (const char* m = modes[static_cast<int>(f.mode)]) e.flags.emplace_back(m);
            if (f.client_flags != 0) e.num(std::optional(f.client_flags), 'F');
            e.num(f.ttl, 'T');
            e.num(f.compare_cas, 'C');
            e.num(f.new_cas, 'E');
            e.on(f.invalidate, 'I');
            e.on(f.return_key, 'k');
            e.on(f.return_cas, 'c');
            e.on(f.quiet, 'q');
            e.opaque(opaque);
            check_wire = [=, &data](const Command& c) {
                expect_line(c, "ms", key, b64, {std::to_string(data.size())}, e);
                FUZZ_CHECK(c.after_line.size() == data.size() + 2,
                           "the data block is not the declared size + \\r\\n");
                FUZZ_CHECK(c.after_line.substr(0, data.size()) == data, "the data block differs");
                FUZZ_CHECK(c.after_line.substr(data.size()) == "\r\n",
                           "the data block is not terminated by \\r\\n");
            };
            break;
        }
        case 2: {  // md
            DeleteFlags f;
            f.base64_key = b64;
            f.compare_cas = maybe<std::uint64_t>(p);
            f.new_cas = maybe<std::uint64_t>(p);
            f.invalidate = p.ConsumeBool();
            f.ttl = maybe<std::uint32_t>(p);
            f.return_key = p.ConsumeBool();
            f.quiet = p.ConsumeBool();
            f.opaque = opaque;
            ec = encode_delete(out, key, f);
            if (!opaque_ok(opaque)) refuse.push_back(errc::invalid_argument);
            Expected e;  // b C E I T k q O
            e.on(f.base64_key, 'b');
            e.num(f.compare_cas, 'C');
            e.num(f.new_cas, 'E');
            e.on(f.invalidate, 'I');
            e.num(f.ttl, 'T');
            e.on(f.return_key, 'k');
            e.on(f.quiet, 'q');
            e.opaque(opaque);
            check_wire = [=](const Command& c) {
                expect_line(c, "md", key, b64, {}, e);
                expect_no_data(c);
            };
            break;
        }
        case 3: {  // ma
            ArithFlags f;
            f.base64_key = b64;
            f.mode = p.ConsumeBool() ? ArithMode::decrement : ArithMode::increment;
            f.delta = maybe<std::uint64_t>(p);
            f.vivify_ttl = maybe<std::uint32_t>(p);
            f.initial = maybe<std::uint64_t>(p);
            f.ttl = maybe<std::uint32_t>(p);
            f.compare_cas = maybe<std::uint64_t>(p);
            f.new_cas = maybe<std::uint64_t>(p);
            f.return_ttl = p.ConsumeBool();
            f.return_cas = p.ConsumeBool();
            f.return_value = p.ConsumeBool();
            f.return_key = p.ConsumeBool();
            f.quiet = p.ConsumeBool();
            f.opaque = opaque;
            ec = encode_arith(out, key, f);
            if (!opaque_ok(opaque)) refuse.push_back(errc::invalid_argument);
            if (f.initial && !f.vivify_ttl) refuse.push_back(errc::invalid_argument);
            Expected e;  // b M D N J T C E t c v k q O
            e.on(f.base64_key, 'b');
            if (f.mode == ArithMode::decrement) e.flags.emplace_back("MD");
            e.num(f.delta, 'D');
            e.num(f.vivify_ttl, 'N');
            e.num(f.initial, 'J');
            e.num(f.ttl, 'T');
            e.num(f.compare_cas, 'C');
            e.num(f.new_cas, 'E');
            e.on(f.return_ttl, 't');
            e.on(f.return_cas, 'c');
            e.on(f.return_value, 'v');
            e.on(f.return_key, 'k');
            e.on(f.quiet, 'q');
            e.opaque(opaque);
            check_wire = [=](const Command& c) {
                expect_line(c, "ma", key, b64, {}, e);
                expect_no_data(c);
            };
            break;
        }
        case 4:  // mn: takes no key, so never refused
            refuse.clear();
            ec = encode_noop(out);
            check_wire = [](const Command& c) {
                FUZZ_CHECK(c.tokens.size() == 1 && c.tokens[0] == "mn", "mn is not \"mn\"");
                expect_no_data(c);
            };
            break;
        case 5: {  // me
            ec = encode_debug(out, key, b64);
            Expected e;
            e.on(b64, 'b');
            check_wire = [=](const Command& c) {
                expect_line(c, "me", key, b64, {}, e);
                expect_no_data(c);
            };
            break;
        }
    }

    const std::string after = out.contiguous();
    FUZZ_CHECK(after.size() == out.size(), "OutputBuffer::size() disagrees with its contents");
    FUZZ_CHECK(after.compare(0, prefix.size(), prefix) == 0, "earlier commands were changed");
    if (fuzz::check_verdict(ec, refuse, before, out.size()))
        check_wire(fuzz::read_command(std::string_view(after).substr(before)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider p(data, size);
    Limits limits;
    if (p.ConsumeBool()) limits.max_value_size = p.ConsumeIntegralInRange<std::size_t>(0, 600);
    const std::size_t ref_threshold = p.ConsumeBool() ? p.ConsumeIntegralInRange<std::size_t>(0, 64)
                                                      : meta::default_ref_threshold;
    OutputBuffer out;
    std::deque<std::string> keep;
    for (int i = 0; i < 8 && p.remaining_bytes() > 0; ++i)
        one_command(p, out, keep, limits, ref_threshold);
    return 0;
}
