// The Handle behind a memcached_st: connections, placement, errors, allocators.
#include "handle.hpp"

#include "folsom/cluster/continuum.hpp"
#include "folsom/cluster/distribution.hpp"
#include "folsom/protocol/key.hpp"

#include <asio/steady_timer.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <unistd.h>

namespace folsom::compat {

Handle* handle_of(const memcached_st* memc) noexcept {
    if (!memc) return nullptr;
    return reinterpret_cast<Handle*>(memc->ketama.continuum);
}

Handle::~Handle() {
    disconnect();
}

namespace {

// This process's id, kept current by a fork handler rather than asked of the kernel: glibc
// does not cache getpid(), and forget_if_forked() runs on every call, where a system call
// would add to every operation's cost. A child made by fork() (not a raw clone(2), which
// runs no handlers and cannot use this library's locks safely anyway) gets its own id here
// before fork() returns in it.
std::atomic<pid_t> cached_pid{0};

void refresh_pid() noexcept {
    cached_pid.store(::getpid(), std::memory_order_relaxed);
}

pid_t current_pid() noexcept {
    static const bool registered = [] {
        refresh_pid();
        ::pthread_atfork(nullptr, nullptr, refresh_pid);
        return true;
    }();
    static_cast<void>(registered);
    return cached_pid.load(std::memory_order_relaxed);
}

}  // namespace

void Handle::forget_if_forked() {
    if (!loop || loop_pid == current_pid()) return;
    for (auto& s : servers) {
        if (!s->client) continue;
        static_cast<void>(new Client(std::move(*s->client)));  // never shut down, never freed
        s->client.reset();
    }
    if (routed_client) {
        static_cast<void>(new Client(std::move(*routed_client)));
        routed_client.reset();
    }
    static_cast<void>(loop.release());
}

void Handle::disconnect() {
    forget_if_forked();
    bool any = false;
    for (auto& s : servers) {
        if (s->client) {
            s->client->shutdown();
            any = true;
        }
    }
    if (routed_client) {
        routed_client->shutdown();
        any = true;
    }
    if (!loop) return;
    // Let the closing completions run on this thread, as BlockingClient's destructor does,
    // then start a fresh loop for the connections to come.
    for (auto& s : servers)
        s->client.reset();
    routed_client.reset();
    if (any) loop->stop();
    loop.reset();
}

Client& Handle::client(std::size_t i) {
    forget_if_forked();
    ServerEntry& s = *servers[i];
    if (!loop) {
        // A memcached_st is used by one thread at a time (libmemcached's rule; its pool hands
        // a handle from thread to thread under a lock), and only that thread runs its loop.
        // So the loop needs no lock for its lead nor for the outcomes it waits for
        // (Callers::one), and the reactor none for its sockets, which only the running
        // thread touches (UNSAFE_IO: one running thread, no per-socket lock; the scheduler
        // keeps its lock, since the resolver's helper thread posts to it).
        loop = std::make_unique<detail::BlockingLoop>(false, ASIO_CONCURRENCY_HINT_UNSAFE_IO,
                                                      detail::BlockingLoop::Callers::one);
        loop_pid = current_pid();
    }
    if (folsom.routed() && routed_client) return *routed_client;
    if (!folsom.routed() && s.client) return *s.client;
    Options o;
    if (folsom.routes) {
        o.routes = folsom.routes;
    } else if (folsom.discovery) {
        o.discovery = folsom.discovery;
        o.discovery_interval = folsom.discovery_interval;
    } else if (s.type == MEMCACHED_CONNECTION_UNIX_SOCKET) {
        o.servers = {s.host};
    } else if (s.host.find(':') != std::string::npos) {
        o.servers = {"[" + s.host + "]:" + std::to_string(s.port)};
    } else {
        o.servers = {s.host + ":" + std::to_string(s.port)};
    }
    o.protocol = folsom.meta                   ? Protocol::meta
                 : root->flags.binary_protocol ? Protocol::binary
                                               : Protocol::ascii;
    o.raw_binary_protocol_keys = binary_wire();
    // --META with BINARY_PROTOCOL: the keys libmemcached's binary users store (any bytes).
    o.binary_keys = folsom.meta && root->flags.binary_protocol;
    o.tls = folsom.tls;
    // libmemcached leaves the size of a value to the server (which answers E2BIG); the bound
    // here only keeps a reply from making the client allocate without limit.
    o.max_value_size = std::size_t{1} << 30;
    const auto ms = [](std::int32_t v, std::int32_t fallback) {
        return std::chrono::milliseconds(v > 0 ? v : fallback);
    };
    o.connect_timeout = ms(root->connect_timeout, MEMCACHED_DEFAULT_CONNECT_TIMEOUT);
    // The core notices a stalled connection between request_timeout and a quarter more
    // (its health check runs every quarter of it); libmemcached gives up after one poll
    // timeout. Four fifths of the poll timeout makes the drop-in answer TIMEOUT by then.
    {
        const std::chrono::milliseconds poll = ms(root->poll_timeout, MEMCACHED_DEFAULT_TIMEOUT);
        o.request_timeout = std::max(poll * 4 / 5, std::chrono::milliseconds(1));
    }
    // libmemcached waits retry_timeout seconds before it tries a failed server again.
    const std::chrono::milliseconds retry(
        root->retry_timeout > 0 ? std::int64_t{root->retry_timeout} * 1000 : 0);
    o.reconnect_initial_delay = std::max(retry, std::chrono::milliseconds(1));
    o.reconnect_max_delay = o.reconnect_initial_delay;
    // libmemcached never repeats a request by itself.
    o.retry_idempotent = false;
    o.tcp_nodelay = root->flags.tcp_nodelay;
    o.key_prefix = prefix;
    if (sasl && binary_wire()) o.sasl = sasl;
    if (folsom.routed()) {
        // The route tree's pools (or the discovered ring) place the keys.
        if (!folsom.discovery) {
            routed_client = Client::connect(loop->io(), o);
            return *routed_client;
        }
        // A discovered ring starts empty (its requests would fail with not_connected): the
        // first request waits for a discovered server to connect, no longer than the connect
        // timeout, as libmemcached's first request waits for its connect.
        auto up = std::make_shared<bool>(false);
        o.on_connection_state = [up](const std::string&, ConnectionState st) {
            if (st == ConnectionState::connected) *up = true;
        };
        routed_client = Client::connect(loop->io(), o);
        auto expired = std::make_shared<bool>(false);
        auto timer = std::make_shared<asio::steady_timer>(loop->io(), o.connect_timeout);
        const bool lead = loop->start([&] {
            timer->async_wait([expired, timer](const std::error_code&) { *expired = true; });
        });
        loop->wait([&] { return *up || *expired; }, lead);
        timer->cancel();
        return *routed_client;
    }
    s.client = Client::connect(loop->io(), o);
    return *s.client;
}

std::size_t Handle::ring_server(std::uint32_t hash) const {
    // libmemcached's update_continuum: with the weighted-ketama flag, MD5 points weighted as
    // the core's ketama rings make them; without it, 100 points a server, each the ring's key
    // hash of its name, which the core's libmemcached_consistent ring is when no weight is
    // above 1 (libmemcached ignores weights there). Either way a key goes to the first point
    // at or after its key hash, wrapping around.
    const bool spy = root->distribution == MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY;
    const cluster::KeyHash k = core_hash(ring_hash).value_or(cluster::KeyHash::one_at_a_time);
    if (spy && !root->ketama.weighted_) {
        if (spy_ring.empty()) {
            for (std::uint32_t s = 0; s < servers.size(); ++s) {
                const std::string name =
                    "/" + servers[s]->host + ":" + std::to_string(servers[s]->port) + "-";
                for (int i = 0; i < MEMCACHED_POINTS_PER_SERVER; ++i)
                    spy_ring.push_back({cluster::key_hash(k, name + std::to_string(i)), s});
            }
            std::stable_sort(spy_ring.begin(), spy_ring.end(),
                             [](const auto& a, const auto& b) { return a.position < b.position; });
        }
        auto it = std::lower_bound(spy_ring.begin(), spy_ring.end(), hash,
                                   [](const auto& p, std::uint32_t v) { return p.position < v; });
        return (it == spy_ring.end() ? spy_ring.begin() : it)->server;
    }
    if (!ring) {
        const cluster::Distribution want =
            !root->ketama.weighted_
                ? cluster::Distribution{cluster::Distribution::Scheme::libmemcached_consistent, k}
            : spy ? cluster::Distribution::ketama_spymemcached
                  : cluster::Distribution::ketama_libmemcached;
        std::vector<ServerAddress> addrs;
        addrs.reserve(servers.size());
        for (const auto& s : servers)
            addrs.push_back(ServerAddress{s->host, s->port,
                                          root->ketama.weighted_ && s->weight ? s->weight : 1});
        ring = std::make_unique<cluster::Continuum>(addrs, want);
    }
    return ring->points()[ring->point_index_at(hash)].server;
}

std::size_t Handle::server_for(std::string_view key) const {
    const std::size_t n = servers.size();
    // MEMCACHED_DISTRIBUTION_RANDOM: libmemcached draws libc's random() for every placement,
    // whatever the key (a group key too) and however many servers there are, so that a program
    // that seeds srandom() gets libmemcached's sequence of servers.
    if (root->distribution == MEMCACHED_DISTRIBUTION_RANDOM && n && !folsom.routed())
        return static_cast<std::uint32_t>(::random()) % n;
    if (n <= 1 || folsom.routed()) return 0;
    std::string prefixed;
    if (behaviors[MEMCACHED_BEHAVIOR_HASH_WITH_PREFIX_KEY] && !prefix.empty()) {
        prefixed = prefix;
        prefixed.append(key);
        key = prefixed;
    }
    // libmemcached hashes every key with its key hash (MEMCACHED_BEHAVIOR_HASH); the
    // distribution hash (MEMCACHED_BEHAVIOR_KETAMA_HASH) is kept but places nothing.
    const std::uint32_t hash = hash_value(key_hash, key);
    switch (root->distribution) {
        case MEMCACHED_DISTRIBUTION_VIRTUAL_BUCKET: {
            // libmemcached takes the key hash's low bits (it expects a power of two buckets).
            if (bucket_servers.empty()) return 0;
            const std::uint32_t bucket =
                hash & (static_cast<std::uint32_t>(bucket_servers.size()) - 1);
            return bucket_servers[bucket] % n;  // (libmemcached does not check the map)
        }
        case MEMCACHED_DISTRIBUTION_CONSISTENT:
        case MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA:
        case MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED:
        case MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY:
            return ring_server(hash);
        default:
            return hash % n;
    }
}

memcached_return_t set_error(Handle& h, memcached_return_t rc, std::string_view message, int err) {
    // "<the code's text>, <what happened>", as libmemcached words its messages.
    h.last_rc = rc;
    h.last_message.assign(memcached_strerror(h.root, rc));
    if (!message.empty()) {
        h.last_message.append(", ");
        h.last_message.append(message);
    }
    h.last_errno = err;
    return rc;
}

memcached_return_t set_server_error(Handle& h, ServerEntry& s, memcached_return_t rc,
                                    std::string_view message) {
    s.last_rc = rc;
    s.last_message.assign(message);
    // libmemcached words a server's failure "(<handle>) <code text>,  host: <host>:<port>";
    // libmemcached-tools print it.
    char prefix[32];
    std::snprintf(prefix, sizeof prefix, "(%p) ", static_cast<const void*>(h.root));
    std::string text = prefix;
    text += memcached_strerror(h.root, rc);
    text += ",  host: " + s.host;
    if (s.type != MEMCACHED_CONNECTION_UNIX_SOCKET) text += ":" + std::to_string(s.port);
    if (rc == MEMCACHED_CONNECTION_FAILURE || rc == MEMCACHED_TIMEOUT ||
        rc == MEMCACHED_HOST_LOOKUP_FAILURE || rc == MEMCACHED_SERVER_TEMPORARILY_DISABLED) {
        h.last_disconnected = &s.instance;
        s.last_failed = true;
    }
    set_error(h, rc, {});
    h.last_message = std::move(text);
    return rc;
}

memcached_return_t to_return(std::error_code ec) noexcept {
    if (!ec) return MEMCACHED_SUCCESS;
    if (ec.category() != folsom::category()) return MEMCACHED_ERRNO;
    switch (static_cast<errc>(ec.value())) {
        case errc::not_connected:
        case errc::connect_failed:
        case errc::connection_lost:
        case errc::closed:
        case errc::tls_error:
        case errc::no_sasl_mechanism:
            return MEMCACHED_CONNECTION_FAILURE;
        case errc::timeout:
            return MEMCACHED_TIMEOUT;
        case errc::protocol_error:
            return MEMCACHED_PROTOCOL_ERROR;
        case errc::invalid_key:
            return MEMCACHED_BAD_KEY_PROVIDED;
        case errc::value_too_large:
            return MEMCACHED_E2BIG;
        case errc::auth_failed:
            return MEMCACHED_AUTH_FAILURE;
        case errc::server_error:
            return MEMCACHED_SERVER_ERROR;
        case errc::client_error:
            return MEMCACHED_CLIENT_ERROR;
        case errc::invalid_argument:
            return MEMCACHED_INVALID_ARGUMENTS;
        case errc::resolve_failed:
            return MEMCACHED_HOST_LOOKUP_FAILURE;
        case errc::unsupported:
            return MEMCACHED_NOT_SUPPORTED;
        default:
            return MEMCACHED_FAILURE;
    }
}

memcached_return_t to_return(Status s) noexcept {
    switch (s) {
        case Status::ok:
        case Status::stored:
        case Status::deleted:
        case Status::touched:
        case Status::sent:
            return MEMCACHED_SUCCESS;
        case Status::not_stored:
            return MEMCACHED_NOTSTORED;
        case Status::exists:
            return MEMCACHED_DATA_EXISTS;
        case Status::not_found:
            return MEMCACHED_NOTFOUND;
        case Status::value_too_large:
            return MEMCACHED_E2BIG;
        case Status::out_of_memory:
            return MEMCACHED_SERVER_MEMORY_ALLOCATION_FAILURE;
    }
    return MEMCACHED_FAILURE;
}

memcached_return_t check_key(Handle& h, std::string_view key) {
    if (key.empty()) return set_error(h, MEMCACHED_BAD_KEY_PROVIDED, "key is empty");
    if (key.size() + h.prefix.size() >= MEMCACHED_MAX_KEY)
        return set_error(h, MEMCACHED_BAD_KEY_PROVIDED,
                         "key is longer than 250 bytes (with the prefix)");
    // Over binary libmemcached checks nothing else (VERIFY_KEY cannot be set there): a key of
    // any bytes is sent, and the core's raw_binary_protocol_keys lets it through.
    if (h.binary_wire()) return MEMCACHED_SUCCESS;
    // --META with BINARY_PROTOCOL: any bytes still, as the core's binary_keys sends them
    // (base64, reaching the items a binary client names), within the 186 bytes base64 leaves.
    if (h.root->flags.binary_protocol) {
        if (key.size() + h.prefix.size() > 186)
            return set_error(h, MEMCACHED_BAD_KEY_PROVIDED,
                             "key is longer than 186 bytes (with the prefix), the most the meta "
                             "protocol carries in base64");
        return MEMCACHED_SUCCESS;
    }
    // Over ascii, VERIFY_KEY refuses what isgraph() refuses in the C locale: anything outside
    // 0x21..0x7e. Without it libmemcached would send any key, and a space or a control byte
    // would split the command on the wire; folsom refuses those (protocol::validate_key).
    if (h.root->flags.verify_key)
        for (const char c : key) {
            const auto u = static_cast<unsigned char>(c);
            if (u < 0x21 || u > 0x7e)
                return set_error(h, MEMCACHED_BAD_KEY_PROVIDED,
                                 "Key provided had invalid character.");
        }
    if (protocol::validate_key(key))
        return set_error(h, MEMCACHED_BAD_KEY_PROVIDED, "key holds a space or a control character");
    return MEMCACHED_SUCCESS;
}

// ---- allocators ---------------------------------------------------------------------------

void* lm_malloc(const memcached_st* memc, std::size_t size) {
    if (memc && memc->allocators.malloc)
        return memc->allocators.malloc(memc, size, memc->allocators.context);
    return std::malloc(size);
}
void* lm_calloc(const memcached_st* memc, std::size_t n, std::size_t size) {
    if (memc && memc->allocators.calloc)
        return memc->allocators.calloc(memc, n, size, memc->allocators.context);
    return std::calloc(n, size);
}
void* lm_realloc(const memcached_st* memc, void* p, std::size_t size) {
    if (memc && memc->allocators.realloc)
        return memc->allocators.realloc(memc, p, size, memc->allocators.context);
    return std::realloc(p, size);
}
void lm_free(const memcached_st* memc, void* p) {
    if (memc && memc->allocators.free) {
        memc->allocators.free(memc, p, memc->allocators.context);
        return;
    }
    std::free(p);
}

// ---- results ------------------------------------------------------------------------------

memcached_return_t fill_result(memcached_result_st* r, std::string_view key, std::string_view data,
                               std::uint32_t flags, std::uint64_t cas) {
    const memcached_st* root = r->root;
    const std::size_t key_len = std::min<std::size_t>(key.size(), MEMCACHED_MAX_KEY - 1);
    std::memcpy(r->item_key, key.data(), key_len);
    r->item_key[key_len] = '\0';
    r->key_length = key_len;
    r->item_flags = flags;
    r->item_cas = cas;
    r->item_expiration = 0;
    r->numeric_value = UINT64_MAX;
    r->count++;
    memcached_string_st& s = r->value;
    if (!s.string || s.current_size < data.size() + 1) {
        void* p = lm_realloc(root, s.string, data.size() + 1);
        if (!p) return MEMCACHED_MEMORY_ALLOCATION_FAILURE;
        s.string = static_cast<char*>(p);
        s.current_size = data.size() + 1;
    }
    if (!data.empty()) std::memcpy(s.string, data.data(), data.size());
    s.string[data.size()] = '\0';
    s.end = s.string + data.size();
    s.root = const_cast<memcached_st*>(root);
    s.options.is_initialized = true;
    return MEMCACHED_SUCCESS;
}

}  // namespace folsom::compat
