/* A libmemcached consumer, compiled against Debian's libmemcached-dev headers and linked to
 * libmemcached.so.11: run once on Debian's library and once on folsom's drop-in
 * (LD_LIBRARY_PATH), it must print the same lines. Lines starting with '~' are information
 * that may differ between the two (pids, timings, the drop-in's known gaps); every other line
 * is compared by libmemcached_dropin_test.cpp. Checks that hold for both libraries fail the
 * program (exit 1) on their own.
 *
 * usage: dropin_check <port1> <port2> <pid2> <dead_port> <ascii|binary>
 *        dropin_check sasl <port> <user> <password>   (a memcached -S server)
 *        dropin_check aes <port> <write|read|both> <ascii|binary>   (memcached_set_encoding_key)
 *   port1, port2: two memcached servers (flushed here); pid2: server 2's pid, which is killed
 *   at the end to see what a dead server gives; dead_port: a port nothing listens on.
 * Environment: DROPIN_EXPECT_DIR, when set: the libmemcached.so.11 this process loaded must be
 * the one in that directory (read from /proc/self/maps). DROPIN_IS_FOLSOM, when set: also run
 * the checks that only the drop-in passes (its refusals of keys libmemcached would send). */
#include <libmemcached-1.0/memcached.h>

#include <signal.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int failures = 0;
#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "CHECK FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);   \
            failures++;                                                               \
        }                                                                             \
    } while (0)

static const char* rcname(memcached_return_t rc) { return memcached_strerror(NULL, rc); }

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the library this process loaded ---------------------------------------------------- */
static void check_loaded_library(void) {
    const char* want = getenv("DROPIN_EXPECT_DIR");
    FILE* f = fopen("/proc/self/maps", "r");
    char line[4096];
    char found[4096] = "";
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        char* p = strchr(line, '/');
        if (p && strstr(p, "libmemcached.so.11")) {
            p[strcspn(p, "\n")] = 0;
            snprintf(found, sizeof found, "%s", p);
            break;
        }
    }
    fclose(f);
    printf("~loaded %s\n", found);
    if (want && *want) CHECK(strncmp(found, want, strlen(want)) == 0);
}

/* ---- user allocators ---------------------------------------------------------------------- */
static int user_mallocs = 0, user_frees = 0;
static void* u_malloc(const memcached_st* m, const size_t size, void* ctx) {
    (void)m;
    CHECK(ctx == (void*)&user_mallocs);
    user_mallocs++;
    return malloc(size);
}
static void u_free(const memcached_st* m, void* mem, void* ctx) {
    (void)m;
    (void)ctx;
    if (mem) user_frees++;
    free(mem);
}
static void* u_realloc(const memcached_st* m, void* mem, const size_t size, void* ctx) {
    (void)m;
    (void)ctx;
    if (!mem) user_mallocs++;
    return realloc(mem, size);
}
static void* u_calloc(const memcached_st* m, size_t n, const size_t size, void* ctx) {
    (void)m;
    (void)ctx;
    user_mallocs++;
    return calloc(n, size);
}

/* ---- callbacks ---------------------------------------------------------------------------- */
static memcached_return_t on_delete(const memcached_st* m, const char* key, size_t key_length) {
    (void)m;
    printf("delete trigger: %.*s\n", (int)key_length, key);
    return MEMCACHED_SUCCESS;
}
static memcached_return_t count_result(const memcached_st* m, memcached_result_st* r, void* ctx) {
    (void)m;
    (void)r;
    (*(int*)ctx)++;
    return MEMCACHED_SUCCESS;
}
static memcached_return_t print_server(const memcached_st* m, const memcached_instance_st* s,
                                       void* ctx) {
    (void)m;
    (void)ctx;
    printf("cursor %s:%u %s\n", memcached_server_name(s), (unsigned)memcached_server_port(s),
           memcached_server_type(s));
    return MEMCACHED_SUCCESS;
}
static int cursor_calls = 0;
static memcached_return_t fail_first(const memcached_st* m, const memcached_instance_st* s,
                                     void* ctx) {
    (void)m;
    (void)s;
    (void)ctx;
    return ++cursor_calls == 1 ? MEMCACHED_FAILURE : MEMCACHED_SUCCESS;
}
struct stat_seen {
    int count;
    int pid_seen;
};
static memcached_return_t on_stat(const memcached_instance_st* s, const char* key, size_t klen,
                                  const char* value, size_t vlen, void* ctx) {
    struct stat_seen* seen = ctx;
    (void)s;
    (void)value;
    (void)vlen;
    seen->count++;
    if (klen == 3 && memcmp(key, "pid", 3) == 0) seen->pid_seen = 1;
    return MEMCACHED_SUCCESS;
}

/* ---- helpers ------------------------------------------------------------------------------ */
/* A round trip on the handle's connection: once it is answered, the server has read every
   write sent before it on that connection. BUFFER_REQUESTS and NOREPLY switches close the
   connection (libmemcached sends quit; the drop-in does the same), and memcached serves each
   connection on its own worker thread, so without this a read on the next connection can
   overtake writes still unread on the last one, with either library. */
static void settle(memcached_st* m) {
    size_t len;
    uint32_t flags;
    memcached_return_t rc;
    free(memcached_get(m, "settle", 6, &len, &flags, &rc));
}

static void show_get(memcached_st* m, const char* label, const char* key) {
    size_t len = 99;
    uint32_t flags = 99;
    memcached_return_t rc;
    char* v = memcached_get(m, key, strlen(key), &len, &flags, &rc);
    printf("%s get %s: %s len=%zu flags=%u value=%s\n", label, key, rcname(rc), len, flags,
           v ? v : "(null)");
    free(v);
}

static unsigned long long stat_number(memcached_st* m, const char* name) {
    memcached_return_t rc;
    memcached_stat_st* st = memcached_stat(m, NULL, &rc);
    unsigned long long out = 0;
    if (st) {
        char* v = memcached_stat_get_value(m, &st[0], name, &rc);
        if (v) out = strtoull(v, NULL, 10);
        free(v);
        free(st);
    }
    return out;
}

static void section_basic(memcached_st* m, const char* proto) {
    memcached_return_t rc;
    printf("[%s] set: %s\n", proto, rcname(memcached_set(m, "k1", 2, "hello", 5, 0, 7)));
    show_get(m, proto, "k1");
    printf("[%s] add existing: %s\n", proto, rcname(memcached_add(m, "k1", 2, "x", 1, 0, 0)));
    printf("[%s] add new: %s\n", proto, rcname(memcached_add(m, "k2", 2, "two", 3, 0, 0)));
    printf("[%s] replace missing: %s\n", proto,
           rcname(memcached_replace(m, "nope", 4, "x", 1, 0, 0)));
    printf("[%s] replace: %s\n", proto, rcname(memcached_replace(m, "k2", 2, "TWO", 3, 0, 3)));
    printf("[%s] append: %s\n", proto, rcname(memcached_append(m, "k1", 2, "-app", 4, 0, 0)));
    printf("[%s] prepend: %s\n", proto, rcname(memcached_prepend(m, "k1", 2, "pre-", 4, 0, 0)));
    printf("[%s] append missing: %s\n", proto,
           rcname(memcached_append(m, "nope", 4, "x", 1, 0, 0)));
    show_get(m, proto, "k1");
    show_get(m, proto, "k2");
    show_get(m, proto, "nope");
    printf("[%s] empty set: %s\n", proto, rcname(memcached_set(m, "empty", 5, "", 0, 0, 0)));
    show_get(m, proto, "empty");

    /* cas: through mget + fetch_result with SUPPORT_CAS */
    memcached_behavior_set(m, MEMCACHED_BEHAVIOR_SUPPORT_CAS, 1);
    const char* keys[] = {"k1"};
    size_t lens[] = {2};
    rc = memcached_mget(m, keys, lens, 1);
    printf("[%s] mget for cas: %s\n", proto, rcname(rc));
    memcached_result_st res;
    CHECK(memcached_result_create(m, &res) == &res);
    memcached_result_st* r = memcached_fetch_result(m, &res, &rc);
    uint64_t cas = r ? memcached_result_cas(r) : 0;
    printf("[%s] fetch_result: %s cas_nonzero=%d key=%.*s value=%.*s flags=%u\n", proto,
           rcname(rc), cas != 0, r ? (int)memcached_result_key_length(r) : 0,
           r ? memcached_result_key_value(r) : "", r ? (int)memcached_result_length(r) : 0,
           r ? memcached_result_value(r) : "", r ? memcached_result_flags(r) : 0);
    r = memcached_fetch_result(m, &res, &rc);
    printf("[%s] fetch_result end: %s null=%d\n", proto, rcname(rc), r == NULL);
    printf("[%s] cas wrong: %s\n", proto,
           rcname(memcached_cas(m, "k1", 2, "c", 1, 0, 0, cas + 1000)));
    printf("[%s] cas right: %s\n", proto, rcname(memcached_cas(m, "k1", 2, "c", 1, 0, 0, cas)));
    printf("[%s] cas missing: %s\n", proto,
           rcname(memcached_cas(m, "nope", 4, "c", 1, 0, 0, cas)));
    show_get(m, proto, "k1");
    memcached_result_free(&res); /* a caller's struct: only its buffer is released */
    memcached_behavior_set(m, MEMCACHED_BEHAVIOR_SUPPORT_CAS, 0);

    /* delete, touch, exist */
    printf("[%s] delete: %s\n", proto, rcname(memcached_delete(m, "k2", 2, 0)));
    printf("[%s] delete again: %s\n", proto, rcname(memcached_delete(m, "k2", 2, 0)));
    printf("[%s] touch: %s\n", proto, rcname(memcached_touch(m, "k1", 2, 100)));
    printf("[%s] touch missing: %s\n", proto, rcname(memcached_touch(m, "nope", 4, 100)));
    printf("[%s] exist: %s\n", proto, rcname(memcached_exist(m, "k1", 2)));
    printf("[%s] exist missing: %s\n", proto, rcname(memcached_exist(m, "nope", 4)));
    show_get(m, proto, "nope");

    /* counters */
    uint64_t v = 12345;
    rc = memcached_increment(m, "ctr", 3, 1, &v);
    printf("[%s] incr missing: %s\n", proto, rcname(rc));
    memcached_set(m, "ctr", 3, "10", 2, 0, 0);
    rc = memcached_increment(m, "ctr", 3, 5, &v);
    printf("[%s] incr: %s %llu\n", proto, rcname(rc), (unsigned long long)v);
    rc = memcached_decrement(m, "ctr", 3, 20, &v);
    printf("[%s] decr: %s %llu\n", proto, rcname(rc), (unsigned long long)v);
    v = 0;
    rc = memcached_increment_with_initial(m, "ctr2", 4, 2, 40, 0, &v);
    printf("[%s] incr initial (missing): %s %llu\n", proto, rcname(rc), (unsigned long long)v);
    v = 0;
    rc = memcached_increment_with_initial(m, "ctr2", 4, 2, 40, 0, &v);
    printf("[%s] incr initial (present): %s %llu\n", proto, rcname(rc), (unsigned long long)v);
    v = 0;
    rc = memcached_decrement_with_initial(m, "ctr3", 4, 2, 7, 0, &v);
    printf("[%s] decr initial (missing): %s %llu\n", proto, rcname(rc), (unsigned long long)v);
    show_get(m, proto, "ctr");

    /* multi-get */
    memcached_set(m, "m1", 2, "v1", 2, 0, 1);
    memcached_set(m, "m2", 2, "v2", 2, 0, 2);
    const char* mkeys[] = {"m1", "m2", "m3"};
    size_t mlens[] = {2, 2, 2};
    rc = memcached_mget(m, mkeys, mlens, 3);
    printf("[%s] mget: %s\n", proto, rcname(rc));
    int hits = 0, sum_flags = 0;
    char key[MEMCACHED_MAX_KEY];
    size_t klen, vlen;
    uint32_t flags;
    char* val;
    while ((val = memcached_fetch(m, key, &klen, &vlen, &flags, &rc))) {
        CHECK(klen == 2 && key[0] == 'm' && vlen == 2 && val[0] == 'v' && val[1] == key[1]);
        hits++;
        sum_flags += (int)flags;
        free(val);
    }
    printf("[%s] fetch: hits=%d flags=%d last=%s\n", proto, hits, sum_flags, rcname(rc));
    int executed = 0;
    memcached_execute_fn fns[] = {count_result};
    rc = memcached_mget(m, mkeys, mlens, 3);
    rc = memcached_fetch_execute(m, fns, &executed, 1);
    printf("[%s] fetch_execute: %s count=%d\n", proto, rcname(rc), executed);
    executed = 0;
    rc = memcached_mget_execute(m, mkeys, mlens, 3, fns, &executed, 1);
    printf("[%s] mget_execute: %s\n", proto, rcname(rc));
    if (rc == MEMCACHED_SUCCESS) {
        rc = memcached_fetch_execute(m, fns, &executed, 1);
        printf("[%s] mget_execute fetched: count=%d\n", proto, executed);
    }
    rc = memcached_mget(m, mkeys, mlens, 0);
    printf("[%s] mget no keys: %s\n", proto, rcname(rc));
    /* keys the text protocol cannot carry, in an mget: misses (pylibmc relies on it); an empty
     * one refuses the whole mget */
    {
        const char* odd[] = {"m1", "hello world", "\x01"};
        size_t odd_len[] = {2, 11, 1};
        rc = memcached_mget(m, odd, odd_len, 3);
        int n = 0;
        while ((val = memcached_fetch(m, key, &klen, &vlen, &flags, &rc))) {
            n++;
            free(val);
        }
        printf("[%s] mget with odd keys: hits=%d end=%s\n", proto, n, rcname(rc));
        odd[1] = "";
        odd_len[1] = 0;
        printf("[%s] mget with an empty key: %s\n", proto, rcname(memcached_mget(m, odd, odd_len, 3)));
    }
    /* the end of a fetch: END after something was fetched since the mget, NOT FOUND if not */
    {
        const char* miss[] = {"m3"};
        size_t miss_len[] = {2};
        memcached_result_st* r2;
        rc = memcached_mget(m, miss, miss_len, 1);
        r2 = memcached_fetch_result(m, NULL, &rc);
        printf("[%s] all-miss fetch_result: %s null=%d\n", proto, rcname(rc), r2 == NULL);
        rc = memcached_mget(m, miss, miss_len, 1);
        val = memcached_fetch(m, key, &klen, &vlen, &flags, &rc);
        printf("[%s] all-miss fetch: %s null=%d\n", proto, rcname(rc), val == NULL);
        rc = memcached_mget(m, miss, miss_len, 1);
        executed = 0;
        rc = memcached_fetch_execute(m, fns, &executed, 1);
        printf("[%s] all-miss fetch_execute: %s count=%d\n", proto, rcname(rc), executed);
        rc = memcached_mget(m, mkeys, mlens, 3);
        r2 = memcached_fetch_result(m, NULL, &rc);
        printf("[%s] fetch_result into a new struct: %s\n", proto, rcname(rc));
        memcached_result_free(r2);
        while ((r2 = memcached_fetch_result(m, NULL, &rc))) memcached_result_free(r2);
        printf("[%s] its end: %s\n", proto, rcname(rc));
        printf("[%s] nothing pending: %s\n", proto, rcname(memcached_fetch_execute(m, fns, &executed, 1)));
    }

    /* by key: every key on the group key's server */
    printf("[%s] set_by_key: %s\n", proto,
           rcname(memcached_set_by_key(m, "group", 5, "bk", 2, "bv", 2, 0, 0)));
    size_t blen;
    uint32_t bflags;
    val = memcached_get_by_key(m, "group", 5, "bk", 2, &blen, &bflags, &rc);
    printf("[%s] get_by_key: %s %s\n", proto, rcname(rc), val ? val : "(null)");
    free(val);
    const char* bkeys[] = {"bk"};
    size_t blens[] = {2};
    rc = memcached_mget_by_key(m, "group", 5, bkeys, blens, 1);
    val = memcached_fetch(m, key, &klen, &vlen, &flags, &rc);
    printf("[%s] mget_by_key: %s %s\n", proto, rcname(rc), val ? val : "(null)");
    free(val);
    val = memcached_fetch(m, key, &klen, &vlen, &flags, &rc);
    printf("[%s] mget_by_key end: %s %s\n", proto, rcname(rc), val ? val : "(null)");
    free(val);
    printf("[%s] delete_by_key: %s\n", proto,
           rcname(memcached_delete_by_key(m, "group", 5, "bk", 2, 0)));

    /* bad keys and values: refused, and nothing sent */
    unsigned long long sets_before = stat_number(m, "cmd_set");
    char longkey[300];
    memset(longkey, 'x', sizeof longkey);
    printf("[%s] empty key: %s\n", proto, rcname(memcached_set(m, "", 0, "v", 1, 0, 0)));
    printf("[%s] 251-byte key: %s\n", proto, rcname(memcached_set(m, longkey, 251, "v", 1, 0, 0)));
    printf("[%s] 250-byte key: %s\n", proto, rcname(memcached_set(m, longkey, 250, "v", 1, 0, 0)));
    unsigned long long sets_after = stat_number(m, "cmd_set");
    printf("[%s] sets sent for the three: %llu\n", proto, sets_after - sets_before);
    if (strcmp(proto, "binary") == 0) {
        /* Over binary libmemcached never checks a key's bytes (VERIFY_KEY cannot be set there):
         * spaces, control bytes and NUL go to memcached, which stores them (php-memcached's
         * keys_binary.phpt, pylibmc's test_zerokey and test_utf8_encoding). */
        static const char odd[] = "a key\twith \x01\x7f\xff\r\n and a NUL\0here";
        const size_t odd_len = sizeof odd - 1;
        static const char zero[] = "\0\x01";
        printf("[%s] verify_key on: %s\n", proto,
               rcname(memcached_behavior_set(m, MEMCACHED_BEHAVIOR_VERIFY_KEY, 1)));
        printf("[%s] odd key set: %s\n", proto, rcname(memcached_set(m, odd, odd_len, "ov", 2, 0, 0)));
        printf("[%s] zero key set: %s\n", proto, rcname(memcached_set(m, zero, 2, "zv", 2, 0, 0)));
        val = memcached_get(m, odd, odd_len, &vlen, &flags, &rc);
        printf("[%s] odd key get: %s %s\n", proto, rcname(rc), val ? val : "(null)");
        free(val);
        const char* okeys[] = {odd, zero, "absent key"};
        size_t olens[] = {odd_len, 2, 10};
        printf("[%s] odd mget: %s\n", proto, rcname(memcached_mget(m, okeys, olens, 3)));
        int seen_odd = 0, seen_zero = 0, others = 0;
        while ((val = memcached_fetch(m, key, &klen, &vlen, &flags, &rc)) != NULL) {
            if (klen == odd_len && memcmp(key, odd, odd_len) == 0 && strcmp(val, "ov") == 0)
                seen_odd++;
            else if (klen == 2 && memcmp(key, zero, 2) == 0 && strcmp(val, "zv") == 0)
                seen_zero++;
            else
                others++;
            free(val);
        }
        printf("[%s] odd fetch: odd %d zero %d others %d end %s\n", proto, seen_odd, seen_zero,
               others, rcname(rc));
        /* memcached_fetch_result carries the whole key (memcached_fetch cuts it at a NUL, as
         * libmemcached's strncpy does) */
        printf("[%s] odd mget again: %s\n", proto, rcname(memcached_mget(m, okeys, olens, 3)));
        memcached_result_st* res;
        seen_odd = seen_zero = others = 0;
        while ((res = memcached_fetch_result(m, NULL, &rc)) != NULL) {
            const size_t rk = memcached_result_key_length(res);
            if (rk == odd_len && memcmp(memcached_result_key_value(res), odd, odd_len) == 0)
                seen_odd++;
            else if (rk == 2 && memcmp(memcached_result_key_value(res), zero, 2) == 0)
                seen_zero++;
            else
                others++;
            memcached_result_free(res);
        }
        printf("[%s] odd fetch_result: odd %d zero %d others %d end %s\n", proto, seen_odd,
               seen_zero, others, rcname(rc));
        printf("[%s] odd key delete: %s\n", proto, rcname(memcached_delete(m, odd, odd_len, 0)));
    } else if (getenv("DROPIN_IS_FOLSOM")) {
        /* A key with a space: libmemcached sends it as it is over ascii (the server then reads
         * a second command from the rest, and libmemcached 1.1.4 aborts on an assertion a few
         * calls later). The drop-in refuses it, as folsom refuses every key the text protocol
         * cannot carry. */
        rc = memcached_set(m, "a b", 3, "v", 1, 0, 0);
        printf("~[%s] key with a space: %s\n", proto, rcname(rc));
        CHECK(rc == MEMCACHED_BAD_KEY_PROVIDED);
    }
    memcached_get(m, "", 0, &vlen, &flags, &rc);
    printf("[%s] get empty key: %s\n", proto, rcname(rc));
    size_t big = 2 * 1024 * 1024;
    char* bigv = calloc(1, big);
    printf("[%s] 2 MiB value: %s\n", proto, rcname(memcached_set(m, "big", 3, bigv, big, 0, 0)));
    free(bigv);
    show_get(m, proto, "k1");
}

/* The connections a behaviour costs: libmemcached closes them when NO_BLOCK, BINARY_PROTOCOL,
 * BUFFER_REQUESTS, TCP_NODELAY, TCP_KEEPALIVE, TCP_KEEPIDLE or a socket size is set (to any
 * value), and the next request connects again; stats alone do not (php-memcached's
 * stats_hang.phpt counts them). */
static void section_reconnects(int port, int binary) {
    memcached_st* m = memcached_create(NULL);
    memcached_server_add(m, "127.0.0.1", (in_port_t)port);
    memcached_behavior_set(m, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, (uint64_t)binary);
    static const struct {
        const char* name;
        memcached_behavior_t b;
        uint64_t v;
    } steps[] = {
        {"nothing", MEMCACHED_BEHAVIOR_MAX, 0},
        {"no_block on", MEMCACHED_BEHAVIOR_NO_BLOCK, 1},
        {"nothing", MEMCACHED_BEHAVIOR_MAX, 0},
        {"no_block off", MEMCACHED_BEHAVIOR_NO_BLOCK, 0},
        {"binary unchanged", MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 0},
        {"buffer_requests", MEMCACHED_BEHAVIOR_BUFFER_REQUESTS, 0},
        {"support_cas", MEMCACHED_BEHAVIOR_SUPPORT_CAS, 0},
        {"tcp_keepalive", MEMCACHED_BEHAVIOR_TCP_KEEPALIVE, 0},
        {"hash", MEMCACHED_BEHAVIOR_HASH, MEMCACHED_HASH_DEFAULT},
    };
    unsigned long long before = stat_number(m, "total_connections");
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; ++i) {
        if (steps[i].b != MEMCACHED_BEHAVIOR_MAX) {
            uint64_t v = steps[i].v;
            if (steps[i].b == MEMCACHED_BEHAVIOR_BINARY_PROTOCOL) v = (uint64_t)binary;
            memcached_behavior_set(m, steps[i].b, v);
        }
        const unsigned long long now_conns = stat_number(m, "total_connections");
        printf("connections after %s: +%llu\n", steps[i].name, now_conns - before);
        before = now_conns;
    }
    memcached_free(m);
}

/* What memcached_last_error() reports after each kind of outcome: answers that are not errors
 * (NOT FOUND, NOT STORED, ...) leave it at SUCCESS. */
static void section_last_error(memcached_st* m, const char* proto) {
    memcached_return_t rc;
    size_t len;
    uint32_t flags;
    uint64_t v;
#define SHOW(what, expr)                                                                     \
    do {                                                                                     \
        rc = (expr);                                                                         \
        printf("[%s] last error after %s: rc=%d last=%d\n", proto, what, rc,                \
               memcached_last_error(m));                                                     \
    } while (0)
    SHOW("set", memcached_set(m, "le", 2, "v", 1, 0, 0));
    SHOW("replace missing", memcached_replace(m, "le-missing", 10, "v", 1, 0, 0));
    SHOW("add existing", memcached_add(m, "le", 2, "v", 1, 0, 0));
    free(memcached_get(m, "le-missing", 10, &len, &flags, &rc));
    printf("[%s] last error after get miss: rc=%d last=%d\n", proto, rc, memcached_last_error(m));
    SHOW("delete missing", memcached_delete(m, "le-missing", 10, 0));
    SHOW("bad key", memcached_set(m, "", 0, "v", 1, 0, 0));
    SHOW("set after a bad key", memcached_set(m, "le", 2, "v", 1, 0, 0));
    SHOW("incr missing", memcached_increment(m, "le-missing", 10, 1, &v));
    SHOW("cas wrong", memcached_cas(m, "le", 2, "v", 1, 0, 0, 12345));
    SHOW("touch missing", memcached_touch(m, "le-missing", 10, 1));
#undef SHOW
}

    /* RANDOM: libmemcached draws libc's random() for every placement, whatever the key, so a
     * seeded srandom() gives the same servers on both libraries: by_key calls and
     * memcached_generate_hash draw too; real writes land on the configured servers; an mget by
     * group key asks one (drawn) server for every key, a plain mget draws per key. */
static void section_random(int port1, int port2, int binary) {
    {
        memcached_st* m = memcached_create(NULL);
        if (binary) memcached_behavior_set(m, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);
        memcached_server_add(m, "127.0.0.1", (in_port_t)port1);
        memcached_server_add(m, "127.0.0.1", (in_port_t)port2);
        memcached_return_t rc = memcached_behavior_set(m, MEMCACHED_BEHAVIOR_DISTRIBUTION,
                                                       MEMCACHED_DISTRIBUTION_RANDOM);
        printf("random: set %s, reads back %llu\n", rcname(rc),
               (unsigned long long)memcached_behavior_get(m, MEMCACHED_BEHAVIOR_DISTRIBUTION));
        char line[64];
        srandom(41);
        for (int k = 0; k < 40; ++k) {
            const memcached_instance_st* s = memcached_server_by_key(m, "same", 4, &rc);
            line[k] = (char)(s ? memcached_server_port(s) == port1 ? '0' : '1' : '9');
        }
        line[40] = 0;
        printf("random: server_by_key of one key, 40 times: %s\n", line);
        for (int k = 0; k < 10; ++k)
            line[k] = (char)('0' + memcached_generate_hash(m, "same", 4));
        line[10] = 0;
        printf("random: generate_hash of one key, 10 times: %s\n", line);
        memcached_st one, two;
        memcached_create(&one);
        memcached_create(&two);
        memcached_server_add(&one, "127.0.0.1", (in_port_t)port1);
        memcached_server_add(&two, "127.0.0.1", (in_port_t)port2);
        int stored = 0, on_one = 0, on_two = 0, on_both = 0;
        char keys[40][16];
        const char* key_ptrs[40];
        size_t key_lens[40];
        for (int k = 0; k < 40; ++k) {
            key_lens[k] = (size_t)snprintf(keys[k], sizeof keys[k], "rnd%d", k);
            key_ptrs[k] = keys[k];
            memcached_delete(&one, keys[k], key_lens[k], 0);
            memcached_delete(&two, keys[k], key_lens[k], 0);
        }
        srandom(42);
        for (int k = 0; k < 40; ++k) {
            stored += memcached_set(m, keys[k], key_lens[k], "r", 1, 0, 0) == MEMCACHED_SUCCESS;
        }
        for (int k = 0; k < 40; ++k) {
            const int a = memcached_exist(&one, keys[k], key_lens[k]) == MEMCACHED_SUCCESS;
            const int b = memcached_exist(&two, keys[k], key_lens[k]) == MEMCACHED_SUCCESS;
            on_one += a;
            on_two += b;
            on_both += a && b;
            line[k] = (char)('0' + a + 2 * b);
        }
        line[40] = 0;
        printf("random: 40 sets: %d stored, %d on the first server, %d on the second, %d on both"
               " (1 = first, 2 = second): %s\n",
               stored, on_one, on_two, on_both, line);
        for (int round = 0; round < 2; ++round) {
            rc = round ? memcached_mget(m, key_ptrs, key_lens, 40)
                       : memcached_mget_by_key(m, "grp", 3, key_ptrs, key_lens, 40);
            int hits = 0;
            memcached_result_st* r;
            memcached_return_t frc;
            while ((r = memcached_fetch_result(m, NULL, &frc)) != NULL) {
                hits++;
                memcached_result_free(r);
            }
            printf("random: %s of the 40 keys: %s, %d hits\n", round ? "mget" : "mget by key",
                   rcname(rc), hits);
        }
        memcached_free(&one);
        memcached_free(&two);
        memcached_free(m);
    }
}

static void section_placement(int port1, int port2) {
    static const struct {
        const char* name;
        memcached_server_distribution_t dist;
        memcached_hash_t hash;
    } modes[] = {
        {"modula/default", MEMCACHED_DISTRIBUTION_MODULA, MEMCACHED_HASH_DEFAULT},
        {"modula/md5", MEMCACHED_DISTRIBUTION_MODULA, MEMCACHED_HASH_MD5},
        {"modula/crc", MEMCACHED_DISTRIBUTION_MODULA, MEMCACHED_HASH_CRC},
        {"modula/fnv1_64", MEMCACHED_DISTRIBUTION_MODULA, MEMCACHED_HASH_FNV1_64},
        {"modula/fnv1a_64", MEMCACHED_DISTRIBUTION_MODULA, MEMCACHED_HASH_FNV1A_64},
        {"modula/fnv1_32", MEMCACHED_DISTRIBUTION_MODULA, MEMCACHED_HASH_FNV1_32},
        {"modula/fnv1a_32", MEMCACHED_DISTRIBUTION_MODULA, MEMCACHED_HASH_FNV1A_32},
        {"modula/murmur", MEMCACHED_DISTRIBUTION_MODULA, MEMCACHED_HASH_MURMUR},
        {"modula/murmur3", MEMCACHED_DISTRIBUTION_MODULA, MEMCACHED_HASH_MURMUR3},
        {"modula/jenkins", MEMCACHED_DISTRIBUTION_MODULA, MEMCACHED_HASH_JENKINS},
        {"consistent/default", MEMCACHED_DISTRIBUTION_CONSISTENT, MEMCACHED_HASH_DEFAULT},
        {"consistent/crc", MEMCACHED_DISTRIBUTION_CONSISTENT, MEMCACHED_HASH_CRC},
        {"consistent/murmur", MEMCACHED_DISTRIBUTION_CONSISTENT, MEMCACHED_HASH_MURMUR},
    };
    /* every hash of keys of every length class (the block loops and their tails), ASCII and
     * bytes from 0x80 up (which libmemcached's hashes read as signed chars); HSIEH, CUSTOM and
     * unknown numbers hash to 1 in Debian's library, which has no HSIEH */
    for (int h = MEMCACHED_HASH_DEFAULT; h <= MEMCACHED_HASH_MAX + 1; ++h) {
        printf("hash %d %s:", h, libmemcached_string_hash((memcached_hash_t)h));
        const char* text = "0123456789abcdefghijklmnopqrstuvwxyz";
        const char* bytes = "\xc3\xa9t\xc3\xa9 \xff\x80\x01\x7f\xfe\xc0z\x90\xa0\xb0\xd0\xe0\xf0";
        for (size_t n = 0; n <= 30; ++n)
            printf(" %u", memcached_generate_hash_value(text, n, (memcached_hash_t)h));
        for (size_t n = 0; n <= strlen(bytes); ++n)
            printf(" %u", memcached_generate_hash_value(bytes, n, (memcached_hash_t)h));
        printf("\n");
    }
    /* which hashes a handle takes (libhashkit refuses HSIEH and CUSTOM, takes and ignores a
     * number above MAX) */
    {
        memcached_st* m = memcached_create(NULL);
        for (int h = MEMCACHED_HASH_DEFAULT; h <= MEMCACHED_HASH_MAX + 1; ++h) {
            memcached_return_t rc = memcached_behavior_set(m, MEMCACHED_BEHAVIOR_HASH, (uint64_t)h);
            memcached_return_t rc2 =
                memcached_behavior_set(m, MEMCACHED_BEHAVIOR_KETAMA_HASH, (uint64_t)h);
            printf("set hash %d: %s, ketama hash: %s, now %llu %llu\n", h, rcname(rc), rcname(rc2),
                   (unsigned long long)memcached_behavior_get(m, MEMCACHED_BEHAVIOR_HASH),
                   (unsigned long long)memcached_behavior_get(m, MEMCACHED_BEHAVIOR_KETAMA_HASH));
        }
        memcached_free(m);
    }
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; ++i) {
        memcached_st* m = memcached_create(NULL);
        memcached_server_add(m, "127.0.0.1", (in_port_t)port1);
        memcached_server_add(m, "127.0.0.1", (in_port_t)port2);
        memcached_server_add(m, "localhost", (in_port_t)port2);
        memcached_behavior_set(m, MEMCACHED_BEHAVIOR_DISTRIBUTION, modes[i].dist);
        memcached_behavior_set(m, MEMCACHED_BEHAVIOR_HASH, modes[i].hash);
        char line[256];
        size_t n = 0;
        for (int k = 0; k < 60; ++k) {
            char key[32];
            int len = snprintf(key, sizeof key, k % 2 ? "key:%d" : "\xc3\xa9\xff%d", k * 7919);
            memcached_return_t rc;
            const memcached_instance_st* s = memcached_server_by_key(m, key, (size_t)len, &rc);
            line[n++] = (char)('0' + (s ? memcached_server_port(s) == port1 ? 0
                                         : strcmp(memcached_server_name(s), "localhost") == 0 ? 2
                                                                                              : 1
                                       : 9));
        }
        line[n] = 0;
        printf("placement %s: %s\n", modes[i].name, line);
        printf("hash %s of \"hello\": %u\n", modes[i].name,
               memcached_generate_hash_value("hello", 5, modes[i].hash));
        memcached_free(m);
    }
    /* the rings as libmemcached builds them: when the servers or the distribution change,
     * with the key hash of that moment (a key hash set afterwards hashes the keys only); the
     * distribution hash places nothing; a weight above 1 weighs the ring only when given under
     * a consistent distribution; spymemcached's names, weighted or not */
    {
        static const struct {
            const char* name;
            int dist_first, hash, dist, ketama_hash, weight, weighted;
        } rings[] = {
            {"consistent, ketama hash md5", 0, -1, MEMCACHED_DISTRIBUTION_CONSISTENT,
             MEMCACHED_HASH_MD5, 0, 0},
            {"consistent, then hash fnv1a_32", 1, MEMCACHED_HASH_FNV1A_32,
             MEMCACHED_DISTRIBUTION_CONSISTENT, -1, 0, 0},
            {"hash fnv1a_32, then consistent", 0, MEMCACHED_HASH_FNV1A_32,
             MEMCACHED_DISTRIBUTION_CONSISTENT, -1, 0, 0},
            {"weights, then consistent", 0, -1, MEMCACHED_DISTRIBUTION_CONSISTENT, -1, 3, 0},
            {"consistent, then weights", 1, -1, MEMCACHED_DISTRIBUTION_CONSISTENT, -1, 3, 0},
            {"weighted, then hash default", 1, MEMCACHED_HASH_DEFAULT,
             MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED, -1, 3, 0},
            {"ketama weighted, then hash fnv1_64", 0, MEMCACHED_HASH_FNV1_64, -1, -1, 0, 1},
            {"spy", 0, -1, MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY, -1, 0, 0},
            {"spy, then hash md5", 1, MEMCACHED_HASH_MD5,
             MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY, -1, 0, 0},
            {"hash murmur, then spy", 0, MEMCACHED_HASH_MURMUR,
             MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY, -1, 0, 0},
            {"ketama weighted, then spy", 0, -1, MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY, -1,
             2, 1},
        };
        for (size_t i = 0; i < sizeof rings / sizeof rings[0]; ++i) {
            memcached_st* m = memcached_create(NULL);
            if (rings[i].dist_first && rings[i].dist >= 0)
                memcached_behavior_set(m, MEMCACHED_BEHAVIOR_DISTRIBUTION, (uint64_t)rings[i].dist);
            if (rings[i].weighted) memcached_behavior_set(m, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
            memcached_server_add_with_weight(m, "127.0.0.1", (in_port_t)port1,
                                             (uint32_t)rings[i].weight);
            memcached_server_add(m, "127.0.0.1", (in_port_t)port2);
            memcached_server_add(m, "localhost", (in_port_t)port2);
            if (rings[i].hash >= 0 && !rings[i].dist_first)
                memcached_behavior_set(m, MEMCACHED_BEHAVIOR_HASH, (uint64_t)rings[i].hash);
            if (!rings[i].dist_first && rings[i].dist >= 0)
                memcached_behavior_set(m, MEMCACHED_BEHAVIOR_DISTRIBUTION, (uint64_t)rings[i].dist);
            if (rings[i].hash >= 0 && rings[i].dist_first)
                memcached_behavior_set(m, MEMCACHED_BEHAVIOR_HASH, (uint64_t)rings[i].hash);
            if (rings[i].ketama_hash >= 0)
                memcached_behavior_set(m, MEMCACHED_BEHAVIOR_KETAMA_HASH,
                                       (uint64_t)rings[i].ketama_hash);
            char line[256];
            size_t n = 0;
            for (int k = 0; k < 80; ++k) {
                char key[32];
                int len = snprintf(key, sizeof key, k % 2 ? "key:%d" : "\xc3\xa9\xff%d", k * 7919);
                line[n++] = (char)('0' + memcached_generate_hash(m, key, (size_t)len));
            }
            line[n] = 0;
            printf("ring %s: %s (weighted %llu)\n", rings[i].name, line,
                   (unsigned long long)memcached_behavior_get(m, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED));
            memcached_free(m);
        }
    }
    /* virtual buckets (php's memcached_bucket_set) */
    {
        memcached_st* m = memcached_create(NULL);
        for (int i = 0; i < 3; ++i) memcached_server_add(m, "127.0.0.1", (in_port_t)(port1 + i));
        const uint32_t host_map[] = {2, 0, 1, 1, 0, 2, 2, 1};
        printf("bucket_set: %s\n", rcname(memcached_bucket_set(m, host_map, NULL, 8, 0)));
        printf("bucket_set without a map: %s\n", rcname(memcached_bucket_set(m, NULL, NULL, 8, 0)));
        char line[256];
        size_t n = 0;
        for (int k = 0; k < 60; ++k) {
            char key[32];
            int len = snprintf(key, sizeof key, "key:%d", k * 7919);
            line[n++] = (char)('0' + memcached_generate_hash(m, key, (size_t)len));
        }
        line[n] = 0;
        printf("placement buckets: %s (dist=%llu)\n", line,
               (unsigned long long)memcached_behavior_get(m, MEMCACHED_BEHAVIOR_DISTRIBUTION));
        memcached_free(m);
    }
    /* ketama, weighted ketama (php's OPT_LIBKETAMA_COMPATIBLE) with and without weights */
    for (int mode = 0; mode < 3; ++mode) {
        memcached_st* m = memcached_create(NULL);
        memcached_server_add_with_weight(m, "127.0.0.1", (in_port_t)port1, mode == 2 ? 3 : 0);
        memcached_server_add_with_weight(m, "127.0.0.1", (in_port_t)port2, mode == 2 ? 1 : 0);
        memcached_behavior_set(m, mode == 0 ? MEMCACHED_BEHAVIOR_KETAMA
                                            : MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
        char line[256];
        size_t n = 0;
        for (int k = 0; k < 60; ++k) {
            char key[32];
            int len = snprintf(key, sizeof key, "key:%d", k * 7919);
            memcached_return_t rc;
            const memcached_instance_st* s = memcached_server_by_key(m, key, (size_t)len, &rc);
            line[n++] = (char)('0' + (s ? memcached_server_port(s) == port1 ? 0 : 1 : 9));
        }
        line[n] = 0;
        printf("placement ketama mode %d: %s (hash=%llu ketama_hash=%llu dist=%llu)\n", mode, line,
               (unsigned long long)memcached_behavior_get(m, MEMCACHED_BEHAVIOR_HASH),
               (unsigned long long)memcached_behavior_get(m, MEMCACHED_BEHAVIOR_KETAMA_HASH),
               (unsigned long long)memcached_behavior_get(m, MEMCACHED_BEHAVIOR_DISTRIBUTION));
        memcached_free(m);
    }
}

/* memcached_set_encoding_key: what an encrypting handle stores, as raw bytes read back by a
 * handle without the key (compared between the libraries: the same ciphertext), and what it
 * reads. mode "write" stores, "read" reads what the other library stored, "both" does both. */
static const char aes_key[] = "a 40-byte encoding key for AES values...";
static int aes_main(int port, const char* mode, const char* proto) {
    static const size_t lengths[] = {0, 1, 15, 16, 17, 100};
    char value[128];
    for (size_t i = 0; i < sizeof value; ++i) value[i] = (char)('a' + i % 26);
    memcached_st* enc = memcached_create(NULL);
    memcached_st* raw = memcached_create(NULL);
    const int binary = strcmp(proto, "binary") == 0;
    memcached_behavior_set(enc, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, (uint64_t)binary);
    memcached_behavior_set(raw, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, (uint64_t)binary);
    memcached_server_add(enc, "127.0.0.1", (in_port_t)port);
    memcached_server_add(raw, "127.0.0.1", (in_port_t)port);
    printf("set key: %s\n", rcname(memcached_set_encoding_key(enc, aes_key, strlen(aes_key))));
    memcached_return_t rc;
    size_t len;
    uint32_t flags;
    char key[32];
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; ++i) {
        snprintf(key, sizeof key, "aes%zu", lengths[i]);
        if (strcmp(mode, "read") != 0) {
            printf("set %s: %s\n", key,
                   rcname(memcached_set(enc, key, strlen(key), value, lengths[i], 0, 7)));
            char* c = memcached_get(raw, key, strlen(key), &len, &flags, &rc);
            printf("stored %s: %s %zu bytes:", key, rcname(rc), len);
            for (size_t b = 0; c && b < len; ++b) printf(" %02x", (unsigned char)c[b]);
            printf("\n");
            free(c);
        }
        if (strcmp(mode, "write") != 0) {
            flags = 0;
            char* v = memcached_get(enc, key, strlen(key), &len, &flags, &rc);
            printf("read %s: %s flags %u same=%d\n", key, rcname(rc), flags,
                   v != NULL && len == lengths[i] && memcmp(v, value, len) == 0);
            free(v);
            const char* keys[] = {key};
            size_t lens[] = {strlen(key)};
            memcached_mget(enc, keys, lens, 1);
            memcached_result_st* r = memcached_fetch_result(enc, NULL, &rc);
            printf("fetch %s: %s same=%d\n", key, rcname(rc),
                   r != NULL && memcached_result_length(r) == lengths[i] &&
                       memcmp(memcached_result_value(r), value, lengths[i]) == 0);
            memcached_result_free(r);
            while ((r = memcached_fetch_result(enc, NULL, &rc)) != NULL) /* to the END */
                memcached_result_free(r);
            printf("fetch %s end: %s\n", key, rcname(rc));
        }
    }
    if (strcmp(mode, "both") == 0) {
        /* what the key cannot read, and what an encrypting handle refuses */
        memcached_set(raw, "plain", 5, "not encrypted", 13, 0, 0);
        char* v = memcached_get(enc, "plain", 5, &len, &flags, &rc);
        printf("read plain: %s null=%d\n", rcname(rc), v == NULL);
        free(v);
        printf("append: %s\n", rcname(memcached_append(enc, "aes1", 4, "x", 1, 0, 0)));
        uint64_t n;
        printf("incr: %s\n", rcname(memcached_increment(enc, "aes1", 4, 1, &n)));
        memcached_st* clone = memcached_clone(NULL, enc);
        v = memcached_get(clone, "aes16", 5, &len, &flags, &rc);
        printf("clone reads: %s same=%d\n", rcname(rc), v != NULL && len == 16 && memcmp(v, value, 16) == 0);
        free(v);
        memcached_free(clone);
        printf("key off: %s\n", rcname(memcached_set_encoding_key(enc, NULL, 0)));
        v = memcached_get(enc, "plain", 5, &len, &flags, &rc);
        printf("read plain without key: %s %s\n", rcname(rc), v ? v : "(null)");
        free(v);
    }
    memcached_free(enc);
    memcached_free(raw);
    return failures ? 1 : 0;
}

/* A memcached -S (SASL) server: php-memcached's tests flush it before they log in, which
 * libmemcached lets pass over binary (it reads the reply without looking at its status). */
static int sasl_main(int port, const char* user, const char* password) {
    memcached_st* m = memcached_create(NULL);
    memcached_behavior_set(m, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);
    memcached_server_add(m, "127.0.0.1", (in_port_t)port);
    printf("flush before login: %s\n", rcname(memcached_flush(m, 0)));
    printf("last error: %s\n", rcname(memcached_last_error(m)));
    /* memcached closed the connection after refusing the flush: libmemcached connects again at
     * once (AUTHENTICATION FAILURE), the drop-in waits out its retry timeout first (CONNECTION
     * FAILURE) */
    printf("~set before login: %s\n", rcname(memcached_set(m, "sk", 2, "sv", 2, 0, 0)));
    printf("login: %s\n", rcname(memcached_set_sasl_auth_data(m, user, password)));
    printf("set: %s\n", rcname(memcached_set(m, "sk", 2, "sv", 2, 0, 0)));
    size_t len;
    uint32_t flags;
    memcached_return_t rc;
    char* v = memcached_get(m, "sk", 2, &len, &flags, &rc);
    printf("get: %s %s\n", rcname(rc), v ? v : "(null)");
    free(v);
    printf("flush: %s\n", rcname(memcached_flush(m, 0)));
    memcached_free(m);
    return failures ? 1 : 0;
}

int main(int argc, char** argv) {
    if (argc == 5 && strcmp(argv[1], "aes") == 0) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        check_loaded_library();
        return aes_main(atoi(argv[2]), argv[3], argv[4]);
    }
    if (argc == 5 && strcmp(argv[1], "sasl") == 0) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        check_loaded_library();
        return sasl_main(atoi(argv[2]), argv[3], argv[4]);
    }
    if (argc != 6) {
        fprintf(stderr, "usage: %s port1 port2 pid2 dead_port ascii|binary\n", argv[0]);
        fprintf(stderr, "       %s sasl port user password\n", argv[0]);
        return 2;
    }
    const int port1 = atoi(argv[1]), port2 = atoi(argv[2]), dead_port = atoi(argv[4]);
    const pid_t pid2 = (pid_t)atoi(argv[3]);
    const int binary = strcmp(argv[5], "binary") == 0;
    const char* proto = argv[5];
    setvbuf(stdout, NULL, _IOLBF, 0);
    check_loaded_library();
    printf("lib version %s\n", memcached_lib_version());

    /* ---- creation: the caller's storage ------------------------------------------------- */
    memcached_st stack_memc;
    memset(&stack_memc, 0xab, sizeof stack_memc);
    memcached_st* m = memcached_create(&stack_memc);
    CHECK(m == &stack_memc);
    for (int rc = 0; rc <= MEMCACHED_MAXIMUM_RETURN; ++rc)
        printf("strerror %d %s\n", rc, memcached_strerror(m, (memcached_return_t)rc));
    for (int b = 0; b < MEMCACHED_BEHAVIOR_MAX; ++b)
        printf("default behavior %d = %llu\n", b,
               (unsigned long long)memcached_behavior_get(m, (memcached_behavior_t)b));
    printf("last error after reading every behavior: %d\n", memcached_last_error(m));
    printf("~last error message: %s\n", memcached_last_error_message(m));
    printf("no servers get: ");
    {
        memcached_return_t rc;
        size_t len;
        uint32_t flags;
        memcached_get(m, "k", 1, &len, &flags, &rc);
        printf("%s\n", rcname(rc));
    }
    memcached_server_add(m, "127.0.0.1", (in_port_t)port1);
    if (binary) memcached_behavior_set(m, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);
    printf("server count %u\n", memcached_server_count(m));
    printf("flush: %s\n", rcname(memcached_flush(m, 0)));
    section_basic(m, proto);
    section_last_error(m, proto);

    /* ---- BUFFER_REQUESTS: sets wait for memcached_flush_buffers or the next other request */
    {
        memcached_st other;
        memcached_create(&other);
        memcached_server_add(&other, "127.0.0.1", (in_port_t)port1);
        memcached_delete(&other, "buffered", 8, 0);
        memcached_behavior_set(m, MEMCACHED_BEHAVIOR_BUFFER_REQUESTS, 1);
        printf("[%s] buffered set: %s\n", proto, rcname(memcached_set(m, "buffered", 8, "b", 1, 0, 0)));
        show_get(&other, "before flush_buffers", "buffered");
        printf("[%s] flush_buffers: %s\n", proto, rcname(memcached_flush_buffers(m)));
        /* flush_buffers only writes: a round trip on m makes the server have processed the
           buffered set before another connection looks (otherwise the result is a race). */
        (void)memcached_exist(m, "sync", 4);
        show_get(&other, "after flush_buffers", "buffered");
        printf("[%s] buffered set: %s\n", proto, rcname(memcached_set(m, "buffered", 8, "c", 1, 0, 0)));
        printf("[%s] then an add: %s\n", proto, rcname(memcached_add(m, "buffered2", 9, "d", 1, 0, 0)));
        (void)memcached_exist(m, "sync", 4);
        show_get(&other, "after the add", "buffered");
        memcached_behavior_set(m, MEMCACHED_BEHAVIOR_BUFFER_REQUESTS, 0);
        memcached_free(&other);
    }

    /* ---- NOREPLY: writes sent without waiting for their answer, SUCCESS whatever it is ---- */
    {
        memcached_st nr;
        memcached_create(&nr);
        memcached_server_add(&nr, "127.0.0.1", (in_port_t)port1);
        if (binary) memcached_behavior_set(&nr, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);
        memcached_delete(&nr, "nr1", 3, 0);
        memcached_delete(&nr, "nr2", 3, 0);
        memcached_delete(&nr, "nr3", 3, 0);
        memcached_set(&nr, "nrc", 3, "5", 1, 0, 0);
        memcached_return_t nrc = memcached_behavior_set(&nr, MEMCACHED_BEHAVIOR_NOREPLY, 1);
        printf("[%s] noreply on: %s, reads back %llu\n", proto, rcname(nrc),
               (unsigned long long)memcached_behavior_get(&nr, MEMCACHED_BEHAVIOR_NOREPLY));
        uint64_t v = 7;
        printf("[%s] noreply set: %s\n", proto,
               rcname(memcached_set(&nr, "nr1", 3, "v1", 2, 0, 3)));
        printf("[%s] noreply append: %s\n", proto,
               rcname(memcached_append(&nr, "nr1", 3, "+a", 2, 0, 0)));
        printf("[%s] noreply prepend: %s\n", proto,
               rcname(memcached_prepend(&nr, "nr1", 3, "p-", 2, 0, 0)));
        printf("[%s] noreply add new: %s\n", proto,
               rcname(memcached_add(&nr, "nr2", 3, "two", 3, 0, 0)));
        printf("[%s] noreply replace: %s\n", proto,
               rcname(memcached_replace(&nr, "nr2", 3, "TWO", 3, 0, 9)));
        printf("[%s] noreply set by key: %s\n", proto,
               rcname(memcached_set_by_key(&nr, "g", 1, "nr3", 3, "three", 5, 0, 0)));
        printf("[%s] noreply delete: %s\n", proto, rcname(memcached_delete(&nr, "nr3", 3, 0)));
        nrc = memcached_increment(&nr, "nrc", 3, 10, &v);
        printf("[%s] noreply incr: %s value %llu\n", proto, rcname(nrc), (unsigned long long)v);
        v = 7;
        nrc = memcached_decrement(&nr, "nrc", 3, 2, &v);
        printf("[%s] noreply decr: %s value %llu\n", proto, rcname(nrc), (unsigned long long)v);
        if (!binary) {
            /* Writes the server refuses: over ascii memcached answers nothing to a noreply
               command, failure or not. (Over binary the refusal of a quiet write comes back
               unasked, and libmemcached reads it as the answer of a later request.) */
            printf("[%s] noreply add existing: %s\n", proto,
                   rcname(memcached_add(&nr, "nr1", 3, "x", 1, 0, 0)));
            printf("[%s] noreply replace missing: %s\n", proto,
                   rcname(memcached_replace(&nr, "nrmissing", 9, "x", 1, 0, 0)));
            printf("[%s] noreply cas mismatch: %s\n", proto,
                   rcname(memcached_cas(&nr, "nr2", 3, "x", 1, 0, 0, 12345)));
            printf("[%s] noreply delete missing: %s\n", proto,
                   rcname(memcached_delete(&nr, "nrmissing", 9, 0)));
            v = 7;
            nrc = memcached_increment(&nr, "nrmissing", 9, 1, &v);
            printf("[%s] noreply incr missing: %s value %llu\n", proto, rcname(nrc),
                   (unsigned long long)v);
        }
        printf("[%s] noreply bad key: %s\n", proto,
               rcname(memcached_set(&nr, "", 0, "x", 1, 0, 0)));
        /* With BUFFER_REQUESTS too: SUCCESS over ascii, BUFFERED over binary (libmemcached's
           two storage paths look at the two in a different order). */
        memcached_delete(&nr, "nrb", 3, 0);
        settle(&nr);
        memcached_behavior_set(&nr, MEMCACHED_BEHAVIOR_BUFFER_REQUESTS, 1);
        printf("[%s] noreply buffered set: %s\n", proto,
               rcname(memcached_set(&nr, "nrb", 3, "held", 4, 0, 0)));
        printf("[%s] noreply flush_buffers: %s\n", proto, rcname(memcached_flush_buffers(&nr)));
        settle(&nr);
        memcached_behavior_set(&nr, MEMCACHED_BEHAVIOR_BUFFER_REQUESTS, 0);
        /* The server's state, read after the writes were settled. */
        memcached_behavior_set(&nr, MEMCACHED_BEHAVIOR_NOREPLY, 0);
        show_get(&nr, "after noreply", "nrb");
        show_get(&nr, "after noreply", "nr1");
        show_get(&nr, "after noreply", "nr2");
        show_get(&nr, "after noreply", "nr3");
        show_get(&nr, "after noreply", "nrc");
        show_get(&nr, "after noreply", "nrmissing");
        /* A delete trigger needs the answer: refused under NOREPLY. */
        printf("[%s] delete trigger: %s\n", proto,
               rcname(memcached_callback_set(&nr, MEMCACHED_CALLBACK_DELETE_TRIGGER,
                                             (void*)on_delete)));
        memcached_behavior_set(&nr, MEMCACHED_BEHAVIOR_NOREPLY, 1);
        printf("[%s] noreply delete with a trigger: %s\n", proto,
               rcname(memcached_delete(&nr, "nr1", 3, 0)));
        memcached_behavior_set(&nr, MEMCACHED_BEHAVIOR_NOREPLY, 0);
        show_get(&nr, "after the refused delete", "nr1");
        memcached_free(&nr);
    }

    /* ---- fork: the child uses the handle it inherited (PHP-FPM does) --------------------- */
    {
        memcached_return_t frc = memcached_set(m, "forkkey", 7, "parent", 6, 0, 0);
        printf("[%s] before fork set: %s\n", proto, rcname(frc));
        unsigned long long conns = stat_number(m, "total_connections");
        fflush(stdout);
        pid_t child = fork();
        if (child == 0) {
            size_t len;
            uint32_t flags;
            char* v = memcached_get(m, "forkkey", 7, &len, &flags, &frc);
            int ok = frc == MEMCACHED_SUCCESS && v && len == 6 && memcmp(v, "parent", 6) == 0;
            free(v);
            ok = ok && memcached_set(m, "childkey", 8, "child", 5, 0, 0) == MEMCACHED_SUCCESS;
            _exit(ok ? 0 : 1);
        }
        int status = -1;
        waitpid(child, &status, 0);
        printf("[%s] fork child: exit %d\n", proto, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        show_get(m, "after fork", "forkkey");
        show_get(m, "after fork", "childkey");
        /* the drop-in's child connects afresh (the parent's sockets stay the parent's) */
        const unsigned long long opened = stat_number(m, "total_connections") - conns;
        printf("~[%s] connections opened since the fork: %llu\n", proto, opened);
        if (getenv("DROPIN_IS_FOLSOM")) CHECK(opened == 1);
    }

    /* ---- servers, cursor, version, stats ---------------------------------------------- */
    memcached_server_list_st list = memcached_servers_parse("127.0.0.1:1,localhost:2:5");
    printf("servers_parse count %u\n", memcached_server_list_count(list));
    memcached_return_t rc;
    list = memcached_server_list_append(list, "10.0.0.1", 4, &rc);
    printf("list_append: %s count %u\n", rcname(rc), memcached_server_list_count(list));
    memcached_server_list_free(list);
    char servers[64];
    snprintf(servers, sizeof servers, "127.0.0.1:%d", port2);
    list = memcached_servers_parse(servers);
    printf("push: %s\n", rcname(memcached_server_push(m, list)));
    memcached_server_list_free(list);
    printf("server count %u\n", memcached_server_count(m));
    memcached_server_fn cursor_fns[] = {print_server, fail_first};
    printf("cursor: %s\n", rcname(memcached_server_cursor(m, cursor_fns, NULL, 2)));
    printf("version: %s\n", rcname(memcached_version(m)));
    const memcached_instance_st* inst = memcached_server_instance_by_position(m, 0);
    printf("instance 0 %s:%u major %u\n", memcached_server_name(inst),
           (unsigned)memcached_server_port(inst), (unsigned)memcached_server_major_version(inst));
    memcached_stat_st* st = memcached_stat(m, NULL, &rc);
    printf("stat: %s\n", rcname(rc));
    if (st) {
        CHECK(st[0].pid > 0 && st[1].pid > 0 && st[0].pid != st[1].pid);
        CHECK(st[1].pid == pid2);
        CHECK(strncmp(st[0].version, "1.", 2) == 0);
        char** names = memcached_stat_get_keys(m, &st[0], &rc);
        printf("stat keys: %s", rcname(rc));
        for (char** p = names; p && *p; ++p) {
            char* value = memcached_stat_get_value(m, &st[0], *p, &rc);
            printf(" %s(%s)", *p, rcname(rc));
            free(value);
        }
        printf("\n");
        free(names);
        char* value = memcached_stat_get_value(m, &st[0], "no_such_stat", &rc);
        printf("stat unknown key: %s null=%d\n", rcname(rc), value == NULL);
        free(value);
        memcached_analysis_st* a = memcached_analyze(m, st, &rc);
        printf("analyze: %s\n", rcname(rc));
        if (a) {
            CHECK(a->root == m);
            printf("~analyze avg=%u hit_ratio=%.2f most_used=%llu\n", a->average_item_size,
                   a->pool_hit_ratio, (unsigned long long)a->most_used_bytes);
            free(a);
        }
        free(st); /* pylibmc releases it with libc's free() */
    }
    struct stat_seen seen = {0, 0};
    rc = memcached_stat_execute(m, NULL, on_stat, &seen);
    printf("stat_execute: %s pid_seen=%d\n", rcname(rc), seen.pid_seen);
    CHECK(seen.count > 20);
    /* memcached does not answer the binary VERBOSITY command: the drop-in refuses it there */
    printf("%sverbosity: %s\n", binary ? "~" : "", rcname(memcached_verbosity(m, 1)));
    printf("flush_buffers: %s\n", rcname(memcached_flush_buffers(m)));

    /* ---- prefix key, user data, clone ---------------------------------------------------- */
    rc = memcached_callback_set(m, MEMCACHED_CALLBACK_PREFIX_KEY, "pfx:");
    printf("prefix set: %s\n", rcname(rc));
    printf("prefix get: %s\n", (char*)memcached_callback_get(m, MEMCACHED_CALLBACK_PREFIX_KEY, &rc));
    printf("prefixed set: %s\n", rcname(memcached_set(m, "pk", 2, "pv", 2, 0, 0)));
    {
        const char* pkeys[] = {"pk"};
        size_t plens[] = {2};
        memcached_mget(m, pkeys, plens, 1);
        memcached_result_st* r = memcached_fetch_result(m, NULL, &rc);
        printf("prefixed fetch key: %s %.*s\n", rcname(rc), r ? (int)memcached_result_key_length(r) : 0,
               r ? memcached_result_key_value(r) : "");
        memcached_result_free(r);
    }
    memcached_st* clone = memcached_clone(NULL, m);
    CHECK(clone != NULL);
    printf("clone servers %u\n", memcached_server_count(clone));
    memcached_callback_set(clone, MEMCACHED_CALLBACK_PREFIX_KEY, NULL);
    show_get(clone, "unprefixed clone", "pfx:pk");
    memcached_free(clone);
    memcached_callback_set(m, MEMCACHED_CALLBACK_PREFIX_KEY, NULL);
    int marker = 0;
    memcached_set_user_data(m, &marker);
    CHECK(memcached_get_user_data(m) == &marker);
    /* The struct's own fields stay readable after memcached_free() of a caller's struct, as
     * libmemcached reads them: Perl's Memcached::libmemcached reads its user data back right
     * after freeing (its 02-create.t). Without a prefix the prefix is NULL and SUCCESS. */
    {
        memcached_st own;
        CHECK(memcached_create(&own) == &own);
        memcached_callback_get(&own, MEMCACHED_CALLBACK_PREFIX_KEY, &rc);
        printf("no prefix get: %s\n", rcname(rc));
        memcached_callback_get(&own, MEMCACHED_CALLBACK_USER_DATA, &rc);
        printf("no user data get: %s\n", rcname(rc));
        memcached_callback_set(&own, MEMCACHED_CALLBACK_USER_DATA, &marker);
        memcached_free(&own);
        void* back = memcached_callback_get(&own, MEMCACHED_CALLBACK_USER_DATA, &rc);
        printf("user data after free: %s same=%d\n", rcname(rc), back == &marker);
        memcached_st* fresh = memcached_clone(NULL, NULL);
        printf("clone of nothing: %d servers=%u\n", fresh != NULL, memcached_server_count(fresh));
        memcached_free(fresh);
    }

    /* ---- user allocators: values come from the user's malloc ------------------------------ */
    rc = memcached_set_memory_allocators(m, u_malloc, u_free, u_realloc, u_calloc, &user_mallocs);
    printf("set allocators: %s\n", rcname(rc));
    rc = memcached_set_memory_allocators(m, u_malloc, NULL, u_realloc, u_calloc, &user_mallocs);
    printf("set partial allocators: %s\n", rcname(rc));
    CHECK(memcached_get_memory_allocators_context(m) == &user_mallocs);
    user_mallocs = 0;
    {
        size_t len;
        uint32_t flags;
        memcached_set(m, "alloc", 5, "allocated", 9, 0, 0);
        char* v = memcached_get(m, "alloc", 5, &len, &flags, &rc);
        printf("~user allocator: value %s, user mallocs %d\n", v ? "returned" : "null", user_mallocs);
        CHECK(v != NULL);
        int frees = user_frees;
        memcached_free_fn ufree = NULL;
        memcached_get_memory_allocators(m, NULL, &ufree, NULL, NULL);
        ufree(m, v, &user_mallocs);
        CHECK(user_frees == frees + 1);
    }
    memcached_set_memory_allocators(m, NULL, NULL, NULL, NULL, NULL);

    /* ---- configuration strings ------------------------------------------------------------ */
    char conf[256];
    int conf_len = snprintf(conf, sizeof conf, "--SERVER=127.0.0.1:%d --SERVER=127.0.0.1:%d/?2 %s",
                            port1, port2, binary ? "--BINARY-PROTOCOL" : "--TCP-NODELAY");
    memcached_st* cm = memcached(conf, (size_t)conf_len);
    printf("memcached(config): %s servers %u binary %llu\n", cm ? "ok" : "NULL",
           cm ? memcached_server_count(cm) : 0,
           cm ? (unsigned long long)memcached_behavior_get(cm, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL)
              : 99ULL);
    if (cm) show_get(cm, "config handle", "k1");
    memcached_free(cm);
    char err[256] = "";
    rc = libmemcached_check_configuration("--SERVER=127.0.0.1:1 --NO-SUCH-OPTION", 38, err,
                                          sizeof err);
    printf("check_configuration bad: %s\n", rcname(rc));
    printf("~check_configuration message: %s\n", err);
    /* libmemcached's parser messages (libmemcached-tools print them), without the handle's
     * address and libmemcached's source location */
    {
        static const char* const bad[] = {
            "--SERVER=127.0.0.1:1 --NO-SUCH-OPTION", "--NO-SUCH", "bogus", "--HASH=NOPE",
            "--DISTRIBUTION=nope", "--SERVER=", "--VERIFY-KEY --NO-SUCH", ""};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
            err[0] = 0;
            rc = libmemcached_check_configuration(bad[i], strlen(bad[i]), err, sizeof err);
            const char* text = err;
            if (text[0] == '(' && strstr(text, ") ")) text = strstr(text, ") ") + 2;
            char* at = strstr(err, " -> ");
            if (at) *at = 0;
            printf("check_configuration \"%s\": %s: %s\n", bad[i], rcname(rc), text);
        }
    }
    const char* good = "--SERVER=host-a.example:1 --SERVER=10.0.0.2:2/?3 --NAMESPACE=foo --HASH=MD5 --SUPPORT-CAS";
    rc = libmemcached_check_configuration(good, strlen(good), err, sizeof err);
    printf("check_configuration good: %s\n", rcname(rc));

    /* ---- keys with a space, control bytes or a NUL, VERIFY_KEY off ------------------------ */
    /* Over binary libmemcached sends any bytes, and so does the drop-in. (Over ascii Debian's
       library sends them into the command line: a set aborts the process on an assertion, a
       get of "a b" asks for two keys, a newline desynchronises the connection; the drop-in
       refuses them, BAD_KEY_PROVIDED, nothing sent: docs/libmemcached-dropin.md.) */
    if (binary) {
        static const struct {
            const char* name;
            const char* key;
            size_t len;
        } odd[] = {{"space", "a b", 3},     {"newline", "a\nb", 3}, {"cr", "a\rb", 3},
                   {"tab", "a\tb", 3},     {"nul", "a\0b", 3},     {"ctrl", "a\001b", 3},
                   {"del", "a\177b", 3},   {"utf8", "\xc3\xa9t\xc3\xa9", 5}};
        memcached_st ok;
        memcached_create(&ok);
        memcached_server_add(&ok, "127.0.0.1", (in_port_t)port1);
        memcached_behavior_set(&ok, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);
        for (size_t i = 0; i < sizeof odd / sizeof odd[0]; ++i) {
            memcached_return_t src = memcached_set(&ok, odd[i].key, odd[i].len, odd[i].name,
                                                   strlen(odd[i].name), 0, (uint32_t)i);
            size_t len = 0;
            uint32_t flags = 0;
            memcached_return_t grc;
            char* v = memcached_get(&ok, odd[i].key, odd[i].len, &len, &flags, &grc);
            memcached_return_t drc = memcached_delete(&ok, odd[i].key, odd[i].len, 0);
            printf("[binary] key with %s: set %s, get %s %.*s flags %u, delete %s\n", odd[i].name,
                   rcname(src), rcname(grc), v ? (int)len : 0, v ? v : "", flags, rcname(drc));
            free(v);
        }
        memcached_free(&ok);
    }

    /* ---- UDP: libmemcached 1.1.4 deprecates memcached_server_add_udp ----------------------- */
    {
        memcached_st u;
        memcached_create(&u);
        printf("add_udp: %s\n",
               rcname(memcached_server_add_udp(&u, "127.0.0.1", (in_port_t)port1)));
        printf("add_udp_with_weight: %s, servers %u\n",
               rcname(memcached_server_add_udp_with_weight(&u, "127.0.0.1", (in_port_t)port1, 2)),
               memcached_server_count(&u));
        /* USE_UDP: libmemcached sends writes in datagrams; not in the drop-in (NOT_SUPPORTED) */
        printf("~use_udp: %s\n", rcname(memcached_behavior_set(&u, MEMCACHED_BEHAVIOR_USE_UDP, 1)));
        memcached_free(&u);
    }

    section_random(port1, port2, binary);

    /* ---- a server that is not there, and one that dies ------------------------------------ */
    {
        memcached_st dead;
        memcached_create(&dead);
        memcached_server_add(&dead, "127.0.0.1", (in_port_t)dead_port);
        if (binary) memcached_behavior_set(&dead, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);
        double t0 = now();
        size_t len;
        uint32_t flags;
        memcached_get(&dead, "k", 1, &len, &flags, &rc);
        printf("nothing listening get: %s\n", rcname(rc));
        printf("nothing listening set: %s\n", rcname(memcached_set(&dead, "k", 1, "v", 1, 0, 0)));
        CHECK(now() - t0 < 5.0);
        CHECK(memcached_server_get_last_disconnect(&dead) != NULL);
        memcached_free(&dead);
        /* memcached_flush: any server failing makes SOME ERRORS, its error the last one */
        memcached_st dead2;
        memcached_create(&dead2);
        memcached_server_add(&dead2, "127.0.0.1", (in_port_t)dead_port);
        if (binary) memcached_behavior_set(&dead2, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);
        printf("nothing listening flush: %s, last error %s\n", rcname(memcached_flush(&dead2, 0)),
               rcname(memcached_last_error(&dead2)));
        memcached_free(&dead2);
    }
    {
        memcached_st two;
        memcached_create(&two);
        memcached_server_add(&two, "127.0.0.1", (in_port_t)port2);
        if (binary) memcached_behavior_set(&two, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);
        printf("before kill set: %s\n", rcname(memcached_set(&two, "k", 1, "v", 1, 0, 0)));
        kill(pid2, SIGKILL);
        usleep(200 * 1000);
        double t0 = now();
        size_t len;
        uint32_t flags;
        memcached_get(&two, "k", 1, &len, &flags, &rc);
        printf("~after kill get: %s\n", rcname(rc));
        CHECK(rc == MEMCACHED_CONNECTION_FAILURE || rc == MEMCACHED_UNKNOWN_READ_FAILURE ||
              rc == MEMCACHED_READ_FAILURE || rc == MEMCACHED_WRITE_FAILURE ||
              rc == MEMCACHED_SERVER_TEMPORARILY_DISABLED);
        rc = memcached_set(&two, "k", 1, "v", 1, 0, 0);
        printf("~after kill set: %s\n", rcname(rc));
        CHECK(memcached_failed(rc));
        CHECK(now() - t0 < 10.0);
        memcached_free(&two);
    }

    section_placement(port1, port2);
    section_reconnects(port1, binary);

    memcached_free(m);
    /* memcached_free never frees the caller's storage: writing to it is still fine */
    memset(&stack_memc, 0, sizeof stack_memc);
    memcached_st* heap = memcached_create(NULL);
    CHECK(heap != NULL);
    memcached_free(heap);
    printf("done failures=%d\n", failures);
    return failures ? 1 : 0;
}
