// libmemcachedutil.so.2: ping, flush, pid and version checks of one server, built on the
// drop-in's public libmemcached API (as Debian's is built on libmemcached's).
#include <libmemcached-1.0/memcached.h>
#include <libmemcachedutil-1.0/util.h>

namespace {

/// A memcached_st on the caller's stack with one server (and credentials when given).
class OneServer {
  public:
    OneServer(const char* hostname, in_port_t port, const char* username, const char* password) {
        memcached_create(&memc_);
        rc_ = memcached_server_add(&memc_, hostname, port);
        if (rc_ == MEMCACHED_SUCCESS && username && password) {
            memcached_behavior_set(&memc_, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);
            rc_ = memcached_set_sasl_auth_data(&memc_, username, password);
        }
    }
    ~OneServer() { memcached_free(&memc_); }
    OneServer(const OneServer&) = delete;
    OneServer& operator=(const OneServer&) = delete;
    memcached_st* get() { return &memc_; }
    memcached_return_t rc() const { return rc_; }

  private:
    memcached_st memc_;
    memcached_return_t rc_;
};

bool ping(const char* hostname, in_port_t port, const char* username, const char* password,
          memcached_return_t* ret) {
    memcached_return_t unused;
    if (!ret) ret = &unused;
    OneServer s(hostname, port, username, password);
    *ret = s.rc() == MEMCACHED_SUCCESS ? memcached_version(s.get()) : s.rc();
    return *ret == MEMCACHED_SUCCESS;
}

pid_t getpid_of(const char* hostname, in_port_t port, const char* username, const char* password,
                memcached_return_t* ret) {
    memcached_return_t unused;
    if (!ret) ret = &unused;
    OneServer s(hostname, port, username, password);
    if ((*ret = s.rc()) != MEMCACHED_SUCCESS) return -1;
    memcached_stat_st* st = memcached_stat(s.get(), nullptr, ret);
    pid_t pid = -1;
    if (st && *ret == MEMCACHED_SUCCESS) pid = st->pid;
    memcached_stat_free(s.get(), st);
    return pid;
}

}  // namespace

bool libmemcached_util_ping(const char* hostname, in_port_t port, memcached_return_t* ret) {
    return ping(hostname, port, nullptr, nullptr, ret);
}

bool libmemcached_util_ping2(const char* hostname, in_port_t port, const char* username,
                             const char* password, memcached_return_t* ret) {
    return ping(hostname, port, username, password, ret);
}

bool libmemcached_util_flush(const char* hostname, in_port_t port, memcached_return_t* ret) {
    memcached_return_t unused;
    if (!ret) ret = &unused;
    OneServer s(hostname, port, nullptr, nullptr);
    *ret = s.rc() == MEMCACHED_SUCCESS ? memcached_flush(s.get(), 0) : s.rc();
    return *ret == MEMCACHED_SUCCESS;
}

pid_t libmemcached_util_getpid(const char* hostname, in_port_t port, memcached_return_t* ret) {
    return getpid_of(hostname, port, nullptr, nullptr, ret);
}

pid_t libmemcached_util_getpid2(const char* hostname, in_port_t port, const char* username,
                                const char* password, memcached_return_t* ret) {
    return getpid_of(hostname, port, username, password, ret);
}

namespace {

struct VersionCheck {
    uint8_t major, minor, micro;
    bool ok = true;
};

memcached_return_t check_version(const memcached_st*, const memcached_instance_st* server,
                                 void* context) {
    auto* c = static_cast<VersionCheck*>(context);
    const uint8_t major = memcached_server_major_version(server);
    const uint8_t minor = memcached_server_minor_version(server);
    const uint8_t micro = memcached_server_micro_version(server);
    if (major != c->major) {
        c->ok = c->ok && major > c->major;
    } else if (minor != c->minor) {
        c->ok = c->ok && minor > c->minor;
    } else {
        c->ok = c->ok && micro >= c->micro;
    }
    return MEMCACHED_SUCCESS;
}

}  // namespace

bool libmemcached_util_version_check(memcached_st* memc, uint8_t major_version,
                                     uint8_t minor_version, uint8_t micro_version) {
    if (memcached_version(memc) != MEMCACHED_SUCCESS) return false;
    VersionCheck c{major_version, minor_version, micro_version};
    memcached_server_fn fn[] = {check_version};
    memcached_server_cursor(memc, fn, &c, 1);
    return c.ok;
}
