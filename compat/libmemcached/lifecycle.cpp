// memcached_st's life: create, free, clone, reset; user data and memory allocators.
#include "handle.hpp"
#include "request.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

using folsom::compat::Handle;
using folsom::compat::handle_of;

namespace {

// The allocators a memcached_st starts with (and gets back when all four are reset): libc's,
// so that callers may release what the library returns with free(), as pylibmc and the tools do.
void* libc_malloc(const memcached_st*, const size_t size, void*) {
    return std::malloc(size);
}
void libc_free(const memcached_st*, void* mem, void*) {
    std::free(mem);
}
void* libc_realloc(const memcached_st*, void* mem, const size_t size, void*) {
    return std::realloc(mem, size);
}
void* libc_calloc(const memcached_st*, size_t n, const size_t size, void*) {
    return std::calloc(n, size);
}

void default_allocators(memcached_st* memc) {
    memc->allocators.malloc = libc_malloc;
    memc->allocators.free = libc_free;
    memc->allocators.realloc = libc_realloc;
    memc->allocators.calloc = libc_calloc;
    memc->allocators.context = nullptr;
}

}  // namespace

namespace folsom::compat {

void init_memcached(memcached_st* memc) {
    std::memset(static_cast<void*>(memc), 0, sizeof(*memc));
    // libmemcached 1.1.4's defaults, as its behaviours report them.
    memc->flags.reply = true;
    memc->distribution = MEMCACHED_DISTRIBUTION_MODULA;
    memc->server_failure_limit = MEMCACHED_SERVER_FAILURE_LIMIT;
    memc->server_timeout_limit = MEMCACHED_SERVER_TIMEOUT_LIMIT;
    memc->io_msg_watermark = 500;
    memc->io_bytes_watermark = 65 * 1024;
    memc->io_key_prefetch = 0;
    memc->poll_timeout = MEMCACHED_DEFAULT_TIMEOUT;
    memc->connect_timeout = MEMCACHED_DEFAULT_CONNECT_TIMEOUT;
    memc->retry_timeout = MEMCACHED_SERVER_FAILURE_RETRY_TIMEOUT;
    memc->dead_timeout = MEMCACHED_SERVER_FAILURE_DEAD_TIMEOUT;
    memc->send_size = -1;
    memc->recv_size = -1;
    default_allocators(memc);
    auto* h = new Handle;
    h->root = memc;
    memc->ketama.continuum = reinterpret_cast<memcached_continuum_item_st*>(h);
    memcached_result_create(memc, &memc->result);
}

}  // namespace folsom::compat

memcached_st* memcached_create(memcached_st* ptr) {
    bool allocated = false;
    if (!ptr) {
        ptr = static_cast<memcached_st*>(std::calloc(1, sizeof(memcached_st)));
        if (!ptr) return nullptr;
        allocated = true;
    }
    try {
        folsom::compat::init_memcached(ptr);
    } catch (const std::bad_alloc&) {
        if (allocated) std::free(ptr);
        return nullptr;
    }
    ptr->options.is_allocated = allocated;
    if (!folsom::compat::apply_environment(ptr)) {
        memcached_free(ptr);
        return nullptr;
    }
    return ptr;
}

void memcached_free(memcached_st* ptr) {
    Handle* h = handle_of(ptr);
    if (!h) return;
    if (ptr->on_cleanup) ptr->on_cleanup(ptr);
    folsom::compat::flush_buffered(*h);  // as libmemcached's quit does
    memcached_result_free(&ptr->result);
    delete h;
    ptr->ketama.continuum = nullptr;
    // Only storage this library allocated is released: a caller's stays the caller's.
    if (ptr->options.is_allocated) std::free(ptr);
}

memcached_st* memcached_clone(memcached_st* clone, const memcached_st* source) {
    if (!source) return memcached_create(clone);
    const Handle* from = handle_of(source);
    if (!from) return nullptr;
    memcached_st* to = memcached_create(clone);
    if (!to) return nullptr;
    Handle* h = handle_of(to);
    // The public settings, then the state: a clone has its own connections.
    to->flags = source->flags;
    to->distribution = source->distribution;
    to->snd_timeout = source->snd_timeout;
    to->rcv_timeout = source->rcv_timeout;
    to->server_failure_limit = source->server_failure_limit;
    to->server_timeout_limit = source->server_timeout_limit;
    to->io_msg_watermark = source->io_msg_watermark;
    to->io_bytes_watermark = source->io_bytes_watermark;
    to->io_key_prefetch = source->io_key_prefetch;
    to->tcp_keepidle = source->tcp_keepidle;
    to->poll_timeout = source->poll_timeout;
    to->connect_timeout = source->connect_timeout;
    to->retry_timeout = source->retry_timeout;
    to->dead_timeout = source->dead_timeout;
    to->send_size = source->send_size;
    to->recv_size = source->recv_size;
    to->user_data = source->user_data;
    to->number_of_replicas = source->number_of_replicas;
    to->allocators = source->allocators;
    to->on_clone = source->on_clone;
    to->on_cleanup = source->on_cleanup;
    to->get_key_failure = source->get_key_failure;
    to->delete_trigger = source->delete_trigger;
    std::memcpy(h->behaviors, from->behaviors, sizeof(h->behaviors));
    h->key_hash = from->key_hash;
    h->distribution_hash = from->distribution_hash;
    h->prefix = from->prefix;
    h->bucket_servers = from->bucket_servers;
    h->sasl = from->sasl;
    h->cipher = from->cipher;
    h->folsom = from->folsom;
    for (const auto& s : from->servers) {
        if (folsom::compat::add_server(*h, s->host, s->port, s->weight, s->type,
                                       folsom::compat::WeightRule::always) != MEMCACHED_SUCCESS) {
            memcached_free(to);
            return nullptr;
        }
    }
    if (source->on_clone) source->on_clone(to, source);
    return to;
}

memcached_return_t memcached_reset(memcached_st* ptr) {
    if (!handle_of(ptr)) return MEMCACHED_INVALID_ARGUMENTS;
    const bool allocated = ptr->options.is_allocated;
    // Drop the state but not the caller's storage, then start afresh in the same memory.
    ptr->options.is_allocated = false;
    memcached_free(ptr);
    folsom::compat::init_memcached(ptr);
    ptr->options.is_allocated = allocated;
    folsom::compat::apply_environment(ptr);  // a bad file was reported when ptr was created
    return MEMCACHED_SUCCESS;
}

void* memcached_get_user_data(const memcached_st* ptr) {
    return ptr ? ptr->user_data : nullptr;
}

void* memcached_set_user_data(memcached_st* ptr, void* data) {
    if (!ptr) return nullptr;
    void* old = ptr->user_data;
    ptr->user_data = data;
    return old;
}

memcached_return_t memcached_set_memory_allocators(memcached_st* ptr,
                                                   memcached_malloc_fn mem_malloc,
                                                   memcached_free_fn mem_free,
                                                   memcached_realloc_fn mem_realloc,
                                                   memcached_calloc_fn mem_calloc, void* context) {
    if (!ptr) return MEMCACHED_INVALID_ARGUMENTS;
    if (!mem_malloc && !mem_free && !mem_realloc && !mem_calloc) {
        default_allocators(ptr);
        return MEMCACHED_SUCCESS;
    }
    if (!mem_malloc || !mem_free || !mem_realloc || !mem_calloc) {
        if (Handle* h = handle_of(ptr))
            return folsom::compat::set_error(
                *h, MEMCACHED_INVALID_ARGUMENTS,
                "memcached_set_memory_allocators() needs all four functions, or none");
        return MEMCACHED_INVALID_ARGUMENTS;
    }
    // The embedded result's buffer came from the old allocator: give it back with that one.
    if (ptr->result.value.string) {
        folsom::compat::lm_free(ptr, ptr->result.value.string);
        ptr->result.value.string = nullptr;
        ptr->result.value.end = nullptr;
        ptr->result.value.current_size = 0;
    }
    ptr->allocators.malloc = mem_malloc;
    ptr->allocators.free = mem_free;
    ptr->allocators.realloc = mem_realloc;
    ptr->allocators.calloc = mem_calloc;
    ptr->allocators.context = context;
    return MEMCACHED_SUCCESS;
}

void memcached_get_memory_allocators(const memcached_st* ptr, memcached_malloc_fn* mem_malloc,
                                     memcached_free_fn* mem_free, memcached_realloc_fn* mem_realloc,
                                     memcached_calloc_fn* mem_calloc) {
    if (!ptr) return;
    if (mem_malloc) *mem_malloc = ptr->allocators.malloc;
    if (mem_free) *mem_free = ptr->allocators.free;
    if (mem_realloc) *mem_realloc = ptr->allocators.realloc;
    if (mem_calloc) *mem_calloc = ptr->allocators.calloc;
}

void* memcached_get_memory_allocators_context(const memcached_st* ptr) {
    return ptr ? ptr->allocators.context : nullptr;
}

const char* memcached_lib_version(void) {
    return LIBMEMCACHED_VERSION_STRING;
}

uint64_t memcached_query_id(const memcached_st* ptr) {
    const Handle* h = handle_of(ptr);
    return h ? h->query_id : 0;
}
