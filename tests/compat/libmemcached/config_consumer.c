/* A libmemcached program that knows nothing of folsom: memcached_create(), the servers named on
 * its command line, a set, a get, an add of the same key (refused: its true outcome) and a
 * multi-get. folsom's options reach it by configuration alone: FOLSOM_LIBMEMCACHED_CONFIG, or
 * a configuration string given with --config (memcached(string, length)).
 * Prints one line per call; exits 2 when the handle cannot be made. */
#include <libmemcached-1.0/memcached.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
    const char* config = NULL;
    int first = 1;
    if (argc > 2 && strcmp(argv[1], "--config") == 0) {
        config = argv[2];
        first = 3;
    }
    memcached_st* memc = config ? memcached(config, strlen(config)) : memcached_create(NULL);
    if (!memc) {
        if (config) {
            char err[512];
            libmemcached_check_configuration(config, strlen(config), err, sizeof err);
            printf("create: NULL: %s\n", err);
        } else {
            printf("create: NULL\n");
        }
        return 2;
    }
    for (int i = first; i < argc; ++i) {
        char host[256];
        snprintf(host, sizeof host, "%s", argv[i]);
        char* colon = strrchr(host, ':');
        if (!colon) return 3;
        *colon = '\0';
        memcached_server_add(memc, host, (in_port_t)atoi(colon + 1));
    }
    const char* key = "folsom-config-key";
    memcached_return_t rc = memcached_set(memc, key, strlen(key), "replicated", 10, 0, 7);
    printf("set: %s\n", memcached_strerror(memc, rc));
    if (rc != MEMCACHED_SUCCESS) printf("error: %s\n", memcached_last_error_message(memc));
    size_t len = 0;
    uint32_t flags = 0;
    char* v = memcached_get(memc, key, strlen(key), &len, &flags, &rc);
    printf("get: %s %.*s flags=%u\n", memcached_strerror(memc, rc), (int)len, v ? v : "", flags);
    free(v);
    rc = memcached_add(memc, key, strlen(key), "other", 5, 0, 0);
    printf("add: %s\n", memcached_strerror(memc, rc));
    const char* keys[] = {key, "folsom-config-missing"};
    size_t lens[] = {strlen(key), strlen(keys[1])};
    rc = memcached_mget(memc, keys, lens, 2);
    printf("mget: %s\n", memcached_strerror(memc, rc));
    char k[MEMCACHED_MAX_KEY];
    size_t klen = 0;
    while ((v = memcached_fetch(memc, k, &klen, &len, &flags, &rc)) != NULL) {
        printf("fetch: %.*s=%.*s\n", (int)klen, k, (int)len, v);
        free(v);
    }
    memcached_free(memc);
    return 0;
}
