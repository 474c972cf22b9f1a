// memcached_result_st: caller-allocated (on the stack, in arrays) or allocated here; its
// value buffer comes from the memcached_st's allocators.
#include "handle.hpp"

#include <cstring>

using namespace folsom::compat;

memcached_result_st* memcached_result_create(const memcached_st* ptr, memcached_result_st* result) {
    bool allocated = false;
    if (!result) {
        result = static_cast<memcached_result_st*>(lm_calloc(ptr, 1, sizeof(memcached_result_st)));
        if (!result) return nullptr;
        allocated = true;
    }
    std::memset(static_cast<void*>(result), 0, sizeof(*result));
    result->options.is_allocated = allocated;
    result->options.is_initialized = true;
    result->root = const_cast<memcached_st*>(ptr);
    result->value.root = result->root;
    result->value.options.is_initialized = true;
    return result;
}

void memcached_result_reset(memcached_result_st* ptr) {
    if (!ptr) return;
    ptr->key_length = 0;
    ptr->item_key[0] = '\0';
    ptr->item_flags = 0;
    ptr->item_cas = 0;
    ptr->item_expiration = 0;
    ptr->numeric_value = UINT64_MAX;
    ptr->value.end = ptr->value.string;
}

void memcached_result_free(memcached_result_st* result) {
    if (!result) return;
    if (result->value.string) lm_free(result->root, result->value.string);
    result->value.string = nullptr;
    result->value.end = nullptr;
    result->value.current_size = 0;
    result->options.is_initialized = false;
    if (result->options.is_allocated) lm_free(result->root, result);
}

const char* memcached_result_key_value(const memcached_result_st* self) {
    return self && self->key_length ? self->item_key : nullptr;
}
size_t memcached_result_key_length(const memcached_result_st* self) {
    return self ? self->key_length : 0;
}
const char* memcached_result_value(const memcached_result_st* self) {
    return self ? self->value.string : nullptr;
}
size_t memcached_result_length(const memcached_result_st* self) {
    if (!self || !self->value.string) return 0;
    return static_cast<size_t>(self->value.end - self->value.string);
}
uint32_t memcached_result_flags(const memcached_result_st* self) {
    return self ? self->item_flags : 0;
}
uint64_t memcached_result_cas(const memcached_result_st* self) {
    return self ? self->item_cas : 0;
}

char* memcached_result_take_value(memcached_result_st* self) {
    if (!self || !self->value.string || memcached_result_length(self) == 0) return nullptr;
    char* out = self->value.string;
    self->value.string = nullptr;
    self->value.end = nullptr;
    self->value.current_size = 0;
    return out;
}

memcached_return_t memcached_result_set_value(memcached_result_st* ptr, const char* value,
                                              size_t length) {
    if (!ptr || (!value && length)) return MEMCACHED_INVALID_ARGUMENTS;
    memcached_string_st& s = ptr->value;
    const size_t old = memcached_result_length(ptr);
    if (!s.string || s.current_size < old + length + 1) {
        void* p = lm_realloc(ptr->root, s.string, old + length + 1);
        if (!p) return MEMCACHED_MEMORY_ALLOCATION_FAILURE;
        s.string = static_cast<char*>(p);
        s.current_size = old + length + 1;
    }
    if (length) std::memcpy(s.string + old, value, length);
    s.string[old + length] = '\0';
    s.end = s.string + old + length;
    return MEMCACHED_SUCCESS;
}

void memcached_result_set_flags(memcached_result_st* self, uint32_t flags) {
    if (self) self->item_flags = flags;
}
void memcached_result_set_expiration(memcached_result_st* self, time_t expiration) {
    if (self) self->item_expiration = expiration;
}
