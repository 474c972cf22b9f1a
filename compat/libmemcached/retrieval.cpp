// Reads: memcached_get (and _by_key), memcached_mget (and _by_key, _execute), and the
// memcached_fetch* calls that hand out what an mget found.
//
// An mget waits for every server's reply before it returns (the servers are asked at once,
// on the handle's loop); the fetch calls then hand the hits out one by one. libmemcached
// reads the replies while the caller fetches; the results and their codes are the same.
#include "folsom/protocol/key.hpp"

#include "request.hpp"

#include <cstring>

using namespace folsom::compat;

namespace {

/// A copy of `v` from the handle's allocator (the user's, when installed), NUL-terminated as
/// libmemcached's are; null for an empty value, as libmemcached returns it.
char* copy_value(memcached_st* ptr, std::string_view v, memcached_return_t& rc) {
    if (v.empty()) return nullptr;
    auto* out = static_cast<char*>(lm_malloc(ptr, v.size() + 1));
    if (!out) {
        rc = MEMCACHED_MEMORY_ALLOCATION_FAILURE;
        return nullptr;
    }
    std::memcpy(out, v.data(), v.size());
    out[v.size()] = '\0';
    return out;
}

// memcached_set_encoding_key: a value read over ascii is decrypted (an empty one stays
// empty); false when it is not one this key encrypted. Over binary libmemcached 1.1.4 hands
// the stored bytes back as they are (only its text-protocol reply path decrypts), and so does
// the drop-in: its callers see what they saw on Debian's library.
bool decrypt_in_place(const Handle& h, folsom::Value& v) {
    if (!h.cipher || v.data.empty() || h.binary_wire()) return true;
    std::string plain;
    if (!folsom::compat::decrypt_value(*h.cipher, v.data, plain)) return false;
    v.data = std::move(plain);
    return true;
}

// As decrypt_in_place, for a value viewed where it was read: `data` then views `plain`.
bool decrypt_view(const Handle& h, std::string_view& data, std::string& plain) {
    if (!h.cipher || data.empty() || h.binary_wire()) return true;
    if (!folsom::compat::decrypt_value(*h.cipher, data, plain)) return false;
    data = plain;
    return true;
}

// An mget of one key (php-memcached's get is one, with memcached_fetch_result): a single get
// on the core's zero-copy path, its value copied into the handle's buffer for the fetch,
// instead of the multi-get machinery (key plan, collector, result vectors) for one key.
memcached_return_t mget_one(Handle& h, std::size_t s, std::string_view key) {
    folsom::Client& c = h.client(s);
    std::string& buffer = h.single_value;
    std::uint32_t flags = 0;
    std::uint64_t cas = 0;
    auto [ec, hit] = run<bool>(h, [&](auto handler) {
        c.get_view(key, [&, handler](std::error_code e, const folsom::ValueView* v) {
            if (v) {
                buffer.assign(v->data);
                flags = v->flags;
                cas = v->cas;
            }
            handler(e, v != nullptr);
        });
    });
    if (ec) {
        const memcached_return_t rc = finish(h, s, ec, MEMCACHED_SUCCESS);
        // As for several keys (below): a reply that cannot be read is a miss, not a failure.
        return rc == MEMCACHED_PROTOCOL_ERROR ? set_success(h) : rc;
    }
    finish(h, s, {}, MEMCACHED_SUCCESS);
    if (hit) {
        h.pending.push_back(PendingResult{0, static_cast<std::uint32_t>(key.size()),
                                          folsom::ValueRef{buffer, flags, cas}});
        h.fetched_keys.assign(key);
    }
    return set_success(h);
}

memcached_return_t mget(memcached_st* ptr, std::string_view group, const char* const* keys,
                        const size_t* key_length, size_t number_of_keys) {
    Handle* h = handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    h->clear_pending();
    h->query_id++;
    ptr->result.count = 0;
    if (h->servers.empty()) return set_error(*h, MEMCACHED_NO_SERVERS, "no servers defined");
    if (number_of_keys == 0) return set_error(*h, MEMCACHED_INVALID_ARGUMENTS, "no keys given");
    if (!keys || !key_length) return set_error(*h, MEMCACHED_BAD_KEY_PROVIDED, "no keys given");
    if (!group.empty())
        if (const memcached_return_t rc = check_key(*h, group); rc != MEMCACHED_SUCCESS) return rc;
    // Every key is checked before anything is sent.
    auto& per_server = h->mget_keys;
    per_server.resize(h->servers.size());
    for (auto& ks : per_server)
        ks.clear();
    for (size_t i = 0; i < number_of_keys; ++i) {
        const std::string_view k = view(keys[i], key_length[i]);
        if (k.empty() || k.size() + h->prefix.size() >= MEMCACHED_MAX_KEY ||
            ptr->flags.verify_key) {
            if (const memcached_return_t rc = check_key(*h, k); rc != MEMCACHED_SUCCESS) return rc;
        } else if (!ptr->flags.binary_protocol && folsom::protocol::validate_key(k)) {
            // Over ascii libmemcached (without VERIFY_KEY) sends such a key as it is, and the
            // server answers nothing for it: pylibmc's get_multi relies on that. The drop-in
            // sends nothing for it, and it is a miss all the same. (Over binary it is sent.)
            continue;
        }
        // With a group key every key goes to the group's server, placed once after the keys
        // are checked, as libmemcached does (under RANDOM each placement is a new draw).
        per_server[group.empty() ? h->server_for(k) : 0].push_back(k);
    }
    if (!group.empty())
        if (const std::size_t g = h->server_for(group); g != 0)
            std::swap(per_server[0], per_server[g]);
    if (const memcached_return_t frc = flush_buffered(*h); frc != MEMCACHED_SUCCESS) return frc;
    auto& which = h->mget_servers;
    which.clear();
    for (std::size_t s = 0; s < per_server.size(); ++s)
        if (!per_server[s].empty()) which.push_back(s);
    for (const std::size_t s : which)
        h->client(s);
    const bool with_cas = ptr->flags.support_cas;
    if (which.size() == 1 && per_server[which[0]].size() == 1 && !with_cas && !h->folsom.routed())
        return mget_one(*h, which[0], per_server[which[0]][0]);
    auto replies = run_each<folsom::MultiGetResult>(*h, which, [&](std::size_t s, auto handler) {
        folsom::Client& c = h->client(s);  // made above (or the routed one)
        if (with_cas)
            c.gets_multi(std::span<const std::string_view>(per_server[s]), std::move(handler));
        else
            c.get_multi(std::span<const std::string_view>(per_server[s]), std::move(handler));
    });
    std::size_t failed = 0;
    memcached_return_t first_failure = MEMCACHED_SUCCESS;
    for (std::size_t r = 0; r < replies.size(); ++r) {
        const std::size_t s = which[r];
        auto& [ec, result] = replies[r];
        std::error_code server_ec = ec;
        if (!server_ec && !result.errors.empty())
            for (const auto& e : result.errors)
                if (e) server_ec = e;
        if (server_ec) {
            const memcached_return_t rc = finish(*h, s, server_ec, MEMCACHED_SUCCESS);
            // libmemcached's mget only sends: a reply it cannot read is met by the fetch, which
            // ends without the keys (NOT FOUND / END). Here the mget has read the replies
            // already; a protocol error is therefore no failure of the mget, only a miss.
            if (rc != MEMCACHED_PROTOCOL_ERROR) {
                ++failed;
                if (first_failure == MEMCACHED_SUCCESS) first_failure = rc;
            }
        } else {
            finish(*h, s, {}, MEMCACHED_SUCCESS);
        }
        // The hits are handed out from the reply itself (its values stay in its buffer); the
        // caller's keys may go once the mget returns, so theirs are copied.
        const auto& ks = per_server[s];
        for (std::size_t i = 0; i < ks.size() && i < result.values.size(); ++i)
            if (result.values[i]) {
                h->pending.push_back(
                    PendingResult{static_cast<std::uint32_t>(h->fetched_keys.size()),
                                  static_cast<std::uint32_t>(ks[i].size()), *result.values[i]});
                h->fetched_keys.append(ks[i]);
            }
        if (!result.values.empty()) h->fetched.push_back(std::move(result));
    }
    if (failed == 0) return set_success(*h);
    if (failed == which.size()) return first_failure;
    return set_error(*h, MEMCACHED_SOME_ERRORS, "some servers failed to answer the mget");
}

}  // namespace

memcached_return_t memcached_mget(memcached_st* ptr, const char* const* keys,
                                  const size_t* key_length, size_t number_of_keys) {
    return mget(ptr, {}, keys, key_length, number_of_keys);
}

memcached_return_t memcached_mget_by_key(memcached_st* ptr, const char* group_key,
                                         size_t group_key_length, const char* const* keys,
                                         const size_t* key_length, const size_t number_of_keys) {
    return mget(ptr, view(group_key, group_key_length), keys, key_length, number_of_keys);
}

memcached_result_st* memcached_fetch_result(memcached_st* ptr, memcached_result_st* result,
                                            memcached_return_t* error) {
    memcached_return_t unused;
    if (!error) error = &unused;
    Handle* h = handle_of(ptr);
    if (!h) {
        *error = MEMCACHED_INVALID_ARGUMENTS;
        return nullptr;
    }
    if (h->next_pending == h->pending.size()) {
        // As libmemcached: END when this result struct received something since the mget (its
        // count), NOT FOUND when it did not; either way the count starts again.
        *error = result && result->count > 0 ? MEMCACHED_END : MEMCACHED_NOTFOUND;
        if (result) result->count = 0;
        return nullptr;
    }
    const bool ours = result == nullptr;
    if (ours && !(result = memcached_result_create(ptr, nullptr))) {
        *error = MEMCACHED_MEMORY_ALLOCATION_FAILURE;
        return nullptr;
    }
    const PendingResult& next = h->pending[h->next_pending++];
    const std::string_view key(h->fetched_keys.data() + next.key_offset, next.key_size);
    std::string_view data = next.value.data;
    std::string plain;
    if (!decrypt_view(*h, data, plain)) {
        *error = set_error(*h, MEMCACHED_FAILURE, "hashkit_decrypt() failed");
        if (ours) memcached_result_free(result);
        return nullptr;
    }
    *error = fill_result(result, key, data, next.value.flags, next.value.cas);
    if (*error != MEMCACHED_SUCCESS) {
        if (ours) memcached_result_free(result);
        return nullptr;
    }
    return result;
}

char* memcached_fetch(memcached_st* ptr, char* key, size_t* key_length, size_t* value_length,
                      uint32_t* flags, memcached_return_t* error) {
    memcached_return_t unused;
    if (!error) error = &unused;
    size_t unused_length;
    if (!value_length) value_length = &unused_length;
    *value_length = 0;
    if (key_length) *key_length = 0;
    if (flags) *flags = 0;
    if (!memcached_fetch_result(ptr, &ptr->result, error)) return nullptr;
    const memcached_result_st& r = ptr->result;
    if (key) {
        // As libmemcached: strncpy, so that a binary key is cut at its first NUL (the rest of
        // its length zeroes); memcached_fetch_result has the whole key.
        std::strncpy(key, r.item_key, r.key_length);
        key[r.key_length] = '\0';
    }
    if (key_length) *key_length = r.key_length;
    if (flags) *flags = r.item_flags;
    *value_length = memcached_result_length(&r);
    return copy_value(ptr, std::string_view(r.value.string ? r.value.string : "", *value_length),
                      *error);
}

memcached_return_t memcached_fetch_execute(memcached_st* ptr, memcached_execute_fn* callback,
                                           void* context, uint32_t number_of_callbacks) {
    Handle* h = handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    memcached_return_t rc;
    while (memcached_fetch_result(ptr, &ptr->result, &rc)) {
        for (uint32_t i = 0; i < number_of_callbacks; ++i) {
            if (!callback[i]) continue;
            if (memcached_failed(callback[i](ptr, &ptr->result, context))) break;
        }
    }
    return rc == MEMCACHED_END ? MEMCACHED_SUCCESS : rc;  // NOT FOUND when nothing was fetched
}

memcached_return_t memcached_mget_execute_by_key(memcached_st* ptr, const char* group_key,
                                                 size_t group_key_length, const char* const* keys,
                                                 const size_t* key_length, size_t number_of_keys,
                                                 memcached_execute_fn* callback, void* context,
                                                 const uint32_t number_of_callbacks) {
    Handle* h = handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    if (!ptr->flags.binary_protocol)
        return set_error(*h, MEMCACHED_NOT_SUPPORTED,
                         "memcached_mget_execute() needs the binary protocol");
    const memcached_return_t rc =
        mget(ptr, view(group_key, group_key_length), keys, key_length, number_of_keys);
    if (memcached_failed(rc) && rc != MEMCACHED_SOME_ERRORS) return rc;
    const memcached_return_t done =
        memcached_fetch_execute(ptr, callback, context, number_of_callbacks);
    return done == MEMCACHED_SUCCESS ? rc : done;
}

memcached_return_t memcached_mget_execute(memcached_st* ptr, const char* const* keys,
                                          const size_t* key_length, const size_t number_of_keys,
                                          memcached_execute_fn* callback, void* context,
                                          const uint32_t number_of_callbacks) {
    return memcached_mget_execute_by_key(ptr, nullptr, 0, keys, key_length, number_of_keys,
                                         callback, context, number_of_callbacks);
}

char* memcached_get_by_key(memcached_st* ptr, const char* group_key, size_t group_key_length,
                           const char* key, size_t key_length, size_t* value_length,
                           uint32_t* flags, memcached_return_t* error) {
    memcached_return_t unused;
    if (!error) error = &unused;
    size_t unused_length;
    if (!value_length) value_length = &unused_length;
    *value_length = 0;
    const Prepared p = prepare(ptr, view(group_key, group_key_length), view(key, key_length));
    if (p.rc != MEMCACHED_SUCCESS) {
        *error = p.rc;
        return nullptr;
    }
    Handle& h = *p.h;
    h.clear_pending();
    if (const memcached_return_t frc = flush_buffered(h); frc != MEMCACHED_SUCCESS) {
        *error = frc;
        return nullptr;
    }
    folsom::Client& c = h.client(p.server);
    const std::string_view k = view(key, key_length);
    memcached_result_st* const r = &ptr->result;
    std::error_code ec;
    // The value: in `value`, or already in ptr->result (`in_result`).
    std::optional<folsom::Value> value;
    bool in_result = false;
    if (!ptr->flags.support_cas && !h.cipher) {
        // The usual get: the value goes from the connection's read buffer straight into
        // ptr->result (where libmemcached's get leaves it too), with no copy of its own.
        memcached_return_t fill_rc = MEMCACHED_SUCCESS;
        auto [view_ec, hit] = run<bool>(h, [&](auto handler) {
            c.get_view(k, [&, handler](std::error_code e, const folsom::ValueView* v) {
                if (v) fill_rc = fill_result(r, k, v->data, v->flags, v->cas);
                handler(e, v != nullptr);
            });
        });
        ec = view_ec;
        in_result = hit;
        if (!ec && hit && fill_rc != MEMCACHED_SUCCESS) {
            *error = set_error(h, fill_rc, "out of memory for the value");
            return nullptr;
        }
    } else {
        auto [get_ec, got] = run<std::optional<folsom::Value>>(h, [&](auto handler) {
            if (ptr->flags.support_cas)
                c.gets(k, std::move(handler));
            else
                c.get(k, std::move(handler));
        });
        ec = get_ec;
        value = std::move(got);
    }
    if (ec) {
        *error = finish(h, p.server, ec, MEMCACHED_SUCCESS);
        // libmemcached's get is an mget and a fetch: a reply line it cannot read ends the fetch
        // with no value, which memcached_get reports as NOTFOUND (the read failure stays the
        // last error). php-memcached and pylibmc then see a miss, not an error.
        if (*error == MEMCACHED_PROTOCOL_ERROR) *error = MEMCACHED_NOTFOUND;
        return nullptr;
    }
    if (value && !decrypt_in_place(h, *value)) {
        finish(h, p.server, {}, MEMCACHED_SUCCESS);
        *error = set_error(h, MEMCACHED_FAILURE, "hashkit_decrypt() failed");
        return nullptr;
    }
    if (!value && !in_result && ptr->get_key_failure) {
        // The read-through trigger: the callback may supply the value (and have it stored).
        memcached_result_reset(r);
        const memcached_return_t trc = ptr->get_key_failure(ptr, key, key_length, r);
        if (trc == MEMCACHED_SUCCESS || trc == MEMCACHED_BUFFERED) {
            const size_t len = memcached_result_length(r);
            if (trc == MEMCACHED_BUFFERED)
                memcached_set(ptr, key, key_length, memcached_result_value(r), len,
                              r->item_expiration, r->item_flags);
            value = folsom::Value{
                std::string(memcached_result_value(r) ? memcached_result_value(r) : "", len),
                r->item_flags, 0};
        }
    }
    if (!value && !in_result) {
        if (flags) *flags = 0;
        *error = finish(h, p.server, {}, MEMCACHED_NOTFOUND);
        return nullptr;
    }
    if (value) fill_result(r, k, *value);
    *error = finish(h, p.server, {}, MEMCACHED_SUCCESS);
    *value_length = memcached_result_length(r);
    if (flags) *flags = r->item_flags;
    return copy_value(ptr, std::string_view(r->value.string ? r->value.string : "", *value_length),
                      *error);
}

char* memcached_get(memcached_st* ptr, const char* key, size_t key_length, size_t* value_length,
                    uint32_t* flags, memcached_return_t* error) {
    return memcached_get_by_key(ptr, nullptr, 0, key, key_length, value_length, flags, error);
}
