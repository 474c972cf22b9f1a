// memcached_pool_*: a bounded set of clones of one memcached_st, for threads that take one,
// use it and give it back (libmemcached's rule: one memcached_st per thread at a time).
#include <libmemcached-1.0/memcached.h>
#include <libmemcachedutil-1.0/pool.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <ctime>
#include <map>
#include <mutex>
#include <new>
#include <vector>

struct memcached_pool_st {
    memcached_st* master = nullptr;
    bool owns_master = false;  // made by memcached_pool() from a configuration string
    std::uint32_t max = 1;
    std::uint32_t made = 0;  // clones in existence (idle or lent out)
    std::vector<memcached_st*> idle;
    // Bumped by memcached_pool_behavior_set; a clone lent before the change is replaced by a
    // fresh clone of the master when it comes back.
    std::uint64_t generation = 0;
    std::map<memcached_st*, std::uint64_t> lent;
    std::mutex m;
    std::condition_variable cv;
};

memcached_pool_st* memcached_pool_create(memcached_st* mmc, uint32_t initial, uint32_t max) {
    if (!mmc || max == 0 || initial > max) return nullptr;
    auto* pool = new (std::nothrow) memcached_pool_st;
    if (!pool) return nullptr;
    pool->master = mmc;
    pool->max = max;
    for (uint32_t i = 0; i < initial; ++i) {
        memcached_st* c = memcached_clone(nullptr, mmc);
        if (!c) break;
        pool->idle.push_back(c);
        pool->made++;
    }
    return pool;
}

memcached_pool_st* memcached_pool(const char* option_string, size_t option_string_length) {
    memcached_st* master = memcached(option_string, option_string_length);
    if (!master) return nullptr;
    const uint32_t initial =
        master->configure.initial_pool_size ? master->configure.initial_pool_size : 1;
    const uint32_t max =
        master->configure.max_pool_size ? master->configure.max_pool_size : initial;
    memcached_pool_st* pool = memcached_pool_create(master, initial, max < initial ? initial : max);
    if (!pool) {
        memcached_free(master);
        return nullptr;
    }
    pool->owns_master = true;
    return pool;
}

memcached_st* memcached_pool_destroy(memcached_pool_st* pool) {
    if (!pool) return nullptr;
    for (memcached_st* c : pool->idle)
        memcached_free(c);
    memcached_st* master = pool->master;
    if (pool->owns_master) {
        memcached_free(master);
        master = nullptr;
    }
    delete pool;
    return master;
}

memcached_st* memcached_pool_fetch(memcached_pool_st* pool, struct timespec* relative_time,
                                   memcached_return_t* rc) {
    memcached_return_t unused;
    if (!rc) rc = &unused;
    if (!pool) {
        *rc = MEMCACHED_INVALID_ARGUMENTS;
        return nullptr;
    }
    std::unique_lock lk(pool->m);
    const auto ready = [&] { return !pool->idle.empty() || pool->made < pool->max; };
    if (!ready()) {
        // A null time waits for as long as it takes; a zero time does not wait.
        if (!relative_time) {
            pool->cv.wait(lk, ready);
        } else {
            const auto wait = std::chrono::seconds(relative_time->tv_sec) +
                              std::chrono::nanoseconds(relative_time->tv_nsec);
            if (!pool->cv.wait_for(lk, wait, ready)) {
                *rc = MEMCACHED_TIMEOUT;
                return nullptr;
            }
        }
    }
    if (!pool->idle.empty()) {
        memcached_st* c = pool->idle.back();
        pool->idle.pop_back();
        pool->lent[c] = pool->generation;
        *rc = MEMCACHED_SUCCESS;
        return c;
    }
    memcached_st* c = memcached_clone(nullptr, pool->master);
    if (!c) {
        *rc = MEMCACHED_MEMORY_ALLOCATION_FAILURE;
        return nullptr;
    }
    pool->made++;
    pool->lent[c] = pool->generation;
    *rc = MEMCACHED_SUCCESS;
    return c;
}

memcached_st* memcached_pool_pop(memcached_pool_st* pool, bool block, memcached_return_t* rc) {
    struct timespec no_wait = {0, 0};
    memcached_st* c = memcached_pool_fetch(pool, block ? nullptr : &no_wait, rc);
    if (!c && rc && *rc == MEMCACHED_TIMEOUT) *rc = MEMCACHED_NOTFOUND;
    return c;
}

memcached_return_t memcached_pool_release(memcached_pool_st* pool, memcached_st* mmc) {
    if (!pool || !mmc) return MEMCACHED_INVALID_ARGUMENTS;
    {
        std::lock_guard lk(pool->m);
        const auto it = pool->lent.find(mmc);
        if (it == pool->lent.end()) return MEMCACHED_INVALID_ARGUMENTS;  // not one of ours
        const bool stale = it->second != pool->generation;
        pool->lent.erase(it);
        if (stale) {
            // Its settings predate a memcached_pool_behavior_set: a fresh clone replaces it.
            if (memcached_st* fresh = memcached_clone(nullptr, pool->master)) {
                memcached_free(mmc);
                mmc = fresh;
            }
        }
        pool->idle.push_back(mmc);
    }
    pool->cv.notify_one();
    return MEMCACHED_SUCCESS;
}

memcached_return_t memcached_pool_push(memcached_pool_st* pool, memcached_st* mmc) {
    return memcached_pool_release(pool, mmc);
}

memcached_return_t memcached_pool_behavior_set(memcached_pool_st* pool, memcached_behavior_t flag,
                                               uint64_t data) {
    if (!pool) return MEMCACHED_INVALID_ARGUMENTS;
    std::lock_guard lk(pool->m);
    const memcached_return_t rc = memcached_behavior_set(pool->master, flag, data);
    if (rc != MEMCACHED_SUCCESS) return rc;
    // Idle clones follow at once; lent ones are replaced by fresh clones when they come back.
    for (memcached_st* c : pool->idle)
        memcached_behavior_set(c, flag, data);
    pool->generation++;
    return MEMCACHED_SUCCESS;
}

memcached_return_t memcached_pool_behavior_get(memcached_pool_st* pool, memcached_behavior_t flag,
                                               uint64_t* value) {
    if (!pool || !value) return MEMCACHED_INVALID_ARGUMENTS;
    std::lock_guard lk(pool->m);
    *value = memcached_behavior_get(pool->master, flag);
    return MEMCACHED_SUCCESS;
}
