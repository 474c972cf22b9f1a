// BlockingClient: a synchronous facade over Client for scripts, tools and tests.
//
// It owns an io_context and one I/O thread; every call blocks the caller until the request
// completes. Errors are thrown as std::system_error carrying the folsom error_code. Safe to
// call from many threads at once (requests from different threads pipeline on the same
// connections). Never call it from inside a completion handler of the same client.
#pragma once

#include "folsom/client.hpp"

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/use_future.hpp>

#include <functional>
#include <thread>

namespace folsom {

class BlockingClient {
  public:
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

    std::optional<Value> get(std::string_view key) {
        return client_.get(key, asio::use_future).get();
    }
    std::optional<Value> gets(std::string_view key) {
        return client_.gets(key, asio::use_future).get();
    }
    std::optional<Value> gat(std::string_view key, Ttl ttl) {
        return client_.gat(key, ttl, asio::use_future).get();
    }
    MultiGetResult get_multi(std::span<const std::string_view> keys) {
        return client_.get_multi(keys, asio::use_future).get();
    }
    Status store(StoreMode mode, std::string_view key, Bytes value, Ttl ttl,
                 StoreOptions opts = {}) {
        return client_.store(mode, key, std::move(value), ttl, opts, asio::use_future).get();
    }
    Status set(std::string_view key, Bytes value, Ttl ttl = Ttl{0}, std::uint32_t flags = 0) {
        return store(StoreMode::set, key, std::move(value), ttl, {flags, 0});
    }
    Status cas(std::string_view key, Bytes value, std::uint64_t cas, Ttl ttl = Ttl{0}) {
        return store(StoreMode::cas, key, std::move(value), ttl, {0, cas});
    }
    Status del(std::string_view key) { return client_.del(key, asio::use_future).get(); }
    Status touch(std::string_view key, Ttl ttl) {
        return client_.touch(key, ttl, asio::use_future).get();
    }
    std::optional<std::uint64_t> incr(std::string_view key, std::uint64_t delta) {
        return client_.incr(key, delta, asio::use_future).get();
    }
    std::optional<std::uint64_t> decr(std::string_view key, std::uint64_t delta) {
        return client_.decr(key, delta, asio::use_future).get();
    }
    std::vector<NodeResult<Status>> flush_all(std::optional<std::chrono::seconds> delay = {}) {
        return client_.flush_all(delay, asio::use_future).get();
    }
    std::vector<NodeResult<StatList>> stats(std::string_view group = {}) {
        return client_.stats(group, asio::use_future).get();
    }
    std::vector<NodeResult<std::string>> version() {
        return client_.version(asio::use_future).get();
    }

  private:
    asio::io_context io_;
    asio::executor_work_guard<asio::io_context::executor_type> work_;
    Client client_;
    std::thread thread_;
};

}  // namespace folsom
