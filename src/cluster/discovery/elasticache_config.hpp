// The reply of an ElastiCache (memcached engine) configuration endpoint, parsed without I/O.
//
// `config get cluster` (engines 1.4.14 and later) is answered with
//
//     CONFIG cluster <flags> <bytes>\r\n
//     <version>\n
//     <host>|<ip>|<port> <host>|<ip>|<port> ...\n
//     \r\n
//     END\r\n
//
// where <bytes> counts the two data lines (version and nodes, each with its "\n"). Older engines
// keep the same data in an item read with `get AmazonElastiCache:cluster`, answered as a
// normal VALUE block ("VALUE AmazonElastiCache:cluster <flags> <bytes>\r\n...\r\nEND\r\n").
//
// Flow: feed() every chunk read from the socket, in order, until it answers done or error;
// finish_input() when the peer closed first. Bytes may be split anywhere. The parser keeps the
// reply (it is small, and asked for rarely), never more than max_reply_bytes of data plus one
// header line: a hostile endpoint cannot make it grow without bound, and a declared size over
// the bound fails at once. Errors are sticky.
//
// No Asio here, no socket: the discovery in elasticache_discovery.cpp does the I/O.
#pragma once

#include "folsom/server_address.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace folsom::cluster {

/// One cache node as the configuration lists it.
struct ElastiCacheNode {
    std::string hostname;  // may be empty when the ip is given
    std::string ip;        // may be empty (then the hostname is used)
    std::uint16_t port = 0;
    friend bool operator==(const ElastiCacheNode&, const ElastiCacheNode&) = default;
};

/// A cluster configuration: its version (raised by ElastiCache on every change) and nodes.
struct ElastiCacheConfig {
    std::uint64_t version = 0;
    std::vector<ElastiCacheNode> nodes;

    /// The nodes as servers, in the order listed: the ip when there is one (no DNS lookup per
    /// node, and the text ketama hashes stays stable), else the hostname; weight 1.
    std::vector<ServerAddress> servers() const;
};

/// Which command the reply answers (it decides the header expected).
enum class ElastiCacheCommand : std::uint8_t {
    config_get,  ///< `config get cluster` -> "CONFIG cluster <flags> <bytes>"
    legacy_get,  ///< `get AmazonElastiCache:cluster` -> "VALUE AmazonElastiCache:cluster ..."
};

/// The request line for `command`, "\r\n" included.
std::string_view elasticache_request(ElastiCacheCommand command) noexcept;

/// Incremental parser of one configuration reply.
class ElastiCacheConfigParser {
  public:
    enum class State : std::uint8_t { need_more, done, error };

    /// Longest header line accepted ("CONFIG cluster 0 <bytes>" is about 30 bytes).
    static constexpr std::size_t max_header_line = 256;

    explicit ElastiCacheConfigParser(ElastiCacheCommand command = ElastiCacheCommand::config_get,
                                     std::size_t max_reply_bytes = 1024 * 1024) noexcept
        : command_(command), max_reply_bytes_(max_reply_bytes) {}

    /// Takes the next bytes of the reply. After done or error, further input is ignored (and
    /// the state stays).
    State feed(std::string_view bytes);

    /// The peer closed the connection: an unfinished reply becomes an error
    /// (errc::connection_lost). Returns the final state.
    State finish_input();

    State state() const noexcept { return state_; }

    /// Why the reply was refused (when state() is error):
    ///   protocol_error   bad header, wrong byte count, bad version or node entry, missing END,
    ///                    a reply over max_reply_bytes;
    ///   server_error     ERROR or SERVER_ERROR (e.g. a plain memcached: no such command);
    ///   client_error     CLIENT_ERROR;
    ///   resolve_failed   "END" alone: the endpoint holds no configuration;
    ///   connection_lost  the peer closed before the reply was complete (finish_input).
    std::error_code error() const noexcept { return error_; }

    /// The configuration (when state() is done). May list no node: the caller decides.
    const ElastiCacheConfig& config() const noexcept { return config_; }

  private:
    State fail(std::error_code ec);
    State parse_header(std::string_view line);
    State parse_data(std::string_view data);
    State advance();

    ElastiCacheCommand command_;
    std::size_t max_reply_bytes_;
    State state_ = State::need_more;
    std::error_code error_;
    std::string buffer_;          // the reply so far (bounded, see above)
    std::size_t scanned_ = 0;     // header: bytes known to hold no "\r\n"; data: checked bytes
    std::size_t data_begin_ = 0;  // 0 until the header has been parsed
    std::size_t data_bytes_ = 0;  // <bytes> of the header
    ElastiCacheConfig config_;
};

}  // namespace folsom::cluster
