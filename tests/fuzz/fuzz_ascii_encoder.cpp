// libFuzzer target: the text protocol encoder, given any keys, values and numbers, either
// appends exactly one well-formed command or refuses and appends nothing. "Well-formed" is
// checked by reading the bytes back: one "\r\n"-terminated line, the tokens the command
// documents (every key token a valid key, equal to the key given), and for stores exactly the
// declared data block. A refusal must be justified (an invalid key, a value over the limit, no
// keys) and a valid request must never be refused.
#include "folsom/protocol/ascii_encoder.hpp"
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
using namespace folsom::protocol::ascii;
using folsom::fuzz::Command;

std::string dec(std::uint64_t v) {
    return std::to_string(v);
}

// The tokens after the command word, compared one by one (keys included: they must come back
// byte for byte).
void expect_tokens(const Command& c, std::string_view word, const std::vector<std::string>& rest) {
    FUZZ_CHECK(c.tokens.size() == rest.size() + 1, "wrong number of tokens");
    FUZZ_CHECK(c.tokens[0] == word, "wrong command word");
    for (std::size_t i = 0; i < rest.size(); ++i)
        FUZZ_CHECK(c.tokens[i + 1] == rest[i], "a token differs from the request's argument");
}

void expect_no_data(const Command& c) {
    FUZZ_CHECK(c.after_line.empty(), "bytes after the command line of a command with no data");
}

void one_command(FuzzedDataProvider& p, OutputBuffer& out, std::deque<std::string>& keep,
                 const Limits& limits, std::size_t ref_threshold) {
    const std::size_t before = out.size();
    const std::string prefix = out.contiguous();
    std::error_code ec;
    std::vector<errc> refuse;  // the errors these arguments justify (empty: must be accepted)
    // Filled per command; checked once the verdict is known.
    std::function<void(const Command&)> check_wire;

    switch (p.ConsumeIntegralInRange<int>(0, 9)) {
        case 0: {  // get / gets / gat / gats with 0..5 keys
            const auto cmd = static_cast<RetrieveCommand>(p.ConsumeIntegralInRange<int>(0, 3));
            const auto exptime = p.ConsumeIntegral<std::uint32_t>();
            std::vector<std::string> owned;
            const auto n = p.ConsumeIntegralInRange<std::size_t>(0, 5);
            for (std::size_t i = 0; i < n; ++i)
                owned.push_back(fuzz::fuzz_key(p));
            const std::vector<std::string_view> keys(owned.begin(), owned.end());
            ec = encode_retrieve(out, cmd, keys, exptime);
            if (keys.empty()) refuse.push_back(errc::invalid_argument);
            for (auto k : keys)
                if (!fuzz::checked_key_ok(k)) refuse.push_back(errc::invalid_key);
            check_wire = [=](const Command& c) {
                static constexpr std::string_view words[] = {"get", "gets", "gat", "gats"};
                std::vector<std::string> rest;
                if (cmd == RetrieveCommand::gat || cmd == RetrieveCommand::gats)
                    rest.push_back(dec(exptime));
                for (const auto& k : owned)
                    rest.push_back(k);
                expect_tokens(c, words[static_cast<int>(cmd)], rest);
                expect_no_data(c);
            };
            break;
        }
        case 1: {  // set / add / replace / append / prepend / cas
            const auto cmd = static_cast<StoreCommand>(p.ConsumeIntegralInRange<int>(0, 5));
            const std::string key = fuzz::fuzz_key(p);
            const auto flags = p.ConsumeIntegral<std::uint32_t>();
            const auto exptime = p.ConsumeIntegral<std::uint32_t>();
            const auto cas = p.ConsumeIntegral<std::uint64_t>();
            const bool noreply = p.ConsumeBool();
            // Values at or over ref_threshold are referenced, not copied: keep them alive.
            const std::string& data = keep.emplace_back(fuzz::fuzz_data(p));
            ec = encode_store(out, cmd, key, data, flags, exptime, cas, noreply, limits,
                              ref_threshold);
            if (!fuzz::checked_key_ok(key)) refuse.push_back(errc::invalid_key);
            if (data.size() > limits.max_value_size) refuse.push_back(errc::value_too_large);
            check_wire = [=, &data](const Command& c) {
                static constexpr std::string_view words[] = {"set",    "add",     "replace",
                                                             "append", "prepend", "cas"};
                std::vector<std::string> rest{key, dec(flags), dec(exptime), dec(data.size())};
                if (cmd == StoreCommand::cas) rest.push_back(dec(cas));
                if (noreply) rest.push_back("noreply");
                expect_tokens(c, words[static_cast<int>(cmd)], rest);
                FUZZ_CHECK(c.after_line.size() == data.size() + 2,
                           "the data block is not the declared size + \\r\\n");
                FUZZ_CHECK(c.after_line.substr(0, data.size()) == data, "the data block differs");
                FUZZ_CHECK(c.after_line.substr(data.size()) == "\r\n",
                           "the data block is not terminated by \\r\\n");
            };
            break;
        }
        case 2: {  // delete
            const std::string key = fuzz::fuzz_key(p);
            const bool noreply = p.ConsumeBool();
            ec = encode_delete(out, key, noreply);
            if (!fuzz::checked_key_ok(key)) refuse.push_back(errc::invalid_key);
            check_wire = [=](const Command& c) {
                std::vector<std::string> rest{key};
                if (noreply) rest.push_back("noreply");
                expect_tokens(c, "delete", rest);
                expect_no_data(c);
            };
            break;
        }
        case 3: {  // incr / decr
            const auto cmd = p.ConsumeBool() ? ArithCommand::incr : ArithCommand::decr;
            const std::string key = fuzz::fuzz_key(p);
            const auto delta = p.ConsumeIntegral<std::uint64_t>();
            const bool noreply = p.ConsumeBool();
            ec = encode_arith(out, cmd, key, delta, noreply);
            if (!fuzz::checked_key_ok(key)) refuse.push_back(errc::invalid_key);
            check_wire = [=](const Command& c) {
                std::vector<std::string> rest{key, dec(delta)};
                if (noreply) rest.push_back("noreply");
                expect_tokens(c, cmd == ArithCommand::incr ? "incr" : "decr", rest);
                expect_no_data(c);
            };
            break;
        }
        case 4: {  // touch
            const std::string key = fuzz::fuzz_key(p);
            const auto exptime = p.ConsumeIntegral<std::uint32_t>();
            const bool noreply = p.ConsumeBool();
            ec = encode_touch(out, key, exptime, noreply);
            if (!fuzz::checked_key_ok(key)) refuse.push_back(errc::invalid_key);
            check_wire = [=](const Command& c) {
                std::vector<std::string> rest{key, dec(exptime)};
                if (noreply) rest.push_back("noreply");
                expect_tokens(c, "touch", rest);
                expect_no_data(c);
            };
            break;
        }
        case 5: {  // flush_all [delay] [noreply]
            std::optional<std::uint32_t> delay;
            if (p.ConsumeBool()) delay = p.ConsumeIntegral<std::uint32_t>();
            const bool noreply = p.ConsumeBool();
            ec = encode_flush_all(out, delay, noreply);
            check_wire = [=](const Command& c) {
                std::vector<std::string> rest;
                if (delay) rest.push_back(dec(*delay));
                if (noreply) rest.push_back("noreply");
                expect_tokens(c, "flush_all", rest);
                expect_no_data(c);
            };
            break;
        }
        case 6: {  // stats [group]
            const std::string group = p.ConsumeBool() ? std::string() : fuzz::fuzz_key(p);
            ec = encode_stats(out, group);
            const bool group_ok = fuzz::stats_group_ok(group);
            FUZZ_CHECK(!protocol::validate_stats_group(group) == group_ok,
                       "validate_stats_group() disagrees with the stats argument rules");
            if (!group_ok) refuse.push_back(errc::invalid_argument);
            check_wire = [=](const Command& c) {
                // Each space-separated token of the group comes back as its own token.
                std::vector<std::string> rest;
                for (std::size_t pos = 0; !group.empty();) {
                    const std::size_t sp = group.find(' ', pos);
                    rest.push_back(group.substr(pos, sp - pos));
                    if (sp == std::string::npos) break;
                    pos = sp + 1;
                }
                expect_tokens(c, "stats", rest);
                expect_no_data(c);
            };
            break;
        }
        case 7: {  // verbosity
            const auto level = p.ConsumeIntegral<std::uint32_t>();
            const bool noreply = p.ConsumeBool();
            ec = encode_verbosity(out, level, noreply);
            check_wire = [=](const Command& c) {
                std::vector<std::string> rest{dec(level)};
                if (noreply) rest.push_back("noreply");
                expect_tokens(c, "verbosity", rest);
                expect_no_data(c);
            };
            break;
        }
        case 8:
            ec = encode_version(out);
            check_wire = [](const Command& c) {
                expect_tokens(c, "version", {});
                expect_no_data(c);
            };
            break;
        case 9:
            ec = encode_quit(out);
            check_wire = [](const Command& c) {
                expect_tokens(c, "quit", {});
                expect_no_data(c);
            };
            break;
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
                                                      : ascii::default_ref_threshold;
    // Several commands into one buffer, as a connection batches a loop turn's requests.
    OutputBuffer out;
    std::deque<std::string> keep;
    for (int i = 0; i < 8 && p.remaining_bytes() > 0; ++i)
        one_command(p, out, keep, limits, ref_threshold);
    return 0;
}
