/* A fixed number of libmemcached calls, for instruction and syscall counts of one library
 * against another (callgrind, strace -c): the same binary runs on Debian's libmemcached or,
 * with LD_LIBRARY_PATH, on the drop-in.
 *
 *   ops_count PORT get|miss|mget|mget1|set|none N
 *
 * Sets 100 keys (k0..k99, 100-byte values) on 127.0.0.1:PORT, then does N of one call:
 *   get    memcached_get of k0 (pylibmc's get)
 *   miss   memcached_get of a key never set
 *   mget   memcached_mget of the 100 keys, fetched to the end with memcached_fetch_result
 *          (php-memcached's getMulti, pylibmc's get_multi)
 *   mget1  memcached_mget of k0 and its fetch to the end, into a result made and freed per
 *          call (php-memcached's get)
 *   set    memcached_set of k0 (php-memcached's set; its setMulti and pylibmc's set_multi
 *          make one per key)
 *   none   nothing: the baseline of setup and teardown, to subtract from the others.
 * Exits 1 when a call fails or a value is missing. Build: cc -O2 ops_count.c -lmemcached. */
#include <libmemcached/memcached.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEYS 100

int main(int argc, char** argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s PORT get|miss|mget|mget1|set|none N\n", argv[0]);
        return 2;
    }
    const in_port_t port = (in_port_t)atoi(argv[1]);
    const char* op = argv[2];
    const long n = atol(argv[3]);
    memcached_st* m = memcached_create(NULL);
    if (!m || memcached_server_add(m, "127.0.0.1", port) != MEMCACHED_SUCCESS) return 1;
    char names[KEYS][8];
    const char* keys[KEYS];
    size_t lens[KEYS];
    char value[100];
    memset(value, 'v', sizeof value);
    for (int i = 0; i < KEYS; ++i) {
        lens[i] = (size_t)snprintf(names[i], sizeof names[i], "k%d", i);
        keys[i] = names[i];
        if (memcached_set(m, keys[i], lens[i], value, sizeof value, 0, 0) != MEMCACHED_SUCCESS)
            return 1;
    }
    memcached_result_st result;
    if (!memcached_result_create(m, &result)) return 1;
    long found = 0;
    for (long i = 0; i < n; ++i) {
        memcached_return_t rc;
        if (strcmp(op, "get") == 0) {
            size_t len;
            uint32_t flags;
            char* v = memcached_get(m, keys[0], lens[0], &len, &flags, &rc);
            if (!v || len != sizeof value) return 1;
            free(v);
            ++found;
        } else if (strcmp(op, "miss") == 0) {
            size_t len;
            uint32_t flags;
            if (memcached_get(m, "absent", 6, &len, &flags, &rc) || rc != MEMCACHED_NOTFOUND)
                return 1;
        } else if (strcmp(op, "mget") == 0) {
            if (memcached_mget(m, keys, lens, KEYS) != MEMCACHED_SUCCESS) return 1;
            while (memcached_fetch_result(m, &result, &rc))
                ++found;
            if (rc != MEMCACHED_END) return 1;
        } else if (strcmp(op, "mget1") == 0) {
            memcached_result_st one;
            if (!memcached_result_create(m, &one)) return 1;
            if (memcached_mget(m, keys, lens, 1) != MEMCACHED_SUCCESS) return 1;
            while (memcached_fetch_result(m, &one, &rc))
                ++found;
            memcached_result_free(&one);
            if (rc != MEMCACHED_END) return 1;
        } else if (strcmp(op, "set") == 0) {
            if (memcached_set(m, keys[0], lens[0], value, sizeof value, 0, 0) != MEMCACHED_SUCCESS)
                return 1;
        }
    }
    memcached_result_free(&result);
    memcached_free(m);
    const long want = strcmp(op, "get") == 0 || strcmp(op, "mget1") == 0 ? n
                      : strcmp(op, "mget") == 0                          ? n * KEYS
                                                                         : 0;
    if (found != want) {
        fprintf(stderr, "found %ld of %ld\n", found, want);
        return 1;
    }
    return 0;
}
