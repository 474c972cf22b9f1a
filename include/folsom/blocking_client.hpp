/// @file
/// BlockingClient: a synchronous facade over Client for scripts, tools and tests.
///
/// It owns an io_context and one I/O thread; every call blocks the caller until the request
/// completes. Errors are thrown as std::system_error carrying the folsom error_code. Safe to
/// call from many threads at once (requests from different threads pipeline on the same
/// connections). Never call it from inside a completion handler of the same client.
///
/// Errors: the folsom error_code of a failed request is thrown as std::system_error; a miss is
/// an empty optional and other non-error outcomes are a Status, as in Client.
/// Ownership: every result is an owning copy (Value, MultiGetResult, ...); no view outlives a
/// call.
#pragma once

#include "folsom/client.hpp"
#include "folsom/send_batch.hpp"

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/use_future.hpp>

#include <functional>
#include <future>
#include <thread>

namespace folsom {

/// A synchronous facade over Client: owns an io_context and its I/O thread; each call blocks
/// until its request completes and throws std::system_error on failure. Thread-safe.
class BlockingClient {
  public:
    /// Connects as Client::connect(options) does (in the background) and starts the I/O thread.
    /// Throws std::system_error(errc::invalid_argument) for a malformed server list.
    explicit BlockingClient(const Options& options);
    /// Runs the client `make(executor)` returns instead of connecting one, e.g. the fake:
    /// `BlockingClient c([](asio::any_io_executor ex) { return make_fake_client(ex); });`
    explicit BlockingClient(const std::function<Client(asio::any_io_executor)>& make);
    /// Shuts the client down and joins the I/O thread.
    ~BlockingClient();
    BlockingClient(const BlockingClient&) = delete;
    BlockingClient& operator=(const BlockingClient&) = delete;

    /// The asynchronous client underneath (same connections).
    Client& async() noexcept { return client_; }

    /// Client::get: the value, or an empty optional on a miss.
    std::optional<Value> get(std::string_view key) {
        return wait(client_.get(key, asio::use_future));
    }
    /// Client::gets: as get, with Value::cas set.
    std::optional<Value> gets(std::string_view key) {
        return wait(client_.gets(key, asio::use_future));
    }
    /// Client::gat: get and set the ttl.
    std::optional<Value> gat(std::string_view key, Ttl ttl) {
        return wait(client_.gat(key, ttl, asio::use_future));
    }
    /// Client::get_multi: the values in key order. Throws only when every server failed.
    MultiGetResult get_multi(std::span<const std::string_view> keys) {
        return wait(client_.get_multi(keys, asio::use_future));
    }
    /// Client::store: the general store.
    Status store(StoreMode mode, std::string_view key, Bytes value, Ttl ttl,
                 StoreOptions opts = {}) {
        return wait(client_.store(mode, key, std::move(value), ttl, opts, asio::use_future));
    }
    /// Client::set: stored (or value_too_large / out_of_memory from the server).
    Status set(std::string_view key, Bytes value, Ttl ttl = Ttl{0}, std::uint32_t flags = 0) {
        return store(StoreMode::set, key, std::move(value), ttl, {flags, 0});
    }
    /// Client::cas: stored, exists (changed since `cas` was read) or not_found.
    Status cas(std::string_view key, Bytes value, std::uint64_t cas, Ttl ttl = Ttl{0}) {
        return store(StoreMode::cas, key, std::move(value), ttl, {0, cas});
    }
    /// Client::del: deleted or not_found.
    Status del(std::string_view key) { return wait(client_.del(key, asio::use_future)); }
    /// Client::touch: touched or not_found.
    Status touch(std::string_view key, Ttl ttl) {
        return wait(client_.touch(key, ttl, asio::use_future));
    }
    /// Client::incr: the new value, or an empty optional when the key is missing.
    std::optional<std::uint64_t> incr(std::string_view key, std::uint64_t delta) {
        return wait(client_.incr(key, delta, asio::use_future));
    }
    /// Client::decr: as incr; never below 0.
    std::optional<std::uint64_t> decr(std::string_view key, std::uint64_t delta) {
        return wait(client_.decr(key, delta, asio::use_future));
    }
    /// With an initial value: binary and meta protocols only.
    std::optional<std::uint64_t> incr(std::string_view key, std::uint64_t delta,
                                      std::uint64_t initial, Ttl ttl) {
        return wait(client_.incr(key, delta, initial, ttl, asio::use_future));
    }
    /// As decr, creating a missing counter holding `initial`: binary and meta protocols only.
    std::optional<std::uint64_t> decr(std::string_view key, std::uint64_t delta,
                                      std::uint64_t initial, Ttl ttl) {
        return wait(client_.decr(key, delta, initial, ttl, asio::use_future));
    }
    /// Client::meta_get (meta protocol only): the value with its cas, flags and W/X/Z.
    MetaGetResult meta_get(std::string_view key, const MetaGetOptions& opts = {}) {
        return wait(client_.meta_get(key, opts, asio::use_future));
    }
    /// Client::meta_set (meta protocol only): stored, not_stored, exists or not_found.
    Status meta_set(std::string_view key, Bytes value, Ttl ttl = Ttl{0},
                    const MetaSetOptions& opts = {}) {
        return wait(client_.meta_set(key, std::move(value), ttl, opts, asio::use_future));
    }
    /// Client::meta_delete (meta protocol only): deleted (or marked stale), not_found, exists.
    Status meta_delete(std::string_view key, const MetaDeleteOptions& opts = {}) {
        return wait(client_.meta_delete(key, opts, asio::use_future));
    }
    /// Client::flush_all: one result per server.
    std::vector<NodeResult<Status>> flush_all(std::optional<std::chrono::seconds> delay = {}) {
        return wait(client_.flush_all(delay, asio::use_future));
    }
    /// Client::stats: one result per server.
    std::vector<NodeResult<StatList>> stats(std::string_view group = {}) {
        return wait(client_.stats(group, asio::use_future));
    }
    /// Client::delete_all: deletes `key` on every server; one result per server (deleted,
    /// not_found, or that server's error). Throws only when every server failed, or
    /// errc::invalid_key for a bad key.
    std::vector<NodeResult<Status>> delete_all(std::string_view key) {
        return wait(client_.delete_all(key, asio::use_future));
    }
    /// Client::version: one result per server.
    std::vector<NodeResult<std::string>> version() {
        return wait(client_.version(asio::use_future));
    }

  private:
    /// A SendBatch open on the calling thread would hold the request back until it ends;
    /// send it first, or the wait would never end.
    template <class T>
    static T wait(std::future<T> f) {
        SendBatch::send_held();
        return f.get();
    }

    asio::io_context io_;
    asio::executor_work_guard<asio::io_context::executor_type> work_;
    Client client_;
    std::thread thread_;
};

}  // namespace folsom
