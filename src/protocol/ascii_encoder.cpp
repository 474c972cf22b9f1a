#include "folsom/protocol/ascii_encoder.hpp"

#include "folsom/error.hpp"
#include "folsom/protocol/key.hpp"

#include <cstring>

namespace folsom::protocol::ascii {
namespace {

constexpr std::string_view retrieve_word(RetrieveCommand c) {
    switch (c) {
        case RetrieveCommand::get:
            return "get";
        case RetrieveCommand::gets:
            return "gets";
        case RetrieveCommand::gat:
            return "gat";
        case RetrieveCommand::gats:
            return "gats";
    }
    return "get";
}

constexpr std::string_view store_word(StoreCommand c) {
    switch (c) {
        case StoreCommand::set:
            return "set";
        case StoreCommand::add:
            return "add";
        case StoreCommand::replace:
            return "replace";
        case StoreCommand::append:
            return "append";
        case StoreCommand::prepend:
            return "prepend";
        case StoreCommand::cas:
            return "cas";
    }
    return "set";
}

void end_command(OutputBuffer& out, bool noreply) {
    if (noreply) out.append(" noreply");
    out.append("\r\n");
}

}  // namespace

std::error_code encode_retrieve(OutputBuffer& out, RetrieveCommand cmd,
                                std::span<const std::string_view> keys, std::uint32_t exptime) {
    if (keys.empty()) return errc::invalid_argument;
    std::size_t line = 0;
    for (auto k : keys) {
        if (auto ec = validate_key(k)) return ec;
        line += 1 + k.size();
    }
    const std::string_view word = retrieve_word(cmd);
    if (cmd == RetrieveCommand::gat || cmd == RetrieveCommand::gats) {
        out.append(word);
        out.append(' ');
        out.append_decimal(exptime);
    } else {
        line += word.size();
    }
    // The keys (and the word) are written in place with one capacity check: this is the
    // pipelined get's and the multi-get's hot path.
    char* p = out.extend(line + 2);
    if (cmd == RetrieveCommand::get || cmd == RetrieveCommand::gets) {
        std::memcpy(p, word.data(), word.size());
        p += word.size();
    }
    for (auto k : keys) {
        *p++ = ' ';
        std::memcpy(p, k.data(), k.size());
        p += k.size();
    }
    p[0] = '\r';
    p[1] = '\n';
    return {};
}

std::error_code encode_retrieve_more(OutputBuffer& out, std::string_view key) {
    if (auto ec = validate_key(key)) return ec;
    // Replace the line's "\r\n" with " <key>\r\n": the line grows by the key and its space.
    char* p = out.extend(1 + key.size()) - 2;
    *p++ = ' ';
    std::memcpy(p, key.data(), key.size());
    p += key.size();
    p[0] = '\r';
    p[1] = '\n';
    return {};
}

std::error_code encode_store(OutputBuffer& out, StoreCommand cmd, std::string_view key,
                             std::string_view data, std::uint32_t flags, std::uint32_t exptime,
                             std::uint64_t cas, bool noreply, const Limits& limits,
                             std::size_t ref_threshold) {
    if (auto ec = validate_key(key)) return ec;
    if (data.size() > limits.max_value_size) return errc::value_too_large;
    out.append(store_word(cmd));
    out.append(' ');
    out.append(key);
    out.append(' ');
    out.append_decimal(flags);
    out.append(' ');
    out.append_decimal(exptime);
    out.append(' ');
    out.append_decimal(data.size());
    if (cmd == StoreCommand::cas) {
        out.append(' ');
        out.append_decimal(cas);
    }
    end_command(out, noreply);
    out.append_value(data, ref_threshold);
    out.append("\r\n");
    return {};
}

std::error_code encode_delete(OutputBuffer& out, std::string_view key, bool noreply) {
    if (auto ec = validate_key(key)) return ec;
    out.append("delete ");
    out.append(key);
    end_command(out, noreply);
    return {};
}

std::error_code encode_arith(OutputBuffer& out, ArithCommand cmd, std::string_view key,
                             std::uint64_t delta, bool noreply) {
    if (auto ec = validate_key(key)) return ec;
    out.append(cmd == ArithCommand::incr ? "incr " : "decr ");
    out.append(key);
    out.append(' ');
    out.append_decimal(delta);
    end_command(out, noreply);
    return {};
}

std::error_code encode_touch(OutputBuffer& out, std::string_view key, std::uint32_t exptime,
                             bool noreply) {
    if (auto ec = validate_key(key)) return ec;
    out.append("touch ");
    out.append(key);
    out.append(' ');
    out.append_decimal(exptime);
    end_command(out, noreply);
    return {};
}

std::error_code encode_flush_all(OutputBuffer& out, std::optional<std::uint32_t> delay,
                                 bool noreply) {
    out.append("flush_all");
    if (delay) {
        out.append(' ');
        out.append_decimal(*delay);
    }
    end_command(out, noreply);
    return {};
}

std::error_code encode_stats(OutputBuffer& out, std::string_view group) {
    // A token (items, slabs, settings, ...) or a few ("cachedump 1 0"): never a second command.
    if (auto ec = validate_stats_group(group)) return ec;
    out.append("stats");
    if (!group.empty()) {
        out.append(' ');
        out.append(group);
    }
    out.append("\r\n");
    return {};
}

std::error_code encode_version(OutputBuffer& out) {
    out.append("version\r\n");
    return {};
}

std::error_code encode_verbosity(OutputBuffer& out, std::uint32_t level, bool noreply) {
    out.append("verbosity ");
    out.append_decimal(level);
    end_command(out, noreply);
    return {};
}

std::error_code encode_quit(OutputBuffer& out) {
    out.append("quit\r\n");
    return {};
}

}  // namespace folsom::protocol::ascii
