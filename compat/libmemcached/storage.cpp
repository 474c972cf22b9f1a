// Writes: set/add/replace/append/prepend/cas (and *_by_key), delete, touch, exist,
// increment/decrement (with an initial value, by key).
#include "request.hpp"

using namespace folsom::compat;

namespace {

memcached_return_t store(memcached_st* ptr, folsom::StoreMode mode, const char* group_key,
                         size_t group_key_length, const char* key, size_t key_length,
                         const char* value, size_t value_length, time_t expiration, uint32_t flags,
                         uint64_t cas) {
    const Prepared p = prepare(ptr, view(group_key, group_key_length), view(key, key_length));
    if (p.rc != MEMCACHED_SUCCESS) return p.rc;
    if (!value && value_length)
        return set_error(*p.h, MEMCACHED_INVALID_ARGUMENTS, "value is NULL");
    Handle& h = *p.h;
    const std::string_view k = view(key, key_length);
    std::string_view data = view(value, value_length);
    std::string encrypted;
    if (h.cipher) {
        // memcached_set_encoding_key: the value goes encrypted; appending to or prepending to
        // a ciphertext would corrupt it, so libmemcached refuses those.
        if (mode == folsom::StoreMode::append || mode == folsom::StoreMode::prepend)
            return set_error(h, MEMCACHED_NOT_SUPPORTED,
                             "Operation not allowed while encyrption is enabled");
        if (!encrypt_value(*h.cipher, data, encrypted))
            return set_error(h, MEMCACHED_FAILURE, "hashkit_encrypt() failed");
        data = encrypted;
    }
    const bool noreply = blind_writes(h);
    // libmemcached holds back only plain sets; any other request sends them first. Under
    // NOREPLY its ascii path answers SUCCESS before it looks at the buffering, its binary path
    // BUFFERED.
    if (ptr->flags.buffer_requests && mode == folsom::StoreMode::set) {
        h.buffered.push_back(BufferedStore{p.server, mode, std::string(k), std::string(data),
                                           expiration, flags, cas});
        set_success(h);
        return noreply && !ptr->flags.binary_protocol ? MEMCACHED_SUCCESS : MEMCACHED_BUFFERED;
    }
    if (const memcached_return_t rc = flush_buffered(h); rc != MEMCACHED_SUCCESS) return rc;
    folsom::Client& c = h.client(p.server);
    // --QUIET-WRITES: sent quiet (meta q, binary SETQ...), and still its true outcome.
    // NOREPLY: sent quiet too, and SUCCESS whatever the server made of it (below).
    auto [ec, status] = run<folsom::Status>(h, [&](auto handler) {
        if (h.folsom.quiet_writes || noreply)
            c.quiet().store(mode, k, folsom::Bytes(data), to_ttl(expiration),
                            folsom::StoreOptions{flags, cas}, std::move(handler));
        else
            c.store(mode, k, folsom::Bytes(data), to_ttl(expiration),
                    folsom::StoreOptions{flags, cas}, std::move(handler));
    });
    if (noreply) return finish(h, p.server, ec, MEMCACHED_SUCCESS);
    memcached_return_t rc = ec ? MEMCACHED_SUCCESS : to_return(status);
    // The binary protocol tells why a store was refused, and libmemcached passes it on: an
    // add finds the key there, a replace finds it missing.
    if (rc == MEMCACHED_NOTSTORED && h.binary_wire()) {
        if (mode == folsom::StoreMode::add) rc = MEMCACHED_DATA_EXISTS;
        if (mode == folsom::StoreMode::replace) rc = MEMCACHED_NOTFOUND;
    }
    return finish(h, p.server, ec, rc);
}

memcached_return_t arith(memcached_st* ptr, bool incr, const char* group_key,
                         size_t group_key_length, const char* key, size_t key_length,
                         uint64_t offset, const uint64_t* initial, time_t expiration,
                         uint64_t* value) {
    // Counters are plain text on the server: libmemcached refuses them on an encrypting
    // handle, before it looks at the key (its two messages spelled as it spells them).
    if (const Handle* eh = handle_of(ptr); eh && eh->cipher)
        return set_error(*handle_of(ptr), MEMCACHED_NOT_SUPPORTED,
                         initial ? "Operation not allowed while encryption is enabled"
                                 : "Operation not allowed while encyrption is enabled");
    const Prepared p = prepare(ptr, view(group_key, group_key_length), view(key, key_length));
    if (p.rc != MEMCACHED_SUCCESS) return p.rc;
    Handle& h = *p.h;
    if (initial && !ptr->flags.binary_protocol && !h.folsom.meta) {
        // The text protocol cannot create a counter; libmemcached refuses before sending.
        if (value) *value = UINT64_MAX;
        return set_error(h, MEMCACHED_INVALID_ARGUMENTS,
                         "an initial value needs the binary protocol");
    }
    if (const memcached_return_t frc = flush_buffered(h); frc != MEMCACHED_SUCCESS) return frc;
    folsom::Client& c = h.client(p.server);
    const std::string_view k = view(key, key_length);
    // MEMCACHED_EXPIRATION_NOT_ADD: never create the counter, which is a plain incr/decr.
    if (initial && static_cast<std::uint32_t>(expiration) == MEMCACHED_EXPIRATION_NOT_ADD)
        initial = nullptr;
    if (blind_writes(h)) {
        // NOREPLY: libmemcached sends `incr ... noreply` (binary INCREMENTQ) and answers
        // SUCCESS with the value UINT64_MAX. A counter with an initial value has no quiet form
        // in folsom's core: it goes acknowledged, and is answered the same way.
        std::error_code ec;
        if (initial) {
            ec = run<std::optional<std::uint64_t>>(h, [&](auto handler) {
                     if (incr)
                         c.incr(k, offset, *initial, to_ttl(expiration), std::move(handler));
                     else
                         c.decr(k, offset, *initial, to_ttl(expiration), std::move(handler));
                 }).first;
        } else {
            ec = run<folsom::Status>(h, [&](auto handler) {
                     if (incr)
                         c.quiet().incr(k, offset, std::move(handler));
                     else
                         c.quiet().decr(k, offset, std::move(handler));
                 }).first;
        }
        if (value) *value = UINT64_MAX;
        return finish(h, p.server, ec, MEMCACHED_SUCCESS);
    }
    auto [ec, out] = run<std::optional<std::uint64_t>>(h, [&](auto handler) {
        if (initial && incr)
            c.incr(k, offset, *initial, to_ttl(expiration), std::move(handler));
        else if (initial)
            c.decr(k, offset, *initial, to_ttl(expiration), std::move(handler));
        else if (incr)
            c.incr(k, offset, std::move(handler));
        else
            c.decr(k, offset, std::move(handler));
    });
    if (value) *value = out.value_or(0);
    return finish(h, p.server, ec, out ? MEMCACHED_SUCCESS : MEMCACHED_NOTFOUND);
}

}  // namespace

namespace folsom::compat {

memcached_return_t flush_buffered(Handle& h) {
    if (h.buffered.empty()) return MEMCACHED_SUCCESS;
    std::vector<BufferedStore> items;
    items.swap(h.buffered);
    std::vector<std::size_t> which(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
        which[i] = i;
        h.client(items[i].server);
    }
    // All at once, pipelined per connection, in the order they were made.
    auto replies = run_each<Status>(h, which, [&](std::size_t i, auto handler) {
        BufferedStore& b = items[i];
        Client& c = h.client(b.server);
        if (h.folsom.quiet_writes || blind_writes(h))
            c.quiet().store(b.mode, b.key, Bytes(std::move(b.value)), to_ttl(b.expiration),
                            StoreOptions{b.flags, b.cas}, std::move(handler));
        else
            c.store(b.mode, b.key, Bytes(std::move(b.value)), to_ttl(b.expiration),
                    StoreOptions{b.flags, b.cas}, std::move(handler));
    });
    memcached_return_t out = MEMCACHED_SUCCESS;
    for (std::size_t i = 0; i < replies.size(); ++i) {
        const memcached_return_t rc =
            finish(h, items[i].server, replies[i].first, MEMCACHED_SUCCESS);
        if (rc != MEMCACHED_SUCCESS && out == MEMCACHED_SUCCESS) out = rc;
    }
    return out;
}

}  // namespace folsom::compat

#define FOLSOM_STORE(name, mode)                                                                   \
    memcached_return_t memcached_##name(memcached_st* ptr, const char* key, size_t key_length,     \
                                        const char* value, size_t value_length, time_t expiration, \
                                        uint32_t flags) {                                          \
        return store(ptr, folsom::StoreMode::mode, nullptr, 0, key, key_length, value,             \
                     value_length, expiration, flags, 0);                                          \
    }                                                                                              \
    memcached_return_t memcached_##name##_by_key(                                                  \
        memcached_st* ptr, const char* group_key, size_t group_key_length, const char* key,        \
        size_t key_length, const char* value, size_t value_length, time_t expiration,              \
        uint32_t flags) {                                                                          \
        return store(ptr, folsom::StoreMode::mode, group_key, group_key_length, key, key_length,   \
                     value, value_length, expiration, flags, 0);                                   \
    }
FOLSOM_STORE(set, set)
FOLSOM_STORE(add, add)
FOLSOM_STORE(replace, replace)
FOLSOM_STORE(append, append)
FOLSOM_STORE(prepend, prepend)
#undef FOLSOM_STORE

memcached_return_t memcached_cas(memcached_st* ptr, const char* key, size_t key_length,
                                 const char* value, size_t value_length, time_t expiration,
                                 uint32_t flags, uint64_t cas) {
    return store(ptr, folsom::StoreMode::cas, nullptr, 0, key, key_length, value, value_length,
                 expiration, flags, cas);
}
memcached_return_t memcached_cas_by_key(memcached_st* ptr, const char* group_key,
                                        size_t group_key_length, const char* key, size_t key_length,
                                        const char* value, size_t value_length, time_t expiration,
                                        uint32_t flags, uint64_t cas) {
    return store(ptr, folsom::StoreMode::cas, group_key, group_key_length, key, key_length, value,
                 value_length, expiration, flags, cas);
}

memcached_return_t memcached_delete_by_key(memcached_st* ptr, const char* group_key,
                                           size_t group_key_length, const char* key,
                                           size_t key_length, time_t expiration) {
    const Prepared p = prepare(ptr, view(group_key, group_key_length), view(key, key_length));
    if (p.rc != MEMCACHED_SUCCESS) return p.rc;
    Handle& h = *p.h;
    if (expiration != 0)
        return set_error(h, MEMCACHED_INVALID_ARGUMENTS,
                         "memcached no longer supports a delete with an expiration");
    const bool noreply = blind_writes(h);
    // A delete trigger needs the server's answer.
    if (ptr->delete_trigger && noreply)
        return set_error(h, MEMCACHED_INVALID_ARGUMENTS,
                         "Delete triggers cannot be used if MEMCACHED_BEHAVIOR_NOREPLY is set");
    if (const memcached_return_t frc = flush_buffered(h); frc != MEMCACHED_SUCCESS) return frc;
    folsom::Client& c = h.client(p.server);
    const std::string_view k = view(key, key_length);
    // NOREPLY: `delete ... noreply` (binary DELETEQ), SUCCESS whether the key was there or not.
    auto [ec, status] = run<folsom::Status>(h, [&](auto handler) {
        if (noreply)
            c.quiet().del(k, std::move(handler));
        else
            c.del(k, std::move(handler));
    });
    const memcached_return_t rc =
        finish(h, p.server, ec, ec || noreply ? MEMCACHED_SUCCESS : to_return(status));
    if (rc == MEMCACHED_SUCCESS && ptr->delete_trigger) ptr->delete_trigger(ptr, key, key_length);
    return rc;
}
memcached_return_t memcached_delete(memcached_st* ptr, const char* key, size_t key_length,
                                    time_t expiration) {
    return memcached_delete_by_key(ptr, nullptr, 0, key, key_length, expiration);
}

memcached_return_t memcached_touch_by_key(memcached_st* ptr, const char* group_key,
                                          size_t group_key_length, const char* key,
                                          size_t key_length, time_t expiration) {
    const Prepared p = prepare(ptr, view(group_key, group_key_length), view(key, key_length));
    if (p.rc != MEMCACHED_SUCCESS) return p.rc;
    Handle& h = *p.h;
    if (const memcached_return_t frc = flush_buffered(h); frc != MEMCACHED_SUCCESS) return frc;
    folsom::Client& c = h.client(p.server);
    const std::string_view k = view(key, key_length);
    auto [ec, status] = run<folsom::Status>(
        h, [&](auto handler) { c.touch(k, to_ttl(expiration), std::move(handler)); });
    return finish(h, p.server, ec, ec ? MEMCACHED_SUCCESS : to_return(status));
}
memcached_return_t memcached_touch(memcached_st* ptr, const char* key, size_t key_length,
                                   time_t expiration) {
    return memcached_touch_by_key(ptr, nullptr, 0, key, key_length, expiration);
}

memcached_return_t memcached_exist_by_key(memcached_st* memc, const char* group_key,
                                          size_t group_key_length, const char* key,
                                          size_t key_length) {
    const Prepared p = prepare(memc, view(group_key, group_key_length), view(key, key_length));
    if (p.rc != MEMCACHED_SUCCESS) return p.rc;
    Handle& h = *p.h;
    if (const memcached_return_t frc = flush_buffered(h); frc != MEMCACHED_SUCCESS) return frc;
    folsom::Client& c = h.client(p.server);
    const std::string_view k = view(key, key_length);
    // An add of an item that has already expired: refused when the key exists, and harmless
    // when it does not (the item it stores is gone at once). No value crosses the network.
    auto [ec, status] = run<folsom::Status>(h, [&](auto handler) {
        c.store(folsom::StoreMode::add, k, folsom::Bytes(std::string_view{}), folsom::Ttl(-1),
                folsom::StoreOptions{}, std::move(handler));
    });
    memcached_return_t rc = MEMCACHED_NOTFOUND;
    if (!ec && (status == folsom::Status::not_stored || status == folsom::Status::exists))
        rc = MEMCACHED_SUCCESS;
    else if (!ec && status != folsom::Status::stored)
        rc = to_return(status);
    return finish(h, p.server, ec, rc);
}
memcached_return_t memcached_exist(memcached_st* memc, const char* key, size_t key_length) {
    return memcached_exist_by_key(memc, nullptr, 0, key, key_length);
}

memcached_return_t memcached_increment(memcached_st* ptr, const char* key, size_t key_length,
                                       uint32_t offset, uint64_t* value) {
    return arith(ptr, true, nullptr, 0, key, key_length, offset, nullptr, 0, value);
}
memcached_return_t memcached_decrement(memcached_st* ptr, const char* key, size_t key_length,
                                       uint32_t offset, uint64_t* value) {
    return arith(ptr, false, nullptr, 0, key, key_length, offset, nullptr, 0, value);
}
memcached_return_t memcached_increment_by_key(memcached_st* ptr, const char* group_key,
                                              size_t group_key_length, const char* key,
                                              size_t key_length, uint64_t offset, uint64_t* value) {
    return arith(ptr, true, group_key, group_key_length, key, key_length, offset, nullptr, 0,
                 value);
}
memcached_return_t memcached_decrement_by_key(memcached_st* ptr, const char* group_key,
                                              size_t group_key_length, const char* key,
                                              size_t key_length, uint64_t offset, uint64_t* value) {
    return arith(ptr, false, group_key, group_key_length, key, key_length, offset, nullptr, 0,
                 value);
}
memcached_return_t memcached_increment_with_initial(memcached_st* ptr, const char* key,
                                                    size_t key_length, uint64_t offset,
                                                    uint64_t initial, time_t expiration,
                                                    uint64_t* value) {
    return arith(ptr, true, nullptr, 0, key, key_length, offset, &initial, expiration, value);
}
memcached_return_t memcached_decrement_with_initial(memcached_st* ptr, const char* key,
                                                    size_t key_length, uint64_t offset,
                                                    uint64_t initial, time_t expiration,
                                                    uint64_t* value) {
    return arith(ptr, false, nullptr, 0, key, key_length, offset, &initial, expiration, value);
}
memcached_return_t memcached_increment_with_initial_by_key(memcached_st* ptr, const char* group_key,
                                                           size_t group_key_length, const char* key,
                                                           size_t key_length, uint64_t offset,
                                                           uint64_t initial, time_t expiration,
                                                           uint64_t* value) {
    return arith(ptr, true, group_key, group_key_length, key, key_length, offset, &initial,
                 expiration, value);
}
memcached_return_t memcached_decrement_with_initial_by_key(memcached_st* ptr, const char* group_key,
                                                           size_t group_key_length, const char* key,
                                                           size_t key_length, uint64_t offset,
                                                           uint64_t initial, time_t expiration,
                                                           uint64_t* value) {
    return arith(ptr, false, group_key, group_key_length, key, key_length, offset, &initial,
                 expiration, value);
}
