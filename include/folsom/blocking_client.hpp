/// @file
/// BlockingClient: a synchronous facade over Client for scripts, tools and tests.
///
/// It owns an io_context, run by an I/O thread of its own (the default) or by the calling
/// threads themselves (Driver::caller); every call blocks the caller until the request
/// completes. Errors are thrown as std::system_error carrying the folsom error_code. Safe to
/// call from many threads at once (requests from different threads pipeline on the same
/// connections). Never call it from inside a completion handler of the same client.
///
/// Driver::caller is the shape libmemcached has: a sequential get is written, its reply read
/// and its result returned on the calling thread, with no thread hand-off (a send(2) and, when
/// the server has answered by then, a recv(2); else one epoll_wait more). The I/O thread costs
/// a hand-off each way per request (a wake-up of each thread), which on one CPU outweighs the
/// request itself; the caller-driven form costs about what libmemcached does (figures in
/// docs/performance.md, the get.seq.blocking rows of bench/e2e_bench.cpp).
///
/// Errors: the folsom error_code of a failed request is thrown as std::system_error; a miss is
/// an empty optional and other non-error outcomes are a Status, as in Client.
/// Ownership: every result is an owning copy (Value, MultiGetResult, ...); no view outlives a
/// call.
///
/// After fork(): a BlockingClient made before a fork may be used in the child (a pre-forking
/// server's workers: gunicorn --preload, uWSGI, PHP-FPM). The child's first call notices the
/// new process and starts afresh: a new io_context, a new I/O thread (threads do not survive
/// fork) and new connections, made as the client was made. What it inherited is abandoned,
/// never used: the parent's connections are out of the child's reach from the fork on (each
/// descriptor now names an unconnected socket of the child's own), so the child never reads a
/// reply meant for its parent nor writes into its parent's connections, TLS ones included,
/// and the parent goes on undisturbed. Requests that the parent's other threads had in flight
/// at the fork are the parent's: they complete there, never in the child. In the child, call
/// the client before using async() (or call notify_fork()), and do not fork while a call of
/// the same client is inside its completion handler. Options::metrics and other objects shared
/// through the Options are shared with the child's client as given.
#pragma once

#include "folsom/client.hpp"
#include "folsom/detail/blocking_loop.hpp"
#include "folsom/detail/fork_generation.hpp"
#include "folsom/export.hpp"

#include <cstdint>
#include <functional>
#include <system_error>

namespace folsom {

/// A synchronous facade over Client: owns an io_context, run by its own I/O thread or by the
/// calling threads; each call blocks until its request completes and throws std::system_error
/// on failure. Thread-safe.
class FOLSOM_EXPORT BlockingClient {
  public:
    /// Who runs the client's I/O.
    enum class Driver : std::uint8_t {
        /// A thread of the client's own, always: requests started through async() progress
        /// by themselves, and so do reconnects and health checks between calls.
        io_thread,
        /// The threads that call and wait: the first waiter drives the I/O until its own
        /// request is done, the others sleep until theirs is or the I/O is free to drive.
        /// Nothing runs between calls: a reconnect or a timer that fell due meanwhile runs at
        /// the start of the next call, and requests started through async() progress only
        /// while some thread waits in a call. Their handlers run inside such a call, and one
        /// that throws has its exception rethrown by that call once its own request is done.
        caller,
    };

    /// Connects as Client::connect(options) does (in the background); with Driver::io_thread,
    /// starts the I/O thread. Throws std::system_error(errc::invalid_argument) for a malformed
    /// server list.
    explicit BlockingClient(const Options& options, Driver driver = Driver::io_thread);
    /// Runs the client `make(executor)` returns instead of connecting one, e.g. the fake:
    /// `BlockingClient c([](asio::any_io_executor ex) { return make_fake_client(ex); });`
    explicit BlockingClient(const std::function<Client(asio::any_io_executor)>& make,
                            Driver driver = Driver::io_thread);
    /// Shuts the client down, lets it deliver what that fails, and joins the I/O thread. No
    /// other thread may be in a call.
    ~BlockingClient();
    BlockingClient(const BlockingClient&) = delete;
    BlockingClient& operator=(const BlockingClient&) = delete;

    /// The asynchronous client underneath (same connections).
    Client& async() noexcept { return client_; }

    /// In a child process made by fork() after this client: starts it afresh now (see "After
    /// fork()" above) rather than at its next call. Elsewhere a no-op. Not thread-safe in the
    /// child: call it before the child starts threads that use the client.
    void notify_fork() {
        if (detail::fork_generation() != forks_) [[unlikely]]
            restart_after_fork();
    }

    /// Client::get: the value, or an empty optional on a miss.
    std::optional<Value> get(std::string_view key) {
        return call<std::optional<Value>>([&](auto h) { client_.get(key, std::move(h)); });
    }
    /// Client::gets: as get, with Value::cas set.
    std::optional<Value> gets(std::string_view key) {
        return call<std::optional<Value>>([&](auto h) { client_.gets(key, std::move(h)); });
    }
    /// Client::gat: get and set the ttl.
    std::optional<Value> gat(std::string_view key, Expiry ttl) {
        return call<std::optional<Value>>([&](auto h) { client_.gat(key, ttl, std::move(h)); });
    }
    /// Client::get_multi: the values in key order. Throws only when every server failed.
    MultiGetResult get_multi(std::span<const std::string_view> keys) {
        return call<MultiGetResult>([&](auto h) { client_.get_multi(keys, std::move(h)); });
    }
    /// Client::store: the general store.
    Status store(StoreMode mode, std::string_view key, Bytes value, Expiry ttl,
                 StoreOptions opts = {}) {
        return call<Status>(
            [&](auto h) { client_.store(mode, key, std::move(value), ttl, opts, std::move(h)); });
    }
    /// Client::set: stored (or value_too_large / out_of_memory from the server).
    Status set(std::string_view key, Bytes value, Expiry ttl = {}, std::uint32_t flags = 0) {
        return store(StoreMode::set, key, std::move(value), ttl, {flags, 0});
    }
    /// Client::cas: stored, exists (changed since `cas` was read) or not_found.
    Status cas(std::string_view key, Bytes value, std::uint64_t cas, Expiry ttl = {}) {
        return store(StoreMode::cas, key, std::move(value), ttl, {0, cas});
    }
    /// Client::del: deleted or not_found.
    Status del(std::string_view key) {
        return call<Status>([&](auto h) { client_.del(key, std::move(h)); });
    }
    /// Client::touch: touched or not_found.
    Status touch(std::string_view key, Expiry ttl) {
        return call<Status>([&](auto h) { client_.touch(key, ttl, std::move(h)); });
    }
    /// Client::incr: the new value, or an empty optional when the key is missing.
    std::optional<std::uint64_t> incr(std::string_view key, std::uint64_t delta) {
        return call<std::optional<std::uint64_t>>(
            [&](auto h) { client_.incr(key, delta, std::move(h)); });
    }
    /// Client::decr: as incr; never below 0.
    std::optional<std::uint64_t> decr(std::string_view key, std::uint64_t delta) {
        return call<std::optional<std::uint64_t>>(
            [&](auto h) { client_.decr(key, delta, std::move(h)); });
    }
    /// With an initial value: binary and meta protocols only.
    std::optional<std::uint64_t> incr(std::string_view key, std::uint64_t delta,
                                      std::uint64_t initial, Expiry ttl) {
        return call<std::optional<std::uint64_t>>(
            [&](auto h) { client_.incr(key, delta, initial, ttl, std::move(h)); });
    }
    /// As decr, creating a missing counter holding `initial`: binary and meta protocols only.
    std::optional<std::uint64_t> decr(std::string_view key, std::uint64_t delta,
                                      std::uint64_t initial, Expiry ttl) {
        return call<std::optional<std::uint64_t>>(
            [&](auto h) { client_.decr(key, delta, initial, ttl, std::move(h)); });
    }
    /// Client::meta_get (meta protocol only): the value with its cas, flags and W/X/Z.
    MetaGetResult meta_get(std::string_view key, const MetaGetOptions& opts = {}) {
        return call<MetaGetResult>([&](auto h) { client_.meta_get(key, opts, std::move(h)); });
    }
    /// Client::meta_set (meta protocol only): stored, not_stored, exists or not_found.
    Status meta_set(std::string_view key, Bytes value, Expiry ttl = {},
                    const MetaSetOptions& opts = {}) {
        return call<Status>(
            [&](auto h) { client_.meta_set(key, std::move(value), ttl, opts, std::move(h)); });
    }
    /// Client::meta_delete (meta protocol only): deleted (or marked stale), not_found, exists.
    Status meta_delete(std::string_view key, const MetaDeleteOptions& opts = {}) {
        return call<Status>([&](auto h) { client_.meta_delete(key, opts, std::move(h)); });
    }
    /// Client::flush_all: one result per server.
    std::vector<NodeResult<Status>> flush_all(std::optional<std::chrono::seconds> delay = {}) {
        return call<std::vector<NodeResult<Status>>>(
            [&](auto h) { client_.flush_all(delay, std::move(h)); });
    }
    /// Client::stats: one result per server.
    std::vector<NodeResult<StatList>> stats(std::string_view group = {}) {
        return call<std::vector<NodeResult<StatList>>>(
            [&](auto h) { client_.stats(group, std::move(h)); });
    }
    /// Client::delete_all: deletes `key` on every server; one result per server (deleted,
    /// not_found, or that server's error). Throws only when every server failed, or
    /// errc::invalid_key for a bad key.
    std::vector<NodeResult<Status>> delete_all(std::string_view key) {
        return call<std::vector<NodeResult<Status>>>(
            [&](auto h) { client_.delete_all(key, std::move(h)); });
    }
    /// Client::version: one result per server.
    std::vector<NodeResult<std::string>> version() {
        return call<std::vector<NodeResult<std::string>>>(
            [&](auto h) { client_.version(std::move(h)); });
    }

  private:
    /// Starts a request (`start(handler)`) and waits for it (driving the I/O when the client
    /// is caller-driven and no other thread does); its value, or its error thrown. A SendBatch
    /// open on the calling thread would hold the request back until it ends: the wait sends it
    /// first.
    template <class T, class Start>
    T call(Start&& start) {
        notify_fork();
        detail::WaitSlot<T> slot;
        const bool lead = loop_.start([&] { start(detail::WaitHandler<T>{&slot, &loop_}); });
        loop_.wait([&] { return slot.done; }, lead);
        if (slot.error) throw std::system_error(slot.error);
        return std::move(slot.value);
    }

    /// Abandons what was inherited across fork (never destroyed: its thread is gone and its
    /// io_context shares the parent's epoll instance) and makes the client again.
    void restart_after_fork();
    /// Leaves the inherited loop and client behind for good, with harmless ones in their
    /// place (no thread, no connection), for the destructor to end.
    void abandon_inherited();

    std::function<Client(asio::any_io_executor)> make_;  // how the client was made
    Driver driver_;
    std::uint32_t forks_;  // detail::fork_generation() when loop_ and client_ were made
    detail::BlockingLoop loop_;
    Client client_;
};

}  // namespace folsom
