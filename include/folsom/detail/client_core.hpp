// ClientCore: what the public Client templates talk to (internal; implemented in src/client).
//
// It owns the connections, routes keys to servers, and enforces the outstanding-request bound.
// It is an interface so that cluster policies (and the fake client for users' tests) can stand
// behind the same Client API.
#pragma once

#include "folsom/detail/operation.hpp"
#include "folsom/export.hpp"
#include "folsom/metrics.hpp"
#include "folsom/options.hpp"
#include "folsom/tracing.hpp"

#include <asio/any_io_executor.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <typeinfo>
#include <vector>

namespace folsom::detail {

class FOLSOM_EXPORT ClientCore {
  public:
    explicit ClientCore(std::size_t max_outstanding) noexcept : max_outstanding_(max_outstanding) {}
    virtual ~ClientCore() = default;
    ClientCore(const ClientCore&) = delete;
    ClientCore& operator=(const ClientCore&) = delete;

    /// The I/O executor.
    virtual asio::any_io_executor executor() const noexcept = 0;

    /// Where completions whose handler has no executor of its own run: the reply executor when
    /// one was given (Folsom's withReplyExecutor), otherwise the I/O executor.
    asio::any_io_executor completion_executor() const noexcept {
        return reply_executor_ ? *reply_executor_ : executor();
    }
    /// Set once, before the first request (Client::connect does it).
    void set_reply_executor(asio::any_io_executor ex) {
        reply_executor_ = std::move(ex);
        inline_context_ = nullptr;
    }
    /// The io_context whose own executor is the completion executor, or null (a reply
    /// executor, or an I/O executor of another kind). A completion of a plain callback runs
    /// inline when this io_context runs on the current thread, decided without building an
    /// any_io_executor (see AsyncOp::deliver). Null only turns that shortcut off.
    asio::io_context* inline_context() const noexcept { return inline_context_; }
    /// Set once, before the first request (make_client_core does it from executor()).
    void set_inline_context_from(const asio::any_io_executor& ex) noexcept {
        using E = asio::io_context::executor_type;
        // (This Asio's target<T>() does not check the type itself.)
        inline_context_ = !reply_executor_ && ex.target_type() == typeid(E)
                              ? &ex.target<E>()->context()
                              : nullptr;
    }

    /// Bytes sent in front of every key (Options::key_prefix; 0 without one), so that
    /// multi-get parts are sized by the keys as they go on the wire. Set once, before the first
    /// request (make_client_core does it on the outermost core).
    std::size_t key_prefix_size() const noexcept { return key_prefix_size_; }
    void set_key_prefix_size(std::size_t n) noexcept { key_prefix_size_ = n; }

    /// Options::binary_keys, for the checks made above the driver (Client::delete_all). Set
    /// once, before the first request (make_client_core does it on the outermost core).
    bool binary_keys() const noexcept { return binary_keys_; }
    void set_binary_keys(bool on) noexcept { binary_keys_ = on; }

    /// Where operation-level events go (Options::metrics, Options::tracer): set once, on the
    /// outermost core, before the first request (make_client_core does it). The connections
    /// get the metrics from the Options themselves.
    void set_observers(std::shared_ptr<Metrics> metrics, std::shared_ptr<Tracer> tracer) {
        metrics_ = std::move(metrics);
        tracer_ = std::move(tracer);
        metrics_raw_ = metrics_.get();
        tracer_raw_ = tracer_.get();
    }
    /// Null unless Options::metrics was set. Raw, so that the check costs one load.
    Metrics* metrics() const noexcept { return metrics_raw_; }
    /// Null unless Options::tracer was set.
    Tracer* tracer() const noexcept { return tracer_raw_; }

    // ---- where requests go -------------------------------------------------------------
    //
    // A request for one key is handed to the core with send(): the core places the key itself
    // (a ring hashes it, a route tree walks it, a decorator changes the key or the request
    // first), so the request only travels down. Two kinds of request name a server instead,
    // with submit(): a multi-get part, whose keys were grouped by server with servers_for(),
    // and a request to every server (stats, version, flush_all), sent to each of
    // broadcast_servers(). server_for() answers where a key goes without sending anything
    // (Client::server_for, traces).

    /// Servers are named by an index that stays valid while the server set changes
    /// (discovery): an index handed out by servers_for() or broadcast_servers() may still be
    /// given to submit() after the ring was swapped, and reaches the same server (which then
    /// finishes its in-flight work before it is closed). Indices are 0..server_count()-1; with
    /// a fixed server list they are the positions in Options::servers.
    virtual std::size_t server_count() const noexcept = 0;
    /// Which server owns `key` now (with failover, a live server): what send() would choose,
    /// as users (Client::server_for) and traces are told.
    virtual std::size_t server_for(std::string_view key) const noexcept = 0;
    /// Groups the keys of a multi-get by server: out[i] is the server index that part of the
    /// multi-get goes to (out.size() >= keys.size()). By default server_for() of each key;
    /// cores that can hash many keys at once (the ketama ring's SIMD MD5) override it, and a
    /// core that routes every key itself (RouteCore) puts them all in one group.
    virtual void servers_for(std::span<const std::string_view> keys,
                             std::span<std::uint32_t> out) const noexcept {
        for (std::size_t i = 0; i < keys.size(); ++i)
            out[i] = static_cast<std::uint32_t>(server_for(keys[i]));
    }
    /// Deprecated: server_for() gives the same answer, for every core.
    [[deprecated("use server_for()")]] virtual std::size_t placement_of(
        std::string_view key) const noexcept {
        return server_for(key);
    }
    /// What each route of a route tree did (Options::routes); empty without one.
    virtual std::vector<RouteStats> route_stats() const { return {}; }
    /// "host:port" of server `i`.
    virtual const std::string& server_name(std::size_t i) const noexcept = 0;
    /// The servers a request to every server (stats, version, flush_all) goes to: the current
    /// members of the ring. By default every index.
    virtual std::vector<std::size_t> broadcast_servers() const {
        std::vector<std::size_t> v(server_count());
        for (std::size_t i = 0; i < v.size(); ++i)
            v[i] = i;
        return v;
    }

    /// Sends part `part` of `op`, a request for the one key request.key, where that key goes.
    /// Thread-safe. Never completes the part synchronously except with an error (bad input,
    /// not connected, closed). By default submit(server_for(key)); the library's cores
    /// override it to place the key once, on the way down.
    virtual void send(Operation& op, std::uint32_t part, const Request& request) {
        submit(server_for(request.key), op, part, request);
    }
    /// Sends part `part` of `op` to server `server`: a multi-get part (its keys grouped by
    /// servers_for()) or a part of a request to every server. Thread-safe; completes as
    /// send() does.
    virtual void submit(std::size_t server, Operation& op, std::uint32_t part,
                        const Request& request) = 0;

    /// Fails every outstanding and later request with errc::closed. Thread-safe, idempotent.
    virtual void shutdown() = 0;

    /// Largest value a store may carry.
    virtual std::size_t max_value_size() const noexcept = 0;

    /// Readiness (Folsom's ConnectFuture): calls `done` exactly once, never from inside this
    /// call, with {} as soon as at least one server has a usable connection (as Folsom's
    /// isConnected() for a multi-server client), errc::timeout when that has not happened
    /// within `timeout`, the error that makes connecting hopeless (e.g. auth_failed, as
    /// ConnectFuture fails on a connection failure), or errc::closed after shutdown().
    /// Thread-safe.
    /// The default reports ready at once, which is right for cores with nothing to connect; a
    /// core with sockets overrides it (it is virtual, not pure, so that it can be added later).
    virtual void notify_when_ready(std::chrono::milliseconds timeout,
                                   std::function<void(std::error_code)> done) {
        (void)timeout;
        asio::post(executor(), [d = std::move(done)] { d(std::error_code{}); });
    }

    /// Backpressure: reserve one of max_outstanding slots; false when none is free.
    bool try_acquire() noexcept {
        if (outstanding_.fetch_add(1, std::memory_order_relaxed) >= max_outstanding_) {
            outstanding_.fetch_sub(1, std::memory_order_relaxed);
            return false;
        }
        return true;
    }
    void release() noexcept { outstanding_.fetch_sub(1, std::memory_order_relaxed); }
    /// Requests accepted and not yet completed.
    std::size_t outstanding() const noexcept {
        return outstanding_.load(std::memory_order_relaxed);
    }

  private:
    std::optional<asio::any_io_executor> reply_executor_;
    asio::io_context* inline_context_ = nullptr;
    std::size_t key_prefix_size_ = 0;
    bool binary_keys_ = false;
    std::shared_ptr<Metrics> metrics_;
    std::shared_ptr<Tracer> tracer_;
    Metrics* metrics_raw_ = nullptr;
    Tracer* tracer_raw_ = nullptr;
    const std::size_t max_outstanding_;
    std::atomic<std::size_t> outstanding_{0};
};

/// Creates the core for `options`, doing its I/O on `ex`. Throws std::system_error
/// (errc::invalid_argument) for a malformed server list.
FOLSOM_EXPORT std::shared_ptr<ClientCore> make_client_core(asio::any_io_executor ex,
                                                           const Options& options);

}  // namespace folsom::detail
