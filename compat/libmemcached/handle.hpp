// The state behind a libmemcached `memcached_st`: the drop-in's one internal header.
//
// libmemcached's callers own the `memcached_st` storage (696 bytes on their stack, in arrays,
// from their own allocator), so the state cannot live in it: it hangs off it. The public
// fields that callers or libmemcached's own tools read (flags, distribution, timeouts,
// user_data, allocators, number_of_hosts) are kept in the struct itself, as libmemcached
// keeps them; everything else is a Handle, reached through the struct's `ketama.continuum`
// pointer, a field that is opaque to every caller (its type is never defined in the public
// headers).
//
// The I/O is folsom's caller-driven blocking core: one detail::BlockingLoop per memcached_st
// (run by the thread that calls, as libmemcached is), and one folsom::Client per server on it.
// The drop-in chooses each key's server itself (libmemcached's modula, rings and buckets, on
// the core's key hashes and rings), because the *_by_key calls, memcached_server_by_key and
// the per-server calls (stats, version, dump) need to name a server; each per-server Client
// then has a single server.
#pragma once

#include "folsom/client.hpp"
#include "folsom/cluster/continuum.hpp"
#include "folsom/detail/blocking_loop.hpp"
#include "folsom/routes.hpp"

#include <libmemcached-1.0/memcached.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace folsom::compat {
struct ServerEntry;
struct Handle;
}  // namespace folsom::compat

// libmemcached's instance type is opaque in its public headers; the drop-in defines it. Its
// layout matches libmemcached 1.1.4's at the three places libmemcached-tools read directly
// (they were built with libmemcached's internal headers): memcping reads the port at 0x10 and
// the hostname at 0x40c0, memcstat reads `root` at 0xa0. The padding stands for libmemcached's
// own fields there (its I/O buffers, mostly); the drop-in's own data follows the hostname.
struct memcached_instance_st {
    unsigned char reserved_head_[0x10];
    in_port_t port;  // @0x10
    unsigned char reserved_mid_[0xa0 - 0x10 - sizeof(in_port_t)];
    memcached_st* root;  // @0xa0
    unsigned char reserved_tail_[0x40c0 - 0xa0 - sizeof(memcached_st*)];
    char hostname[MEMCACHED_NI_MAXHOST];  // @0x40c0, NUL-terminated
    folsom::compat::ServerEntry* entry;   // the drop-in's own state for this server
};

namespace folsom::compat {

/// One server of a memcached_st: its address, its instance (what libmemcached hands out as
/// `const memcached_instance_st*`), its last error and its Client (made on first use).
struct ServerEntry {
    memcached_instance_st instance{};
    std::string host;  // host name or IP literal, or a Unix socket's path
    std::uint16_t port = 0;
    std::uint32_t weight = 1;
    memcached_connection_t type = MEMCACHED_CONNECTION_TCP;
    std::optional<Client> client;
    memcached_return_t last_rc = MEMCACHED_SUCCESS;
    std::string last_message;
    std::uint8_t major = UINT8_MAX, minor = UINT8_MAX, micro = UINT8_MAX;
    time_t next_retry = 0;
    bool last_failed = false;  // its last request failed at the connection
};

/// A hit of the last memcached_mget(), kept until a memcached_fetch*() call hands it out: its
/// key in Handle::fetched_keys and its value in one of Handle::fetched's buffers, so that an
/// mget copies no value and allocates nothing per key.
struct PendingResult {
    std::uint32_t key_offset;  // in fetched_keys; the key without the prefix, as returned
    std::uint32_t key_size;
    ValueRef value;
};

/// A set held back by MEMCACHED_BEHAVIOR_BUFFER_REQUESTS until memcached_flush_buffers (or
/// the next call that is not such a set).
struct BufferedStore {
    std::size_t server;
    StoreMode mode;
    std::string key;
    std::string value;
    time_t expiration;
    std::uint32_t flags;
    std::uint64_t cas;
};

/// memcached_set_encoding_key's cipher (value_cipher.cpp): AES-256-CBC's key and IV.
struct ValueCipher {
    std::array<unsigned char, 32> key;
    std::array<unsigned char, 16> iv;
};

/// What folsom adds to libmemcached, switched on by configuration alone (the options of
/// configuration.cpp: --TLS..., --META, --QUIET-WRITES, --ROUTE-FILE, --SRV, --ELASTICACHE),
/// in a configuration string or in the file FOLSOM_LIBMEMCACHED_CONFIG names, which applies
/// to every memcached_st the process creates (docs/libmemcached-dropin.md).
struct FolsomSettings {
    std::optional<TlsOptions> tls;
    bool meta = false;          // the meta protocol on the wire, whatever BINARY_PROTOCOL says
    bool quiet_writes = false;  // stores sent quiet, still answered with their true outcome
    std::string route_file;     // where `routes` came from (for messages)
    std::optional<RouteConfig> routes;
    std::string discovery_name;   // the SRV name or the ElastiCache endpoint
    std::string srv_nameservers;  // --SRV-NAMESERVERS (empty: /etc/resolv.conf's)
    std::shared_ptr<cluster::Discovery> discovery;
    std::chrono::milliseconds discovery_interval{30000};
    /// Routes or discovery name the servers: every keyed request goes to one Client over the
    /// route tree (or the discovered ring), and the servers the program added are not used
    /// for keys.
    bool routed() const { return routes.has_value() || discovery != nullptr; }
};

/// Everything a memcached_st holds besides its public fields.
struct Handle {
    memcached_st* root = nullptr;
    std::vector<std::unique_ptr<ServerEntry>> servers;
    // Behaviours without a public field (the others live in memcached_st itself). Unknown
    // numbers below MEMCACHED_BEHAVIOR_MAX are kept too: php's setOption() passes any through.
    std::uint64_t behaviors[MEMCACHED_BEHAVIOR_MAX] = {};
    memcached_hash_t key_hash = MEMCACHED_HASH_DEFAULT;
    memcached_hash_t distribution_hash = MEMCACHED_HASH_DEFAULT;
    std::string prefix;  // MEMCACHED_CALLBACK_PREFIX_KEY
    // memcached_bucket_set: bucket -> server index (MEMCACHED_DISTRIBUTION_VIRTUAL_BUCKET).
    std::vector<std::uint32_t> bucket_servers;
    std::optional<SaslCredentials> sasl;
    // memcached_set_encoding_key: values are stored encrypted and decrypted when read.
    std::optional<ValueCipher> cipher;
    FolsomSettings folsom;
    // With folsom.routed(): the one Client every server index maps to (made on first use).
    std::optional<Client> routed_client;
    std::uint64_t query_id = 0;
    // The last error, as memcached_last_error*() report it.
    memcached_return_t last_rc = MEMCACHED_SUCCESS;
    std::string last_message;
    int last_errno = 0;
    const memcached_instance_st* last_disconnected = nullptr;
    // Results of the last mget, handed out by memcached_fetch*() from next_pending on: the
    // replies (which hold the values' bytes) and the hits' keys. Kept between mgets, cleared
    // (their capacity stays), so that a loop of mgets reuses them.
    std::vector<PendingResult> pending;
    std::size_t next_pending = 0;
    std::vector<MultiGetResult> fetched;
    std::string fetched_keys;
    // The value of an mget of one key (read by a single get, copied here): its capacity stays.
    std::string single_value;
    // The mget's keys by server and the servers it asks: scratch reused by every mget.
    std::vector<std::vector<std::string_view>> mget_keys;
    std::vector<std::size_t> mget_servers;
    /// Forgets the last mget's results (memcached_fetch*() then find nothing).
    void clear_pending() {
        pending.clear();
        next_pending = 0;
        fetched.clear();
        fetched_keys.clear();
    }
    // Writes held back by MEMCACHED_BEHAVIOR_BUFFER_REQUESTS, in the order they were made.
    std::vector<BufferedStore> buffered;
    memcached_return_t pending_end = MEMCACHED_END;
    // The caller-driven event loop every server's Client runs on (created on first I/O), and
    // the process that created it (see forget_if_forked).
    std::unique_ptr<detail::BlockingLoop> loop;
    pid_t loop_pid = 0;
    // The ring of the consistent distributions, as libmemcached's update_continuum builds it
    // for the current servers and distribution; built on first use. Its unweighted points are
    // hashed with ring_hash, the key hash when the servers or the distribution last changed:
    // libmemcached rebuilds its ring then, not when the key hash changes, so that a key hash
    // set afterwards hashes the keys only.
    mutable std::unique_ptr<cluster::Continuum> ring;
    memcached_hash_t ring_hash = MEMCACHED_HASH_DEFAULT;
    // libmemcached's unweighted KETAMA_SPY ring, which no core Distribution is: 100 points a
    // server, each the key hash of "/host:port-i". Sorted by position; built on first use.
    mutable std::vector<cluster::Continuum::Point> spy_ring;

    ~Handle();
    /// The binary protocol is what goes on the wire: BINARY_PROTOCOL set and --META not.
    bool binary_wire() const { return root->flags.binary_protocol && !folsom.meta; }
    /// Drops every connection (they come back on the next request): after a change of
    /// protocol, timeouts, credentials or prefix, and in memcached_quit().
    void disconnect();
    /// The Client of server `i`, connecting it when it has none.
    Client& client(std::size_t i);
    /// In a child of fork(): lets go of the parent's connections without touching them (their
    /// sockets and the loop's epoll instance are shared with the parent, which still uses
    /// them), so that the next request connects afresh, as libmemcached's users (PHP-FPM)
    /// expect. A deliberate leak, once per fork.
    void forget_if_forked();
    /// The index of the server that owns `key` (libmemcached's placement). Precondition:
    /// servers is not empty.
    std::size_t server_for(std::string_view key) const;
    /// The server of a key whose key hash is `hash` on the ring of a consistent distribution.
    /// Precondition: servers is not empty.
    std::size_t ring_server(std::uint32_t hash) const;
    /// Forgets the rings: where libmemcached runs its run_distribution() (the servers or the
    /// distribution changed).
    void reset_rings() {
        ring.reset();
        spy_ring.clear();
        ring_hash = key_hash;
    }
};

/// The Handle of a memcached_st made by memcached_create(), or null.
Handle* handle_of(const memcached_st* memc) noexcept;

/// Records an error (and its message) as memcached_last_error*() report it; returns rc.
memcached_return_t set_error(Handle& h, memcached_return_t rc, std::string_view message,
                             int err = 0);
/// Records the outcome of a request to one server (also on the server's instance).
memcached_return_t set_server_error(Handle& h, ServerEntry& s, memcached_return_t rc,
                                    std::string_view message);
/// Marks the last call a success.
inline memcached_return_t set_success(Handle& h, memcached_return_t rc = MEMCACHED_SUCCESS) {
    h.last_rc = MEMCACHED_SUCCESS;
    h.last_message.clear();
    h.last_errno = 0;
    return rc;
}

/// libmemcached's code for a folsom error.
memcached_return_t to_return(std::error_code ec) noexcept;
/// libmemcached's code for a folsom Status.
memcached_return_t to_return(Status s) noexcept;

/// Checks a key as libmemcached does before sending: its length with the prefix; over binary
/// nothing else (any bytes go); over ascii the characters when MEMCACHED_BEHAVIOR_VERIFY_KEY
/// is set, and always those that would split the command (folsom never sends a key that could
/// inject a second command).
memcached_return_t check_key(Handle& h, std::string_view key);

/// Runs one request on the handle's loop and waits for it (driving the loop on this thread).
/// `start(handler)` starts it; the handler's value is returned with its error.
template <class T, class Start>
std::pair<std::error_code, T> run(Handle& h, Start&& start) {
    detail::WaitSlot<T> slot;
    auto& loop = *h.loop;
    const bool lead = loop.start([&] { start(detail::WaitHandler<T>{&slot, &loop}); });
    loop.wait([&] { return slot.done; }, lead);
    return {slot.error, std::move(slot.value)};
}

/// Runs one request per server in `which` at once and waits for all of them.
template <class T, class Start>
std::vector<std::pair<std::error_code, T>> run_each(Handle& h,
                                                    const std::vector<std::size_t>& which,
                                                    Start&& start) {
    std::vector<detail::WaitSlot<T>> slots(which.size());
    auto& loop = *h.loop;
    const bool lead = loop.start([&] {
        for (std::size_t i = 0; i < which.size(); ++i)
            start(which[i], detail::WaitHandler<T>{&slots[i], &loop});
    });
    loop.wait(
        [&] {
            for (const auto& s : slots)
                if (!s.done) return false;
            return true;
        },
        lead);
    std::vector<std::pair<std::error_code, T>> out;
    out.reserve(slots.size());
    for (auto& s : slots)
        out.emplace_back(s.error, std::move(s.value));
    return out;
}

/// The memcached_st's allocators (the user's, or libc's).
void* lm_malloc(const memcached_st* memc, std::size_t size);
void* lm_calloc(const memcached_st* memc, std::size_t n, std::size_t size);
void* lm_realloc(const memcached_st* memc, void* p, std::size_t size);
void lm_free(const memcached_st* memc, void* p);

/// Sets up a memcached_st's public fields and its Handle (memcached_create's work).
void init_memcached(memcached_st* memc);
/// Fills `result` from a value, its key given without the prefix.
memcached_return_t fill_result(memcached_result_st* result, std::string_view key,
                               std::string_view data, std::uint32_t flags, std::uint64_t cas);
inline memcached_return_t fill_result(memcached_result_st* result, std::string_view key,
                                      const Value& v) {
    return fill_result(result, key, v.data, v.flags, v.cas);
}
/// When a server's weight above 1 sets the weighted-ketama flag: memcached_server_add* (and
/// configuration strings) set it only under a consistent distribution; memcached_server_push,
/// memcached_push and memcached_clone always.
enum class WeightRule { when_consistent, always };
/// Adds a server (memcached_server_add*, memcached_server_push, clones).
memcached_return_t add_server(Handle& h, std::string_view host, std::uint16_t port,
                              std::uint32_t weight, memcached_connection_t type, WeightRule rule);
/// folsom's KeyHash of a libmemcached hash (the same number); nullopt for CUSTOM and numbers
/// from MEMCACHED_HASH_MAX up.
std::optional<cluster::KeyHash> core_hash(memcached_hash_t hash) noexcept;
/// libmemcached's hash of a key (libhashkit_digest): cluster::key_hash, or 1 for a hash
/// Debian's libmemcached does not have (HSIEH, CUSTOM, unknown numbers).
std::uint32_t hash_value(memcached_hash_t hash, std::string_view key) noexcept;
/// The cipher of memcached_set_encoding_key(key, key_length) as libmemcached derives it;
/// nullopt for no key (encryption off).
std::optional<ValueCipher> make_value_cipher(const char* key, std::size_t key_length);
/// A value encrypted (padded to whole blocks) or decrypted; false when OpenSSL fails, or for a
/// value that is not one this key encrypted (its padding is wrong).
bool encrypt_value(const ValueCipher& c, std::string_view plain, std::string& out);
bool decrypt_value(const ValueCipher& c, std::string_view cipher, std::string& out);
/// Parses a libmemcached configuration string into `memc` (already created); on failure,
/// the message says what is wrong. `from_environment`: FOLSOM_LIBMEMCACHED_CONFIG's file,
/// where --SERVER and --SOCKET are refused.
memcached_return_t apply_configuration(memcached_st* memc, std::string_view text,
                                       std::string& message, bool from_environment = false);
/// Applies the file FOLSOM_LIBMEMCACHED_CONFIG names (when set) to a new memcached_st; false
/// (the reason written to stderr) when it cannot be read or is not a valid configuration.
bool apply_environment(memcached_st* memc);

}  // namespace folsom::compat
