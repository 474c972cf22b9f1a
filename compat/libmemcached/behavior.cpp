// Behaviours, distributions, hashes and callbacks: the numbers compiled into every consumer.
#include "handle.hpp"
#include "request.hpp"

#include <cstring>

using folsom::compat::flush_buffered;
using folsom::compat::Handle;
using folsom::compat::handle_of;
using folsom::compat::set_error;

namespace {

// libhashkit's hashkit_set_function(), which both hash setters go through: every hash Debian's
// library has is taken; HSIEH (not built) and CUSTOM are refused; MAX is refused after
// setting the default; a number above MAX is taken and changes nothing. The ring stays as it
// is (see Handle::ring_hash).
memcached_return_t set_hash(Handle& h, memcached_hash_t& field, memcached_hash_t type) {
    if (type == MEMCACHED_HASH_MAX) field = MEMCACHED_HASH_DEFAULT;
    if (type == MEMCACHED_HASH_HSIEH || type == MEMCACHED_HASH_CUSTOM || type == MEMCACHED_HASH_MAX)
        return set_error(h, MEMCACHED_INVALID_ARGUMENTS, "Invalid memcached_hash_t()");
    if (type < MEMCACHED_HASH_MAX) field = type;
    return folsom::compat::set_success(h);
}

// libmemcached's send_quit(): the connections are closed (writes held back by BUFFER_REQUESTS
// go first, as they go out with libmemcached's "quit") and the next request opens new ones.
// libmemcached does it for these behaviours whatever the value; php-memcached's stats_hang.phpt
// counts the connections it costs.
void quit(Handle& h) {
    flush_buffered(h);
    h.disconnect();
}

}  // namespace

memcached_return_t memcached_behavior_set(memcached_st* ptr, const memcached_behavior_t flag,
                                          uint64_t data) {
    Handle* h = handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    const auto i32 = static_cast<std::int32_t>(data);
    const auto u32 = static_cast<std::uint32_t>(data);
    switch (flag) {
        case MEMCACHED_BEHAVIOR_NO_BLOCK:
            ptr->flags.no_block = data != 0;
            quit(*h);
            break;
        case MEMCACHED_BEHAVIOR_TCP_NODELAY:
            ptr->flags.tcp_nodelay = data != 0;
            quit(*h);
            break;
        case MEMCACHED_BEHAVIOR_HASH:
            return memcached_behavior_set_key_hash(ptr, static_cast<memcached_hash_t>(data));
        case MEMCACHED_BEHAVIOR_KETAMA:
            // libmemcached 1.1.4 leaves the hashes as they are (one_at_a_time by default): the
            // unweighted ring hashes its points and its keys with the key hash.
            if (data) {
                ptr->ketama.weighted_ = false;
                return memcached_behavior_set_distribution(
                    ptr, MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA);
            }
            return memcached_behavior_set_distribution(ptr, MEMCACHED_DISTRIBUTION_MODULA);
        case MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED:
            if (data) {
                ptr->ketama.weighted_ = true;
                h->key_hash = MEMCACHED_HASH_MD5;
                h->distribution_hash = MEMCACHED_HASH_MD5;
                return memcached_behavior_set_distribution(
                    ptr, MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED);
            }
            ptr->ketama.weighted_ = false;
            return memcached_behavior_set_distribution(ptr, MEMCACHED_DISTRIBUTION_MODULA);
        case MEMCACHED_BEHAVIOR_KETAMA_HASH:
            return memcached_behavior_set_distribution_hash(ptr,
                                                            static_cast<memcached_hash_t>(data));
        case MEMCACHED_BEHAVIOR_SOCKET_SEND_SIZE:
            ptr->send_size = i32;
            quit(*h);
            break;
        case MEMCACHED_BEHAVIOR_SOCKET_RECV_SIZE:
            ptr->recv_size = i32;
            quit(*h);
            break;
        case MEMCACHED_BEHAVIOR_SUPPORT_CAS:
            ptr->flags.support_cas = data != 0;
            break;
        case MEMCACHED_BEHAVIOR_POLL_TIMEOUT:
            ptr->poll_timeout = i32;
            h->disconnect();
            break;
        case MEMCACHED_BEHAVIOR_DISTRIBUTION:
            return memcached_behavior_set_distribution(
                ptr, static_cast<memcached_server_distribution_t>(data));
        case MEMCACHED_BEHAVIOR_BUFFER_REQUESTS:
            ptr->flags.buffer_requests = data != 0;
            quit(*h);
            break;
        case MEMCACHED_BEHAVIOR_SORT_HOSTS:
            ptr->flags.use_sort_hosts = data != 0;
            break;
        case MEMCACHED_BEHAVIOR_VERIFY_KEY:
            if (ptr->flags.binary_protocol)
                return set_error(*h, MEMCACHED_INVALID_ARGUMENTS,
                                 "MEMCACHED_BEHAVIOR_VERIFY_KEY if the binary protocol has been "
                                 "enabled.");
            ptr->flags.verify_key = data != 0;
            break;
        case MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT:
            ptr->connect_timeout = i32;
            h->disconnect();
            break;
        case MEMCACHED_BEHAVIOR_RETRY_TIMEOUT:
            ptr->retry_timeout = i32;
            h->disconnect();
            break;
        case MEMCACHED_BEHAVIOR_BINARY_PROTOCOL:
            quit(*h);
            ptr->flags.binary_protocol = data != 0;
            if (data) ptr->flags.verify_key = false;
            break;
        case MEMCACHED_BEHAVIOR_SND_TIMEOUT:
            ptr->snd_timeout = i32;
            break;
        case MEMCACHED_BEHAVIOR_RCV_TIMEOUT:
            ptr->rcv_timeout = i32;
            break;
        case MEMCACHED_BEHAVIOR_SERVER_FAILURE_LIMIT:
            ptr->server_failure_limit = u32;
            break;
        case MEMCACHED_BEHAVIOR_IO_MSG_WATERMARK:
            ptr->io_msg_watermark = u32;
            break;
        case MEMCACHED_BEHAVIOR_IO_BYTES_WATERMARK:
            ptr->io_bytes_watermark = u32;
            break;
        case MEMCACHED_BEHAVIOR_IO_KEY_PREFETCH:
            ptr->io_key_prefetch = u32;
            break;
        case MEMCACHED_BEHAVIOR_HASH_WITH_PREFIX_KEY:
            ptr->flags.hash_with_namespace = data != 0;
            h->behaviors[flag] = data != 0;
            break;
        case MEMCACHED_BEHAVIOR_NOREPLY:
            ptr->flags.reply = data == 0;
            break;
        case MEMCACHED_BEHAVIOR_USE_UDP:
            if (data)
                return set_error(*h, MEMCACHED_NOT_SUPPORTED,
                                 "UDP is not supported by folsom's libmemcached drop-in");
            ptr->flags.use_udp = false;
            break;
        case MEMCACHED_BEHAVIOR_AUTO_EJECT_HOSTS:
            ptr->flags.auto_eject_hosts = data != 0;
            break;
        case MEMCACHED_BEHAVIOR_NUMBER_OF_REPLICAS:
            ptr->number_of_replicas = u32;
            break;
        case MEMCACHED_BEHAVIOR_RANDOMIZE_REPLICA_READ:
            ptr->flags.randomize_replica_read = data != 0;
            break;
        case MEMCACHED_BEHAVIOR_TCP_KEEPALIVE:
            ptr->flags.tcp_keepalive = data != 0;
            quit(*h);
            break;
        case MEMCACHED_BEHAVIOR_TCP_KEEPIDLE:
            ptr->tcp_keepidle = u32;
            quit(*h);
            break;
        case MEMCACHED_BEHAVIOR_DEAD_TIMEOUT:
            ptr->dead_timeout = i32;
            break;
        case MEMCACHED_BEHAVIOR_SERVER_TIMEOUT_LIMIT:
            ptr->server_timeout_limit = u32;
            break;
        case MEMCACHED_BEHAVIOR_CACHE_LOOKUPS:
        case MEMCACHED_BEHAVIOR_USER_DATA:
        case MEMCACHED_BEHAVIOR_CORK:
        case MEMCACHED_BEHAVIOR_LOAD_FROM_FILE:
            return set_error(*h, MEMCACHED_DEPRECATED,
                             std::string(libmemcached_string_behavior(flag)) + " is deprecated");
        case MEMCACHED_BEHAVIOR_REMOVE_FAILED_SERVERS:
            ptr->flags.auto_eject_hosts = data != 0;
            h->behaviors[flag] = data;
            break;
        case MEMCACHED_BEHAVIOR_MAX:
        default:
            return set_error(*h, MEMCACHED_INVALID_ARGUMENTS, "invalid behavior");
    }
    return folsom::compat::set_success(*h);
}

uint64_t memcached_behavior_get(memcached_st* ptr, const memcached_behavior_t flag) {
    Handle* h = handle_of(ptr);
    if (!h) return 0;
    switch (flag) {
        case MEMCACHED_BEHAVIOR_NO_BLOCK:
            return ptr->flags.no_block;
        case MEMCACHED_BEHAVIOR_TCP_NODELAY:
            return ptr->flags.tcp_nodelay;
        case MEMCACHED_BEHAVIOR_HASH:
            return h->key_hash;
        case MEMCACHED_BEHAVIOR_KETAMA:
            return ptr->distribution == MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA;
        case MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED:
            return ptr->ketama.weighted_;
        case MEMCACHED_BEHAVIOR_KETAMA_HASH:
            return h->distribution_hash;
        // Unset (-1): libmemcached asks a connected socket; with none, it reports 0.
        case MEMCACHED_BEHAVIOR_SOCKET_SEND_SIZE:
            return ptr->send_size > 0 ? static_cast<uint64_t>(ptr->send_size) : 0;
        case MEMCACHED_BEHAVIOR_SOCKET_RECV_SIZE:
            return ptr->recv_size > 0 ? static_cast<uint64_t>(ptr->recv_size) : 0;
        case MEMCACHED_BEHAVIOR_SUPPORT_CAS:
            return ptr->flags.support_cas;
        case MEMCACHED_BEHAVIOR_POLL_TIMEOUT:
            return static_cast<uint64_t>(ptr->poll_timeout);
        case MEMCACHED_BEHAVIOR_DISTRIBUTION:
            return ptr->distribution;
        case MEMCACHED_BEHAVIOR_BUFFER_REQUESTS:
            return ptr->flags.buffer_requests;
        case MEMCACHED_BEHAVIOR_SORT_HOSTS:
            return ptr->flags.use_sort_hosts;
        case MEMCACHED_BEHAVIOR_VERIFY_KEY:
            return ptr->flags.verify_key;
        case MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT:
            return static_cast<uint64_t>(ptr->connect_timeout);
        case MEMCACHED_BEHAVIOR_RETRY_TIMEOUT:
            return static_cast<uint64_t>(ptr->retry_timeout);
        case MEMCACHED_BEHAVIOR_BINARY_PROTOCOL:
            return ptr->flags.binary_protocol;
        case MEMCACHED_BEHAVIOR_SND_TIMEOUT:
            return static_cast<uint64_t>(ptr->snd_timeout);
        case MEMCACHED_BEHAVIOR_RCV_TIMEOUT:
            return static_cast<uint64_t>(ptr->rcv_timeout);
        case MEMCACHED_BEHAVIOR_SERVER_FAILURE_LIMIT:
            return ptr->server_failure_limit;
        case MEMCACHED_BEHAVIOR_IO_MSG_WATERMARK:
            return ptr->io_msg_watermark;
        case MEMCACHED_BEHAVIOR_IO_BYTES_WATERMARK:
            return ptr->io_bytes_watermark;
        case MEMCACHED_BEHAVIOR_IO_KEY_PREFETCH:
            return ptr->io_key_prefetch;
        case MEMCACHED_BEHAVIOR_HASH_WITH_PREFIX_KEY:
            return ptr->flags.hash_with_namespace;
        case MEMCACHED_BEHAVIOR_NOREPLY:
            return !ptr->flags.reply;
        case MEMCACHED_BEHAVIOR_USE_UDP:
            return ptr->flags.use_udp;
        case MEMCACHED_BEHAVIOR_AUTO_EJECT_HOSTS:
            return ptr->flags.auto_eject_hosts;
        case MEMCACHED_BEHAVIOR_NUMBER_OF_REPLICAS:
            return ptr->number_of_replicas;
        case MEMCACHED_BEHAVIOR_RANDOMIZE_REPLICA_READ:
            return ptr->flags.randomize_replica_read;
        case MEMCACHED_BEHAVIOR_TCP_KEEPALIVE:
            return ptr->flags.tcp_keepalive;
        case MEMCACHED_BEHAVIOR_TCP_KEEPIDLE:
            return ptr->tcp_keepidle;
        case MEMCACHED_BEHAVIOR_DEAD_TIMEOUT:
            return static_cast<uint64_t>(ptr->dead_timeout);
        case MEMCACHED_BEHAVIOR_SERVER_TIMEOUT_LIMIT:
            return ptr->server_timeout_limit;
        case MEMCACHED_BEHAVIOR_REMOVE_FAILED_SERVERS:
            return h->behaviors[flag];
        // Deprecated; libmemcached 1.1.4 reports these two as always on.
        case MEMCACHED_BEHAVIOR_CACHE_LOOKUPS:
        case MEMCACHED_BEHAVIOR_CORK:
            return 1;
        case MEMCACHED_BEHAVIOR_USER_DATA:
            // As libmemcached: reading it records the deprecation as the last error.
            set_error(*h, MEMCACHED_DEPRECATED, "MEMCACHED_BEHAVIOR_USER_DATA deprecated.");
            return 0;
        case MEMCACHED_BEHAVIOR_LOAD_FROM_FILE:
        case MEMCACHED_BEHAVIOR_MAX:
        default:
            return 0;
    }
}

memcached_return_t memcached_behavior_set_distribution(memcached_st* ptr,
                                                       memcached_server_distribution_t type) {
    Handle* h = handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    switch (type) {
        case MEMCACHED_DISTRIBUTION_MODULA:
        case MEMCACHED_DISTRIBUTION_CONSISTENT:
        case MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA:
        case MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED:
        case MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY:
        case MEMCACHED_DISTRIBUTION_VIRTUAL_BUCKET:
        case MEMCACHED_DISTRIBUTION_RANDOM:  // a server drawn per call (Handle::server_for)
            ptr->distribution = type;
            if (type == MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED) ptr->ketama.weighted_ = true;
            h->reset_rings();
            return folsom::compat::set_success(*h);
        default:
            return set_error(*h, MEMCACHED_INVALID_ARGUMENTS,
                             "Invalid memcached_server_distribution_t");
    }
}

memcached_server_distribution_t memcached_behavior_get_distribution(memcached_st* ptr) {
    return ptr ? ptr->distribution : MEMCACHED_DISTRIBUTION_MODULA;
}

memcached_return_t memcached_behavior_set_key_hash(memcached_st* ptr, memcached_hash_t type) {
    Handle* h = handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    return set_hash(*h, h->key_hash, type);
}

memcached_hash_t memcached_behavior_get_key_hash(memcached_st* ptr) {
    const Handle* h = handle_of(ptr);
    return h ? h->key_hash : MEMCACHED_HASH_DEFAULT;
}

memcached_return_t memcached_behavior_set_distribution_hash(memcached_st* ptr,
                                                            memcached_hash_t type) {
    Handle* h = handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    return set_hash(*h, h->distribution_hash, type);
}

memcached_hash_t memcached_behavior_get_distribution_hash(memcached_st* ptr) {
    const Handle* h = handle_of(ptr);
    return h ? h->distribution_hash : MEMCACHED_HASH_DEFAULT;
}

const char* libmemcached_string_behavior(const memcached_behavior_t flag) {
    switch (flag) {
#define FOLSOM_NAME(x) \
    case x:            \
        return #x;
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_NO_BLOCK)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_TCP_NODELAY)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_HASH)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_KETAMA)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_SOCKET_SEND_SIZE)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_SOCKET_RECV_SIZE)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_CACHE_LOOKUPS)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_SUPPORT_CAS)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_POLL_TIMEOUT)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_DISTRIBUTION)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_BUFFER_REQUESTS)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_USER_DATA)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_SORT_HOSTS)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_VERIFY_KEY)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_RETRY_TIMEOUT)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_KETAMA_HASH)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_BINARY_PROTOCOL)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_SND_TIMEOUT)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_RCV_TIMEOUT)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_SERVER_FAILURE_LIMIT)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_IO_MSG_WATERMARK)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_IO_BYTES_WATERMARK)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_IO_KEY_PREFETCH)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_HASH_WITH_PREFIX_KEY)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_NOREPLY)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_USE_UDP)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_AUTO_EJECT_HOSTS)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_NUMBER_OF_REPLICAS)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_RANDOMIZE_REPLICA_READ)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_CORK)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_TCP_KEEPALIVE)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_TCP_KEEPIDLE)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_LOAD_FROM_FILE)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_REMOVE_FAILED_SERVERS)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_DEAD_TIMEOUT)
        FOLSOM_NAME(MEMCACHED_BEHAVIOR_SERVER_TIMEOUT_LIMIT)
        default:
            return "INVALID memcached_behavior_t";
    }
}

const char* libmemcached_string_distribution(const memcached_server_distribution_t flag) {
    switch (flag) {
        FOLSOM_NAME(MEMCACHED_DISTRIBUTION_MODULA)
        FOLSOM_NAME(MEMCACHED_DISTRIBUTION_CONSISTENT)
        FOLSOM_NAME(MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA)
        FOLSOM_NAME(MEMCACHED_DISTRIBUTION_RANDOM)
        FOLSOM_NAME(MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY)
        FOLSOM_NAME(MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED)
        FOLSOM_NAME(MEMCACHED_DISTRIBUTION_VIRTUAL_BUCKET)
        default:
            return "INVALID memcached_server_distribution_t";
    }
}

#undef FOLSOM_NAME

const char* libmemcached_string_hash(memcached_hash_t type) {
    // Without the MEMCACHED_HASH_ prefix, as libmemcached names them.
    switch (type) {
        case MEMCACHED_HASH_DEFAULT:
            return "DEFAULT";
        case MEMCACHED_HASH_MD5:
            return "MD5";
        case MEMCACHED_HASH_CRC:
            return "CRC";
        case MEMCACHED_HASH_FNV1_64:
            return "FNV1_64";
        case MEMCACHED_HASH_FNV1A_64:
            return "FNV1A_64";
        case MEMCACHED_HASH_FNV1_32:
            return "FNV1_32";
        case MEMCACHED_HASH_FNV1A_32:
            return "FNV1A_32";
        case MEMCACHED_HASH_HSIEH:
            return "HSIEH";
        case MEMCACHED_HASH_MURMUR:
            return "MURMUR";
        case MEMCACHED_HASH_JENKINS:
            return "JENKINS";
        case MEMCACHED_HASH_MURMUR3:
            return "MURMUR3";
        case MEMCACHED_HASH_CUSTOM:
            return "CUSTOM";
        default:
            return "INVALID";
    }
}

// ---- callbacks ----------------------------------------------------------------------------

memcached_return_t memcached_callback_set(memcached_st* ptr, const memcached_callback_t flag,
                                          const void* data) {
    Handle* h = handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    switch (flag) {
        case MEMCACHED_CALLBACK_PREFIX_KEY: {
            const char* p = static_cast<const char*>(data);
            const std::string_view prefix = p ? std::string_view(p) : std::string_view{};
            if (prefix.size() >= MEMCACHED_MAX_NAMESPACE)
                return set_error(*h, MEMCACHED_KEY_TOO_BIG,
                                 "the prefix key is longer than 127 bytes");
            for (const char c : prefix)
                if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f)
                    return set_error(*h, MEMCACHED_BAD_KEY_PROVIDED,
                                     "the prefix key holds a space or a control character");
            if (prefix != h->prefix) {
                h->disconnect();
                h->prefix.assign(prefix);
            }
            break;
        }
        case MEMCACHED_CALLBACK_USER_DATA:
            ptr->user_data = const_cast<void*>(data);
            break;
        case MEMCACHED_CALLBACK_CLEANUP_FUNCTION:
            ptr->on_cleanup = reinterpret_cast<memcached_cleanup_fn>(const_cast<void*>(data));
            break;
        case MEMCACHED_CALLBACK_CLONE_FUNCTION:
            ptr->on_clone = reinterpret_cast<memcached_clone_fn>(const_cast<void*>(data));
            break;
        case MEMCACHED_CALLBACK_GET_FAILURE:
            ptr->get_key_failure =
                reinterpret_cast<memcached_trigger_key_fn>(const_cast<void*>(data));
            break;
        case MEMCACHED_CALLBACK_DELETE_TRIGGER:
            if (data && !ptr->flags.reply)
                return set_error(*h, MEMCACHED_INVALID_ARGUMENTS,
                                 "a delete trigger cannot be used with MEMCACHED_BEHAVIOR_NOREPLY");
            ptr->delete_trigger =
                reinterpret_cast<memcached_trigger_delete_key_fn>(const_cast<void*>(data));
            break;
        default:
            return set_error(*h, MEMCACHED_INVALID_ARGUMENTS, "invalid callback");
    }
    return folsom::compat::set_success(*h);
}

void* memcached_callback_get(memcached_st* ptr, const memcached_callback_t flag,
                             memcached_return_t* error) {
    memcached_return_t unused;
    if (!error) error = &unused;
    if (!ptr) {
        *error = MEMCACHED_INVALID_ARGUMENTS;
        return nullptr;
    }
    // The callbacks and the user data are fields of the struct, read as libmemcached reads
    // them: without a Handle too, i.e. after memcached_free() of a caller's struct (Perl's
    // Memcached::libmemcached reads its user data back right after freeing).
    // The Handle is looked up only for what it holds (the prefix), so that the other reads
    // touch nothing but the struct's own field, as libmemcached's do.
    *error = MEMCACHED_SUCCESS;
    void* out = nullptr;
    switch (flag) {
        case MEMCACHED_CALLBACK_PREFIX_KEY: {
            // No prefix: NULL, and still MEMCACHED_SUCCESS.
            const Handle* h = handle_of(ptr);
            return h && !h->prefix.empty() ? const_cast<char*>(h->prefix.data()) : nullptr;
        }
        case MEMCACHED_CALLBACK_USER_DATA:
            out = ptr->user_data;
            break;
        case MEMCACHED_CALLBACK_CLEANUP_FUNCTION:
            out = reinterpret_cast<void*>(ptr->on_cleanup);
            break;
        case MEMCACHED_CALLBACK_CLONE_FUNCTION:
            out = reinterpret_cast<void*>(ptr->on_clone);
            break;
        case MEMCACHED_CALLBACK_GET_FAILURE:
            out = reinterpret_cast<void*>(ptr->get_key_failure);
            break;
        case MEMCACHED_CALLBACK_DELETE_TRIGGER:
            out = reinterpret_cast<void*>(ptr->delete_trigger);
            break;
        default:
            *error = MEMCACHED_INVALID_ARGUMENTS;
            return nullptr;
    }
    if (!out) *error = MEMCACHED_FAILURE;
    return out;
}
