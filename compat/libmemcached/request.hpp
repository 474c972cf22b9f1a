// What every keyed call does before and after its request: check the handle, the servers and
// the keys (nothing is sent for a bad key), pick the server, and turn the outcome into
// libmemcached's code, recorded as its last error.
#pragma once

#include "handle.hpp"

#include <chrono>
#include <ctime>

namespace folsom::compat {

/// A keyed call about to be sent: its handle and server, or the code that refused it.
struct Prepared {
    Handle* h = nullptr;
    std::size_t server = 0;
    memcached_return_t rc = MEMCACHED_SUCCESS;
};

/// Checks a call on `key` placed by `group` (empty: by the key itself).
inline Prepared prepare(memcached_st* ptr, std::string_view group, std::string_view key) {
    Prepared p;
    p.h = handle_of(ptr);
    if (!p.h) {
        p.rc = MEMCACHED_INVALID_ARGUMENTS;
        return p;
    }
    Handle& h = *p.h;
    h.query_id++;
    if ((p.rc = check_key(h, key)) != MEMCACHED_SUCCESS) return p;
    if (!group.empty() && (p.rc = check_key(h, group)) != MEMCACHED_SUCCESS) return p;
    if (h.servers.empty()) {
        p.rc = set_error(h, MEMCACHED_NO_SERVERS, "no servers defined");
        return p;
    }
    p.server = h.server_for(group.empty() ? key : group);
    return p;
}

/// Records the outcome of a request to server `i`: a failure `ec`, or the code `ok_rc`.
inline memcached_return_t finish(Handle& h, std::size_t i, std::error_code ec,
                                 memcached_return_t ok_rc) {
    ServerEntry& s = *h.servers[i];
    if (ec) {
        memcached_return_t rc = to_return(ec);
        // The client refuses at once while it waits to retry a server that failed: what
        // libmemcached calls a server disabled until its retry timeout.
        if (ec == folsom::errc::not_connected && s.last_failed)
            rc = MEMCACHED_SERVER_TEMPORARILY_DISABLED;
        return set_server_error(h, s, rc, ec.message());
    }
    s.last_rc = ok_rc;
    s.last_message.clear();
    s.last_failed = false;
    // An answer that is not an error (NOT FOUND, NOT STORED, DATA EXISTS, ...) is returned but
    // not recorded: libmemcached's last error stays SUCCESS for those.
    set_success(h);
    return ok_rc;
}

/// A libmemcached expiration as folsom's Expiry: memcached's convention (seconds up to 30 days,
/// else an absolute Unix time; negative: already expired), passed through unchanged, as
/// libmemcached sends it. One past 2038-01-19 fails with MEMCACHED_INVALID_ARGUMENTS.
inline Expiry to_ttl(time_t expiration) {
    return Expiry::from_exptime(static_cast<std::int64_t>(expiration));
}

/// MEMCACHED_BEHAVIOR_NOREPLY, as libmemcached keeps it (flags.reply off), and not overridden
/// by --QUIET-WRITES: writes go quiet (ascii `noreply`, binary SETQ/ADDQ/DELETEQ/INCRQ..., meta
/// `q`) and answer SUCCESS without their outcome, as libmemcached's do. Over ascii the call
/// returns once the write is written; over binary and meta once the quiet run's closing NOOP
/// (`mn`) is answered (folsom's core has no write that waits for nothing), where libmemcached
/// returns after the write.
inline bool blind_writes(const Handle& h) {
    return !h.root->flags.reply && !h.folsom.quiet_writes;
}

/// Sends the writes MEMCACHED_BEHAVIOR_BUFFER_REQUESTS held back and waits for their replies;
/// the first failure, or MEMCACHED_SUCCESS. Every call that is not such a write sends them
/// first, as libmemcached's do.
memcached_return_t flush_buffered(Handle& h);

inline std::string_view view(const char* p, std::size_t n) {
    return p ? std::string_view(p, n) : std::string_view{};
}

}  // namespace folsom::compat
