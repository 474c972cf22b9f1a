#include "cluster/discovery/elasticache_config.hpp"

#include "folsom/error.hpp"

#include "base/decimal.hpp"

#include <algorithm>

namespace folsom::cluster {
namespace {

constexpr std::string_view trailer = "\r\nEND\r\n";  // after the data block

/// A host name or address as listed: visible ASCII only (the separators ' ', '|' and "\n"
/// cannot occur, since the text was split on them).
bool valid_host_text(std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u > 0x20 && u < 0x7f;
    });
}

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

std::vector<ServerAddress> ElastiCacheConfig::servers() const {
    std::vector<ServerAddress> out;
    out.reserve(nodes.size());
    for (const auto& n : nodes) {
        ServerAddress a;
        a.host = n.ip.empty() ? n.hostname : n.ip;
        a.port = n.port;
        a.weight = 1;
        out.push_back(std::move(a));
    }
    return out;
}

std::string_view elasticache_request(ElastiCacheCommand command) noexcept {
    return command == ElastiCacheCommand::config_get ? "config get cluster\r\n"
                                                     : "get AmazonElastiCache:cluster\r\n";
}

ElastiCacheConfigParser::State ElastiCacheConfigParser::fail(std::error_code ec) {
    state_ = State::error;
    error_ = ec;
    buffer_.clear();
    buffer_.shrink_to_fit();
    return state_;
}

ElastiCacheConfigParser::State ElastiCacheConfigParser::feed(std::string_view bytes) {
    while (state_ == State::need_more) {
        // The most a well-formed reply can hold at this point: a header line, then (once the
        // header is known) the bounded data and its trailer. Nothing beyond is ever copied.
        const bool had_header = data_begin_ != 0;
        const std::size_t limit =
            had_header ? data_begin_ + data_bytes_ + trailer.size() : max_header_line + 2;
        const std::size_t take = std::min(bytes.size(), limit - std::min(limit, buffer_.size()));
        buffer_.append(bytes.substr(0, take));
        bytes.remove_prefix(take);
        if (advance() != State::need_more || bytes.empty()) break;
        // Input left and no room: only a header just completed makes room for more.
        if (had_header || data_begin_ == 0) return fail(errc::protocol_error);
    }
    // Bytes after a complete reply are ignored: the endpoint sends nothing after END.
    return state_;
}

ElastiCacheConfigParser::State ElastiCacheConfigParser::finish_input() {
    if (state_ == State::need_more) return fail(errc::connection_lost);
    return state_;
}

ElastiCacheConfigParser::State ElastiCacheConfigParser::advance() {
    if (data_begin_ == 0) {
        const std::size_t from = scanned_ == 0 ? 0 : scanned_ - 1;  // "\r" may end the last chunk
        const auto eol = buffer_.find("\r\n", from);
        if (eol == std::string::npos) {
            if (buffer_.size() > max_header_line) return fail(errc::protocol_error);
            scanned_ = buffer_.size();
            return state_;
        }
        if (eol > max_header_line) return fail(errc::protocol_error);
        if (parse_header(std::string_view(buffer_).substr(0, eol)) != State::need_more)
            return state_;
        data_begin_ = eol + 2;
        scanned_ = data_begin_;
    }
    // The data block holds two "\n"-terminated lines and never a "\r": one there means the
    // byte count is wrong (too large), which is caught here instead of waiting for bytes that
    // will never come.
    const std::size_t data_end = data_begin_ + data_bytes_;
    const std::size_t have = std::min(buffer_.size(), data_end);
    if (buffer_.find('\r', scanned_) < have) return fail(errc::protocol_error);
    scanned_ = std::max(scanned_, have);
    if (buffer_.size() > data_end) {
        // Whatever of the trailer has arrived must match it (a byte count too small shows here).
        const std::string_view tail = std::string_view(buffer_).substr(data_end);
        if (tail.substr(0, trailer.size()) !=
            trailer.substr(0, std::min(tail.size(), trailer.size())))
            return fail(errc::protocol_error);
    }
    if (buffer_.size() < data_end + trailer.size()) return state_;
    if (parse_data(std::string_view(buffer_).substr(data_begin_, data_bytes_)) == State::error)
        return state_;
    state_ = State::done;
    buffer_.clear();
    buffer_.shrink_to_fit();
    return state_;
}

ElastiCacheConfigParser::State ElastiCacheConfigParser::parse_header(std::string_view line) {
    if (line == "END") return fail(errc::resolve_failed);  // nothing stored (legacy item missing)
    if (line == "ERROR" || starts_with(line, "ERROR ") || starts_with(line, "SERVER_ERROR"))
        return fail(errc::server_error);
    if (starts_with(line, "CLIENT_ERROR")) return fail(errc::client_error);

    // <verb> <name> <flags> <bytes>, single spaces.
    std::string_view field[4];
    std::size_t n = 0, start = 0;
    for (std::size_t i = 0; i <= line.size(); ++i) {
        if (i < line.size() && line[i] != ' ') continue;
        if (n == 4) return fail(errc::protocol_error);
        field[n++] = line.substr(start, i - start);
        start = i + 1;
    }
    const bool config = command_ == ElastiCacheCommand::config_get;
    if (n != 4 || field[0] != (config ? "CONFIG" : "VALUE") ||
        field[1] != (config ? "cluster" : "AmazonElastiCache:cluster"))
        return fail(errc::protocol_error);
    std::uint32_t flags = 0;
    std::uint64_t bytes = 0;
    if (!folsom::detail::parse_decimal(field[2], flags) ||
        !folsom::detail::parse_decimal(field[3], bytes))
        return fail(errc::protocol_error);
    if (bytes > max_reply_bytes_) return fail(errc::protocol_error);
    data_bytes_ = static_cast<std::size_t>(bytes);
    return state_;
}

ElastiCacheConfigParser::State ElastiCacheConfigParser::parse_data(std::string_view data) {
    // <version>\n<nodes>\n   (the last "\n" is tolerated missing; nothing may follow it)
    const auto eol = data.find('\n');
    if (eol == std::string_view::npos ||
        !folsom::detail::parse_decimal(data.substr(0, eol), config_.version))
        return fail(errc::protocol_error);
    std::string_view nodes = data.substr(eol + 1);
    if (const auto end = nodes.find('\n'); end != std::string_view::npos) {
        if (end + 1 != nodes.size()) return fail(errc::protocol_error);
        nodes = nodes.substr(0, end);
    }
    // host|ip|port entries separated by blanks (runs of blanks tolerated).
    std::size_t pos = 0;
    while (pos < nodes.size()) {
        if (nodes[pos] == ' ') {
            ++pos;
            continue;
        }
        std::size_t end = nodes.find(' ', pos);
        if (end == std::string_view::npos) end = nodes.size();
        const std::string_view entry = nodes.substr(pos, end - pos);
        pos = end;
        const auto bar1 = entry.find('|');
        const auto bar2 = bar1 == std::string_view::npos ? bar1 : entry.find('|', bar1 + 1);
        if (bar2 == std::string_view::npos || entry.find('|', bar2 + 1) != std::string_view::npos)
            return fail(errc::protocol_error);
        ElastiCacheNode node;
        const std::string_view host = entry.substr(0, bar1);
        const std::string_view ip = entry.substr(bar1 + 1, bar2 - bar1 - 1);
        std::uint16_t port = 0;
        if ((host.empty() && ip.empty()) || !valid_host_text(host) || !valid_host_text(ip) ||
            !folsom::detail::parse_decimal(entry.substr(bar2 + 1), port) || port == 0)
            return fail(errc::protocol_error);
        node.hostname = std::string(host);
        node.ip = std::string(ip);
        node.port = port;
        config_.nodes.push_back(std::move(node));
    }
    return state_;
}

}  // namespace folsom::cluster
