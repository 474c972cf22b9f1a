// SASL credentials, and the calls the drop-in does not have yet: they answer
// MEMCACHED_NOT_SUPPORTED with a last-error message that says so.
#include "handle.hpp"

using namespace folsom::compat;

memcached_return_t memcached_set_sasl_auth_data(memcached_st* ptr, const char* username,
                                                const char* password) {
    Handle* h = handle_of(ptr);
    if (!h || !username || !password) return MEMCACHED_INVALID_ARGUMENTS;
    // SASL PLAIN over the binary protocol, done by folsom's core on every connection.
    h->disconnect();
    h->sasl = folsom::SaslCredentials{username, password};
    return set_success(*h);
}

memcached_return_t memcached_destroy_sasl_auth_data(memcached_st* ptr) {
    Handle* h = handle_of(ptr);
    if (!h) return MEMCACHED_INVALID_ARGUMENTS;
    if (!h->sasl) return MEMCACHED_SUCCESS;
    h->disconnect();
    h->sasl.reset();
    return set_success(*h);
}

void memcached_set_sasl_callbacks(memcached_st* ptr, const sasl_callback_t*) {
    // Cyrus SASL callbacks are not used: the core speaks PLAIN with the credentials given to
    // memcached_set_sasl_auth_data. Recorded so that the caller can see why nothing changed.
    if (Handle* h = handle_of(ptr))
        set_error(*h, MEMCACHED_NOT_SUPPORTED,
                  "memcached_set_sasl_callbacks: use memcached_set_sasl_auth_data with folsom's "
                  "libmemcached drop-in");
}

sasl_callback_t* memcached_get_sasl_callbacks(memcached_st*) {
    return nullptr;
}

memcached_return_t memcached_bucket_set(memcached_st* self, const uint32_t* host_map,
                                        const uint32_t* forward_map, const uint32_t buckets,
                                        const uint32_t replicas) {
    Handle* h = handle_of(self);
    if (!h || !host_map || buckets == 0) return MEMCACHED_INVALID_ARGUMENTS;
    // The forward map and the replicas matter to libmemcached only for replica reads, which
    // the drop-in does not do: placement is by host_map alone, as libmemcached's.
    static_cast<void>(forward_map);
    static_cast<void>(replicas);
    h->bucket_servers.assign(host_map, host_map + buckets);
    return memcached_behavior_set_distribution(self, MEMCACHED_DISTRIBUTION_VIRTUAL_BUCKET);
}
