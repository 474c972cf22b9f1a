// Calls on every server: flush, version, verbosity, quit, stats (and what is computed from
// them: memcached_stat_get_*, memcached_analyze), and memcached_dump.
#include "request.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

using namespace folsom::compat;

namespace {

std::vector<std::size_t> all_servers(Handle& h) {
    std::vector<std::size_t> v(h.servers.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = i;
        h.client(i);
    }
    return v;
}

/// Runs `start(client, handler)` on every server at once. Records each server's outcome and
/// returns the first failure (or success); `each(i, value)` sees every answer. An error that
/// `ignored(error)` accepts counts as an answer without a value.
template <class T, class Start, class Each, class Ignored = bool (*)(std::error_code)>
memcached_return_t on_every_server(
    Handle& h, Start&& start, Each&& each,
    Ignored&& ignored = [](std::error_code) { return false; }) {
    if (h.servers.empty()) return set_error(h, MEMCACHED_NO_SERVERS, "no servers defined");
    h.query_id++;
    if (const memcached_return_t frc = flush_buffered(h); frc != MEMCACHED_SUCCESS) return frc;
    const auto which = all_servers(h);
    auto replies = run_each<std::vector<folsom::NodeResult<T>>>(
        h, which, [&](std::size_t i, auto handler) { start(h.client(i), std::move(handler)); });
    memcached_return_t out = MEMCACHED_SUCCESS;
    for (std::size_t i = 0; i < replies.size(); ++i) {
        auto& [ec, nodes] = replies[i];
        std::error_code e = ec;
        if (!e && !nodes.empty()) e = nodes.front().error;
        if (e && ignored(e)) {
            finish(h, i, {}, MEMCACHED_SUCCESS);
            continue;
        }
        const memcached_return_t rc = finish(h, i, e, MEMCACHED_SUCCESS);
        if (rc != MEMCACHED_SUCCESS) {
            if (out == MEMCACHED_SUCCESS) out = rc;
            continue;
        }
        if (!nodes.empty()) each(i, nodes.front().value);
    }
    if (out != MEMCACHED_SUCCESS) h.last_rc = out;
    return out;
}

unsigned long long number(const std::string& v) {
    return std::strtoull(v.c_str(), nullptr, 10);
}

void fill_stat(memcached_stat_st& st, const folsom::StatList& list) {
    for (const auto& [name, value] : list) {
        if (name == "pid")
            st.pid = static_cast<pid_t>(number(value));
        else if (name == "uptime")
            st.uptime = static_cast<unsigned long>(number(value));
        else if (name == "time")
            st.time = static_cast<unsigned long>(number(value));
        else if (name == "version")
            std::snprintf(st.version, sizeof st.version, "%s", value.c_str());
        else if (name == "pointer_size")
            st.pointer_size = static_cast<unsigned long>(number(value));
        else if (name == "rusage_user" || name == "rusage_system") {
            char* end = nullptr;
            const unsigned long sec = std::strtoul(value.c_str(), &end, 10);
            unsigned long usec = 0;
            if (end && *end == '.') usec = std::strtoul(end + 1, nullptr, 10);
            if (name == "rusage_user") {
                st.rusage_user_seconds = sec;
                st.rusage_user_microseconds = usec;
            } else {
                st.rusage_system_seconds = sec;
                st.rusage_system_microseconds = usec;
            }
        } else if (name == "curr_items")
            st.curr_items = static_cast<unsigned long>(number(value));
        else if (name == "total_items")
            st.total_items = static_cast<unsigned long>(number(value));
        else if (name == "bytes")
            st.bytes = number(value);
        else if (name == "curr_connections")
            st.curr_connections = static_cast<unsigned long>(number(value));
        else if (name == "total_connections")
            st.total_connections = static_cast<unsigned long>(number(value));
        else if (name == "connection_structures")
            st.connection_structures = static_cast<unsigned long>(number(value));
        else if (name == "cmd_get")
            st.cmd_get = number(value);
        else if (name == "cmd_set")
            st.cmd_set = number(value);
        else if (name == "get_hits")
            st.get_hits = number(value);
        else if (name == "get_misses")
            st.get_misses = number(value);
        else if (name == "evictions")
            st.evictions = number(value);
        else if (name == "bytes_read")
            st.bytes_read = number(value);
        else if (name == "bytes_written")
            st.bytes_written = number(value);
        else if (name == "limit_maxbytes")
            st.limit_maxbytes = number(value);
        else if (name == "threads")
            st.threads = static_cast<unsigned long>(number(value));
    }
}

// The statistics memcached_stat_st holds, in libmemcached's order (memcached_stat_get_keys).
const char* const stat_keys[] = {
    "pid",
    "uptime",
    "time",
    "version",
    "pointer_size",
    "rusage_user",
    "rusage_system",
    "curr_items",
    "total_items",
    "bytes",
    "curr_connections",
    "total_connections",
    "connection_structures",
    "cmd_get",
    "cmd_set",
    "get_hits",
    "get_misses",
    "evictions",
    "bytes_read",
    "bytes_written",
    "limit_maxbytes",
    "threads",
};

}  // namespace

memcached_return_t memcached_flush(memcached_st* ptr, time_t expiration) {
    Handle* h = handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    std::optional<std::chrono::seconds> delay;
    if (expiration > 0) delay = std::chrono::seconds(expiration);
    // Over binary libmemcached reads each server's reply without looking at its status, so
    // only a server it could not send to fails the flush: an error status (the AUTH_ERROR of a
    // SASL server not logged in yet, which php-memcached's tests flush before they log in)
    // does not. Any failure makes the whole call SOME_ERRORS, the server's error staying the
    // last error.
    const bool binary = ptr->flags.binary_protocol;
    const memcached_return_t rc = on_every_server<folsom::Status>(
        *h, [&](folsom::Client& c, auto handler) { c.flush_all(delay, std::move(handler)); },
        [](std::size_t, const folsom::Status&) {},
        [binary](std::error_code e) {
            return binary && (e == folsom::errc::auth_failed || e == folsom::errc::server_error ||
                              e == folsom::errc::client_error);
        });
    if (rc == MEMCACHED_SUCCESS || rc == MEMCACHED_NO_SERVERS) return rc;
    return MEMCACHED_SOME_ERRORS;
}

memcached_return_t memcached_flush_buffers(memcached_st* mem) {
    // Sends what MEMCACHED_BEHAVIOR_BUFFER_REQUESTS held back (every other call has sent its
    // requests and read their replies before it returned).
    Handle* h = handle_of(mem);
    return h ? flush_buffered(*h) : MEMCACHED_INVALID_ARGUMENTS;
}

memcached_return_t memcached_version(memcached_st* ptr) {
    Handle* h = handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    return on_every_server<std::string>(
        *h, [&](folsom::Client& c, auto handler) { c.version(std::move(handler)); },
        [&](std::size_t i, const std::string& v) {
            ServerEntry& s = *h->servers[i];
            unsigned major = 0, minor = 0, micro = 0;
            if (std::sscanf(v.c_str(), "%u.%u.%u", &major, &minor, &micro) >= 1) {
                s.major = static_cast<std::uint8_t>(major);
                s.minor = static_cast<std::uint8_t>(minor);
                s.micro = static_cast<std::uint8_t>(micro);
            }
        });
}

memcached_return_t memcached_verbosity(memcached_st* ptr, uint32_t verbosity) {
    Handle* h = handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    // memcached (1.6) does not answer the binary VERBOSITY command until the next request,
    // and then with "unknown command": only the text protocol can set the level.
    if (ptr->flags.binary_protocol)
        return set_error(*h, MEMCACHED_NOT_SUPPORTED,
                         "memcached_verbosity needs the text protocol (memcached does not answer "
                         "the binary VERBOSITY command)");
    return on_every_server<folsom::Status>(
        *h, [&](folsom::Client& c, auto handler) { c.verbosity(verbosity, std::move(handler)); },
        [](std::size_t, const folsom::Status&) {});
}

void memcached_quit(memcached_st* ptr) {
    if (Handle* h = handle_of(ptr)) {
        flush_buffered(*h);
        h->disconnect();
    }
}

memcached_stat_st* memcached_stat(memcached_st* ptr, char* args, memcached_return_t* error) {
    memcached_return_t unused;
    if (!error) error = &unused;
    Handle* h = handle_of(ptr);
    if (!h) {
        *error = MEMCACHED_INVALID_ARGUMENTS;
        return nullptr;
    }
    if (h->servers.empty()) {
        *error = set_error(*h, MEMCACHED_NO_SERVERS, "no servers defined");
        return nullptr;
    }
    // One element per server, from the handle's allocator (libc's unless the caller installed
    // its own): pylibmc walks it with sizeof(memcached_stat_st) and free()s it.
    auto* stats = static_cast<memcached_stat_st*>(
        lm_calloc(ptr, h->servers.size(), sizeof(memcached_stat_st)));
    if (!stats) {
        *error = MEMCACHED_MEMORY_ALLOCATION_FAILURE;
        return nullptr;
    }
    for (std::size_t i = 0; i < h->servers.size(); ++i)
        stats[i].root = ptr;
    const std::string group = args ? args : "";
    const memcached_return_t rc = on_every_server<folsom::StatList>(
        *h, [&](folsom::Client& c, auto handler) { c.stats(group, std::move(handler)); },
        [&](std::size_t i, const folsom::StatList& list) { fill_stat(stats[i], list); });
    *error = rc == MEMCACHED_SUCCESS || h->servers.size() == 1 ? rc : MEMCACHED_SOME_ERRORS;
    return stats;
}

void memcached_stat_free(const memcached_st* ptr, memcached_stat_st* stat) {
    if (!stat) return;
    lm_free(ptr ? ptr : stat->root, stat);
}

memcached_return_t memcached_stat_servername(memcached_stat_st* memc_stat, char* args,
                                             const char* hostname, in_port_t port) {
    if (!memc_stat || !hostname) return MEMCACHED_INVALID_ARGUMENTS;
    memcached_st memc;
    if (!memcached_create(&memc)) return MEMCACHED_MEMORY_ALLOCATION_FAILURE;
    memcached_return_t rc = memcached_server_add(&memc, hostname, port);
    if (rc == MEMCACHED_SUCCESS) {
        Handle& h = *handle_of(&memc);
        const std::string group = args ? args : "";
        rc = on_every_server<folsom::StatList>(
            h, [&](folsom::Client& c, auto handler) { c.stats(group, std::move(handler)); },
            [&](std::size_t, const folsom::StatList& list) { fill_stat(*memc_stat, list); });
    }
    memcached_free(&memc);
    return rc;
}

char* memcached_stat_get_value(const memcached_st* ptr, memcached_stat_st* st, const char* key,
                               memcached_return_t* error) {
    memcached_return_t unused;
    if (!error) error = &unused;
    if (!st || !key) {
        *error = MEMCACHED_INVALID_ARGUMENTS;
        return nullptr;
    }
    const std::string_view k(key);
    char buf[64];
    if (k == "version") {
        std::snprintf(buf, sizeof buf, "%s", st->version);
    } else if (k == "pid") {
        std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(st->pid));
    } else if (k == "rusage_user") {
        std::snprintf(buf, sizeof buf, "%lu.%lu", st->rusage_user_seconds,
                      st->rusage_user_microseconds);
    } else if (k == "rusage_system") {
        std::snprintf(buf, sizeof buf, "%lu.%lu", st->rusage_system_seconds,
                      st->rusage_system_microseconds);
    } else {
#define FOLSOM_STAT(name, fmt)                         \
    if (k == #name) {                                  \
        std::snprintf(buf, sizeof buf, fmt, st->name); \
        goto found;                                    \
    }
        FOLSOM_STAT(uptime, "%lu")
        FOLSOM_STAT(time, "%lu")
        FOLSOM_STAT(pointer_size, "%lu")
        FOLSOM_STAT(curr_items, "%lu")
        FOLSOM_STAT(total_items, "%lu")
        FOLSOM_STAT(curr_connections, "%lu")
        FOLSOM_STAT(total_connections, "%lu")
        FOLSOM_STAT(connection_structures, "%lu")
        FOLSOM_STAT(threads, "%lu")
        FOLSOM_STAT(bytes, "%llu")
        FOLSOM_STAT(cmd_get, "%llu")
        FOLSOM_STAT(cmd_set, "%llu")
        FOLSOM_STAT(get_hits, "%llu")
        FOLSOM_STAT(get_misses, "%llu")
        FOLSOM_STAT(evictions, "%llu")
        FOLSOM_STAT(bytes_read, "%llu")
        FOLSOM_STAT(bytes_written, "%llu")
        FOLSOM_STAT(limit_maxbytes, "%llu")
#undef FOLSOM_STAT
        if (Handle* h = handle_of(ptr))
            set_error(*h, MEMCACHED_INVALID_ARGUMENTS, std::string("unknown stat key: ") + key);
        *error = MEMCACHED_INVALID_ARGUMENTS;
        return nullptr;
    }
found:
    const std::size_t n = std::strlen(buf);
    auto* out = static_cast<char*>(lm_malloc(ptr, n + 1));
    if (!out) {
        *error = MEMCACHED_MEMORY_ALLOCATION_FAILURE;
        return nullptr;
    }
    std::memcpy(out, buf, n + 1);
    *error = MEMCACHED_SUCCESS;
    return out;
}

char** memcached_stat_get_keys(memcached_st* ptr, memcached_stat_st*, memcached_return_t* error) {
    memcached_return_t unused;
    if (!error) error = &unused;
    // One block the caller releases with one free(): the pointers, then the names.
    constexpr std::size_t n = sizeof stat_keys / sizeof stat_keys[0];
    std::size_t bytes = (n + 1) * sizeof(char*);
    for (const char* k : stat_keys)
        bytes += std::strlen(k) + 1;
    auto** list = static_cast<char**>(lm_malloc(ptr, bytes));
    if (!list) {
        *error = MEMCACHED_MEMORY_ALLOCATION_FAILURE;
        return nullptr;
    }
    char* names = reinterpret_cast<char*>(list + n + 1);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t len = std::strlen(stat_keys[i]) + 1;
        std::memcpy(names, stat_keys[i], len);
        list[i] = names;
        names += len;
    }
    list[n] = nullptr;
    *error = MEMCACHED_SUCCESS;
    return list;
}

memcached_return_t memcached_stat_execute(memcached_st* memc, const char* args,
                                          memcached_stat_fn func, void* context) {
    Handle* h = handle_of(memc);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    const std::string group = args ? args : "";
    memcached_return_t cb_rc = MEMCACHED_SUCCESS;
    const memcached_return_t rc = on_every_server<folsom::StatList>(
        *h, [&](folsom::Client& c, auto handler) { c.stats(group, std::move(handler)); },
        [&](std::size_t i, const folsom::StatList& list) {
            if (cb_rc != MEMCACHED_SUCCESS || !func) return;
            for (const auto& [name, value] : list) {
                const memcached_return_t r = func(&h->servers[i]->instance, name.data(),
                                                  name.size(), value.data(), value.size(), context);
                if (r != MEMCACHED_SUCCESS) {
                    cb_rc = r;
                    break;
                }
            }
        });
    return rc != MEMCACHED_SUCCESS ? rc : cb_rc;
}

memcached_analysis_st* memcached_analyze(memcached_st* memc, memcached_stat_st* memc_stat,
                                         memcached_return_t* error) {
    memcached_return_t unused;
    if (!error) error = &unused;
    Handle* h = handle_of(memc);
    if (!h || !memc_stat) {
        *error = MEMCACHED_INVALID_ARGUMENTS;
        return nullptr;
    }
    auto* a =
        static_cast<memcached_analysis_st*>(lm_calloc(memc, 1, sizeof(memcached_analysis_st)));
    if (!a) {
        *error = MEMCACHED_MEMORY_ALLOCATION_FAILURE;
        return nullptr;
    }
    a->root = memc;
    unsigned long long total_bytes = 0, total_items = 0, hits = 0, gets = 0;
    bool first = true;
    for (std::size_t i = 0; i < h->servers.size(); ++i) {
        const memcached_stat_st& s = memc_stat[i];
        const auto idx = static_cast<uint32_t>(i);
        total_bytes += s.bytes;
        total_items += s.curr_items;
        hits += s.get_hits;
        gets += s.cmd_get;
        const unsigned long long remaining =
            s.limit_maxbytes > s.bytes ? s.limit_maxbytes - s.bytes : 0;
        if (first || s.bytes > a->most_used_bytes) {
            a->most_used_bytes = s.bytes;
            a->most_consumed_server = idx;
        }
        if (first || remaining < a->least_remaining_bytes) {
            a->least_remaining_bytes = remaining;
            a->least_free_server = idx;
        }
        if (first || s.uptime > a->longest_uptime) {
            a->longest_uptime = static_cast<uint32_t>(s.uptime);
            a->oldest_server = idx;
        }
        first = false;
    }
    a->average_item_size = total_items ? static_cast<uint32_t>(total_bytes / total_items) : 0;
    a->pool_hit_ratio = gets ? static_cast<double>(hits) * 100.0 / static_cast<double>(gets) : 0;
    *error = MEMCACHED_SUCCESS;
    return a;
}

void memcached_analyze_free(memcached_analysis_st* ptr) {
    if (ptr) lm_free(ptr->root, ptr);
}

memcached_return_t memcached_dump(memcached_st* ptr, memcached_dump_fn* function, void* context,
                                  uint32_t number_of_callbacks) {
    Handle* h = handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    // memcached lists keys only over the text protocol ("stats cachedump"), as libmemcached's
    // dump needs it too.
    if (ptr->flags.binary_protocol)
        return set_error(*h, MEMCACHED_NOT_SUPPORTED,
                         "memcached_dump needs the text protocol (stats cachedump)");
    // Which slab classes hold items, per server ("items:<class>:number"), then each class's
    // keys ("ITEM <key> [...]" lines, read as stats named by the key).
    std::vector<std::vector<std::string>> classes(h->servers.size());
    memcached_return_t rc = on_every_server<folsom::StatList>(
        *h, [&](folsom::Client& c, auto handler) { c.stats("items", std::move(handler)); },
        [&](std::size_t i, const folsom::StatList& list) {
            for (const auto& [name, value] : list) {
                if (name.rfind("items:", 0) != 0 || name.size() < 8) continue;
                const std::size_t colon = name.find(':', 6);
                if (colon == std::string::npos ||
                    name.compare(colon + 1, std::string::npos, "number") != 0)
                    continue;
                classes[i].push_back(name.substr(6, colon - 6));
            }
        });
    if (rc != MEMCACHED_SUCCESS) return rc;
    for (std::size_t i = 0; i < h->servers.size(); ++i) {
        for (const std::string& cls : classes[i]) {
            const std::string group = "cachedump " + cls + " 0";
            folsom::Client& c = h->client(i);
            auto [ec, nodes] = run<std::vector<folsom::NodeResult<folsom::StatList>>>(
                *h, [&](auto handler) { c.stats(group, std::move(handler)); });
            std::error_code e = ec;
            if (!e && !nodes.empty()) e = nodes.front().error;
            if (e) return finish(*h, i, e, MEMCACHED_SUCCESS);
            if (nodes.empty()) continue;
            for (const auto& item : nodes.front().value) {
                for (uint32_t f = 0; f < number_of_callbacks; ++f) {
                    if (!function[f]) continue;
                    const memcached_return_t r =
                        function[f](ptr, item.first.data(), item.first.size(), context);
                    if (r != MEMCACHED_SUCCESS) return r;
                }
            }
        }
    }
    return set_success(*h);
}
