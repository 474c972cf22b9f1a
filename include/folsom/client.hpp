/// @file
/// folsom::Client — the asynchronous memcached client most users touch.
///
///     asio::io_context io;
///     auto client = folsom::Client::connect(io.get_executor(), {.servers = {"127.0.0.1:11211"}});
///     client.set("k", "v", std::chrono::seconds(60),
///                [](std::error_code ec, folsom::Status s) { ... });           // callback
///     std::optional<folsom::Value> v = co_await client.get("k", asio::use_awaitable);
///     std::future<folsom::Status> f = client.del("k", asio::use_future);
///
/// Every ttl is a folsom::Expiry (expiry.hpp): a duration (std::chrono::seconds(60), minutes,
/// ...) or an absolute std::chrono::system_clock::time_point, or memcached's own exptime
/// convention through Expiry::from_exptime. A time that memcached cannot be sent (before 1970,
/// after 2038-01-19 03:14:07 UTC) fails the request with errc::invalid_argument, unsent.
///
/// Every operation takes an Asio completion token: a callback, asio::use_future,
/// asio::use_awaitable, asio::deferred, ... The completion signature is given for each.
///
/// Over Protocol::meta the client also offers meta_get / meta_set / meta_delete, which expose
/// memcached's stampede controls (win tokens W, stale items X, vivify on miss, recache
/// threshold); see meta.hpp, cache_recipes.hpp for get-or-fill and stale-while-revalidate,
/// and docs/meta-protocol.md. Over ascii/binary they fail with errc::unsupported.
///
/// Contracts
///   * Every request completes exactly once: with its result, or with a std::error_code in the
///     folsom category (see error.hpp). Outcomes that are not errors are a Status; a miss is an
///     empty optional.
///   * Bad input (invalid key, value over Options::max_value_size) fails with invalid_key /
///     value_too_large before anything is sent; the connection stays healthy.
///   * At most Options::max_outstanding_requests are in flight; past that a request fails at
///     once with errc::overloaded.
///   * A completion handler is never invoked from inside the call that started it. Handlers run
///     on their associated executor (by default the client's I/O executor).
///
/// Thread-safety: every member function may be called from any thread, concurrently. The
/// client is a cheap handle (a shared pointer); copies share the same connections. I/O runs on
/// the executor given to connect().
///
/// Shutdown: shutdown() (or destroying the last handle) fails every outstanding and later
/// request with errc::closed. Those completions are delivered through the executor like any
/// other, so with a user-run io_context they run when it next runs.
///
/// After fork(): a child must not use a Client it inherited, nor the io_context under it (its
/// threads did not survive the fork, and an io_context shares its epoll instance with the
/// parent's until io_context::notify_fork(asio::execution_context::fork_child) is called).
/// From the fork on, the inherited connections cannot reach the parent's peers (each socket
/// descriptor names an unconnected socket of the child's own), so the child cannot read the
/// parent's replies or write into its connections even by mistake, and the parent is
/// undisturbed. In the child, make a new io_context and a new Client, and leave the inherited
/// ones alone, neither run nor destroyed (their memory is all they cost). BlockingClient
/// (blocking_client.hpp) does all this itself at the child's first call.
///
/// Ownership and lifetime: keys and values passed in are copied (or, for a moved-in
/// std::string, kept) before the call returns, except the key span of get_multi and friends,
/// which must stay valid until the initiating function returns (with asio::deferred: until
/// the deferred operation is started). Results are owning copies; the one view handed out,
/// ValueView in get_view(), lives only during its callback.
#pragma once

#include "folsom/detail/async_op.hpp"
#include "folsom/detail/client_core.hpp"
#include "folsom/detail/collectors.hpp"
#include "folsom/detail/write_here.hpp"
#include "folsom/error.hpp"
#include "folsom/expiry.hpp"
#include "folsom/export.hpp"
#include "folsom/meta.hpp"
#include "folsom/options.hpp"
#include "folsom/protocol/key.hpp"
#include "folsom/results.hpp"
#include "folsom/status.hpp"
#include "folsom/value.hpp"

#include <asio/any_io_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace folsom {

/// Flags and cas of a store.
struct FOLSOM_EXPORT StoreOptions {
    std::uint32_t flags = 0;  ///< opaque to the server, returned with the value
    std::uint64_t cas = 0;    ///< 0: no cas check (only StoreMode::cas uses it over ASCII)
};

/// Which store command Client::store sends (memcached's set, add, replace, append, prepend, cas).
enum class StoreMode : std::uint8_t { set, add, replace, append, prepend, cas };

namespace detail {
/// A duration as whole seconds for the wire, clamped to 0..UINT32_MAX (no absolute time).
constexpr std::uint32_t to_seconds(Ttl ttl) noexcept {
    return ttl.count() <= 0              ? 0
           : ttl.count() >= 0xffffffffLL ? 0xffffffffu
                                         : static_cast<std::uint32_t>(ttl.count());
}
}  // namespace detail

class QuietClient;

/// The asynchronous memcached client: a cheap, copyable handle to shared connections. See
/// client.hpp for the contracts every operation keeps.
class FOLSOM_EXPORT Client {
  public:
    using executor_type = asio::any_io_executor;  ///< where completions run by default

    /// Starts connecting to every server in `options` (in the background) and returns at once.
    /// Requests made while the first connect is in progress wait for it (bounded by
    /// connect_timeout); once a server is known down they fail fast with not_connected.
    /// `ex` must lead to an asio::io_context: its executor (with any properties) or a strand
    /// of it. The connections run on the io_context's concrete executor type, because behind
    /// a type-erased executor every socket completion allocates (Asio's property queries).
    /// Throws std::system_error(errc::invalid_argument) for a malformed server list or an
    /// executor of another kind (e.g. an asio::thread_pool's).
    static Client connect(asio::any_io_executor ex, const Options& options);
    /// As connect(io.get_executor(), options).
    static Client connect(asio::io_context& io, const Options& options) {
        return connect(io.get_executor(), options);
    }
    /// As connect(), delivering completions on `reply_executor` instead of the I/O thread
    /// (Folsom's withReplyExecutor): slow handlers then cannot stall the connections. The cost
    /// is one post per request (a queue push and a wake-up of a reply thread, plus the latency
    /// of the hop; docs/performance.md). A handler's own associated executor
    /// (asio::bind_executor, a coroutine's executor) still takes precedence, and get_view()
    /// callbacks always run on the I/O thread, since their views die with the read buffer.
    static Client connect(asio::any_io_executor io, const Options& options,
                          asio::any_io_executor reply_executor);

    Client() = default;  ///< an empty handle; every request on it is undefined
    /// Wraps a core; when the last copy of this Client goes away, the core is shut down.
    explicit Client(std::shared_ptr<detail::ClientCore> core)
        : core_(std::move(core)), owner_(nullptr, [c = core_](void*) { c->shutdown(); }) {}

    /// The I/O executor, where completion handlers run unless bound to another.
    executor_type get_executor() const noexcept { return core_->executor(); }

    // ---- retrieval ----------------------------------------------------------------------

    /// void(std::error_code, std::optional<Value>)
    template <class Token>
    auto get(std::string_view key, Token&& token) {
        return retrieve(detail::OpCode::get, key, 0, std::forward<Token>(token));
    }
    /// As get, with Value::cas set. void(std::error_code, std::optional<Value>)
    template <class Token>
    auto gets(std::string_view key, Token&& token) {
        return retrieve(detail::OpCode::gets, key, 0, std::forward<Token>(token));
    }
    /// Get and touch: returns the value and sets its ttl. void(error_code, optional<Value>)
    template <class Token>
    auto gat(std::string_view key, Expiry ttl, Token&& token) {
        return retrieve<true>(detail::OpCode::gat, key, detail::to_exptime(ttl),
                              std::forward<Token>(token));
    }
    /// As gat, with Value::cas set.
    template <class Token>
    auto gats(std::string_view key, Expiry ttl, Token&& token) {
        return retrieve<true>(detail::OpCode::gats, key, detail::to_exptime(ttl),
                              std::forward<Token>(token));
    }

    /// Zero-copy get: `callback(std::error_code, const ValueView*)` is called once, on the I/O
    /// thread, with the value still in the connection's read buffer (nullptr on a miss or an
    /// error). The view lives until the callback returns: copy what you keep
    /// (ValueView::to_value). Keep the callback short; it runs inside the read loop.
    template <class Callback>
    void get_view(std::string_view key, Callback&& callback);

    /// Multi-get of any number of keys, split per server (and into bounded chunks) and sent in
    /// parallel; results come back in key order. void(std::error_code, MultiGetResult)
    template <class Token>
    auto get_multi(std::span<const std::string_view> keys, Token&& token) {
        return retrieve_multi(detail::OpCode::get, keys, 0, std::forward<Token>(token));
    }
    /// Zero-copy multi-get. `on_hit(std::size_t index, const ValueView& value)` is called once
    /// for each key found, as its reply is read: `index` is the key's position in `keys`, and
    /// the view points into the connection's read buffer and lives only during the call (copy
    /// what you keep: ValueView::to_value). Misses get no call. Then the completion runs:
    /// void(std::error_code, MultiGetViewResult), with the number of hits and, when a server
    /// failed, why each of its keys went unanswered (the error itself is set only when every
    /// server failed, as with get_multi). No value is copied and nothing is allocated per key.
    /// `on_hit` runs on the I/O thread of the connection that read the value, always before
    /// the completion; with several servers and several threads running the io_context, calls
    /// for keys on different servers may run at the same time. Keep it short: it runs inside
    /// the read loop, and it must not throw.
    template <class OnHit, class Token>
    auto get_multi_view(std::span<const std::string_view> keys, OnHit&& on_hit, Token&& token) {
        return asio::async_initiate<Token, void(std::error_code, MultiGetViewResult)>(
            [core = core_, keys](auto handler, auto hit) {
                using Collector = detail::MultiGetViewCollector<decltype(hit)>;
                start_multi<Collector>(core, detail::OpCode::get, keys, 0, std::move(handler),
                                       std::move(hit));
            },
            token, std::forward<OnHit>(on_hit));
    }
    /// Multi-gets with cas.
    template <class Token>
    auto gets_multi(std::span<const std::string_view> keys, Token&& token) {
        return retrieve_multi(detail::OpCode::gets, keys, 0, std::forward<Token>(token));
    }
    /// Multi get-and-touch.
    template <class Token>
    auto gat_multi(std::span<const std::string_view> keys, Expiry ttl, Token&& token) {
        return retrieve_multi(detail::OpCode::gat, keys, detail::to_exptime(ttl),
                              std::forward<Token>(token));
    }

    // ---- storage ------------------------------------------------------------------------

    /// The general store. void(std::error_code, Status): stored, not_stored, exists,
    /// not_found, value_too_large, out_of_memory.
    template <class Token>
    auto store(StoreMode mode, std::string_view key, Bytes value, Expiry ttl, StoreOptions opts,
               Token&& token);

    /// Stores unconditionally. void(std::error_code, Status)
    template <class Token>
    auto set(std::string_view key, Bytes value, Expiry ttl, Token&& token) {
        return store(StoreMode::set, key, std::move(value), ttl, {}, std::forward<Token>(token));
    }
    /// As set, with the item's 32-bit flags.
    template <class Token>
    auto set(std::string_view key, Bytes value, Expiry ttl, std::uint32_t flags, Token&& token) {
        return store(StoreMode::set, key, std::move(value), ttl, {flags, 0},
                     std::forward<Token>(token));
    }
    /// Stores only if the key is absent (else not_stored). void(std::error_code, Status)
    template <class Token>
    auto add(std::string_view key, Bytes value, Expiry ttl, Token&& token) {
        return store(StoreMode::add, key, std::move(value), ttl, {}, std::forward<Token>(token));
    }
    /// Stores only if the key is present (else not_stored). void(std::error_code, Status)
    template <class Token>
    auto replace(std::string_view key, Bytes value, Expiry ttl, Token&& token) {
        return store(StoreMode::replace, key, std::move(value), ttl, {},
                     std::forward<Token>(token));
    }
    /// Adds bytes after the item's value, keeping its flags and ttl (not_stored when absent).
    template <class Token>
    auto append(std::string_view key, Bytes value, Token&& token) {
        return store(StoreMode::append, key, std::move(value), Expiry{}, {},
                     std::forward<Token>(token));
    }
    /// Adds bytes before the item's value, keeping its flags and ttl (not_stored when absent).
    template <class Token>
    auto prepend(std::string_view key, Bytes value, Token&& token) {
        return store(StoreMode::prepend, key, std::move(value), Expiry{}, {},
                     std::forward<Token>(token));
    }
    /// Check-and-set: stores only if the item's cas is still `cas`.
    /// void(std::error_code, Status): stored, exists (changed since), not_found.
    template <class Token>
    auto cas(std::string_view key, Bytes value, std::uint64_t cas, Expiry ttl, Token&& token) {
        return store(StoreMode::cas, key, std::move(value), ttl, {0, cas},
                     std::forward<Token>(token));
    }

    // ---- multi-key writes -----------------------------------------------------------------
    //
    // Each key goes to its own server; each server's keys are pipelined there as quiet
    // requests (meta q, binary ...Q) closed by one barrier, or over ascii as acknowledged
    // pipelined writes, so that every key's result is its true outcome. A key that is invalid
    // (or a value too large) fails alone, before anything is sent for it; a server that is
    // down fails only its own keys. void(std::error_code, MultiWriteResult): results[i] for
    // the i-th key; the error is set only when every key failed. The keys and values are
    // copied into the requests: they need to live only until the call returns.

    /// Stores every item (set). Results: stored, or what went wrong for that key.
    template <class Token>
    auto set_multi(std::span<const KeyValue> items, Expiry ttl, Token&& token) {
        return asio::async_initiate<Token, void(std::error_code, MultiWriteResult)>(
            [core = core_, items, ttl](auto handler) {
                const std::uint32_t exptime = detail::to_exptime(ttl);
                start_write_multi(
                    core, detail::OpCode::set, items.size(), std::move(handler),
                    [items, exptime](std::size_t i, detail::Request& r) {
                        r.key = items[i].key;
                        r.value = items[i].value;
                        r.flags = items[i].flags;
                        r.exptime = exptime;
                    },
                    expiry_refusal(exptime));
            },
            token);
    }
    /// Deletes every key. Results: deleted, not_found, or an error.
    template <class Token>
    auto delete_multi(std::span<const std::string_view> keys, Token&& token) {
        return asio::async_initiate<Token, void(std::error_code, MultiWriteResult)>(
            [core = core_, keys](auto handler) {
                start_write_multi(core, detail::OpCode::del, keys.size(), std::move(handler),
                                  [keys](std::size_t i, detail::Request& r) { r.key = keys[i]; });
            },
            token);
    }
    /// Sets every key's ttl. Results: touched, not_found, or an error.
    template <class Token>
    auto touch_multi(std::span<const std::string_view> keys, Expiry ttl, Token&& token) {
        return asio::async_initiate<Token, void(std::error_code, MultiWriteResult)>(
            [core = core_, keys, ttl](auto handler) {
                const std::uint32_t exptime = detail::to_exptime(ttl);
                start_write_multi(
                    core, detail::OpCode::touch, keys.size(), std::move(handler),
                    [keys, exptime](std::size_t i, detail::Request& r) {
                        r.key = keys[i];
                        r.exptime = exptime;
                    },
                    expiry_refusal(exptime));
            },
            token);
    }

    /// A view of this client whose writes are quiet (fire-and-forget, noreply): see
    /// quiet_client.hpp for what each protocol reports.
    QuietClient quiet() const;

    // ---- other key operations -----------------------------------------------------------

    /// void(std::error_code, Status): deleted or not_found.
    template <class Token>
    auto del(std::string_view key, Token&& token) {
        detail::Request r;
        r.code = detail::OpCode::del;
        r.key = key;
        return single<detail::StatusCollector, void(std::error_code, Status)>(
            r, std::forward<Token>(token));
    }
    /// void(std::error_code, Status): touched or not_found.
    template <class Token>
    auto touch(std::string_view key, Expiry ttl, Token&& token) {
        detail::Request r;
        r.code = detail::OpCode::touch;
        r.key = key;
        r.exptime = detail::to_exptime(ttl);
        return single<detail::StatusCollector, void(std::error_code, Status)>(
            r, std::forward<Token>(token), expiry_refusal(r.exptime));
    }
    /// void(std::error_code, std::optional<std::uint64_t>): the new value; empty when missing.
    template <class Token>
    auto incr(std::string_view key, std::uint64_t delta, Token&& token) {
        return arith(detail::OpCode::incr, key, delta, std::forward<Token>(token));
    }
    /// As incr; memcached does not go below 0.
    template <class Token>
    auto decr(std::string_view key, std::uint64_t delta, Token&& token) {
        return arith(detail::OpCode::decr, key, delta, std::forward<Token>(token));
    }
    /// As incr, but a missing counter is created holding `initial` (expiring after `ttl`), and
    /// the result is then `initial`. Binary and meta protocols only; over ascii the request
    /// fails with errc::unsupported (the text protocol cannot create a counter).
    template <class Token>
    auto incr(std::string_view key, std::uint64_t delta, std::uint64_t initial, Expiry ttl,
              Token&& token) {
        return arith(detail::OpCode::incr, key, delta, std::forward<Token>(token), initial,
                     detail::to_exptime(ttl));
    }
    /// As decr, creating a missing counter as incr with an initial value does.
    template <class Token>
    auto decr(std::string_view key, std::uint64_t delta, std::uint64_t initial, Expiry ttl,
              Token&& token) {
        return arith(detail::OpCode::decr, key, delta, std::forward<Token>(token), initial,
                     detail::to_exptime(ttl));
    }

    // ---- meta protocol: stampede control (docs/meta-protocol.md) ---------------------------
    //
    // Options::protocol must be Protocol::meta; over ascii and binary these complete with
    // errc::unsupported and nothing is sent. For the two usual recipes built on them (get or
    // fill, stale-while-revalidate) see cache_recipes.hpp.

    /// mg with the value, cas and flags, plus the flags in `opts` (vivify N, recache R, touch
    /// T, no-bump u, return t/h/l). void(std::error_code, MetaGetResult): a miss is an empty
    /// MetaGetResult::value; W/X/Z say who should recache. Retried on a lost connection only
    /// without vivify_on_miss and recache_below (a repeat could swallow the win token).
    template <class Token>
    auto meta_get(std::string_view key, const MetaGetOptions& opts, Token&& token) {
        detail::Request r;
        r.code = detail::OpCode::meta_get;
        r.key = key;
        if (opts.vivify_on_miss) r.meta.vivify_ttl = detail::to_exptime(*opts.vivify_on_miss);
        if (opts.recache_below) r.meta.recache_ttl = detail::to_seconds(*opts.recache_below);
        if (opts.touch) r.meta.touch_ttl = detail::to_exptime(*opts.touch);
        r.meta.no_bump = opts.no_bump;
        r.meta.return_ttl = opts.return_ttl;
        r.meta.return_hit_before = opts.return_hit_before;
        r.meta.return_last_access = opts.return_last_access;
        const bool unsendable = r.meta.vivify_ttl == detail::invalid_exptime ||
                                r.meta.touch_ttl == detail::invalid_exptime;
        return single<detail::MetaGetCollector, void(std::error_code, MetaGetResult)>(
            r, std::forward<Token>(token),
            expiry_refusal(unsendable ? detail::invalid_exptime : 0));
    }
    /// As meta_get with default options: the value, cas and flags, no side effects.
    template <class Token>
    auto meta_get(std::string_view key, Token&& token) {
        return meta_get(key, MetaGetOptions{}, std::forward<Token>(token));
    }

    /// ms with mode, flags, ttl, compare-cas C and invalidate I. void(std::error_code,
    /// Status): stored, not_stored (add/replace/append/prepend), exists (cas mismatch),
    /// not_found (cas given, item gone), value_too_large, out_of_memory. Never retried.
    template <class Token>
    auto meta_set(std::string_view key, Bytes value, Expiry ttl, const MetaSetOptions& opts,
                  Token&& token);

    /// md with compare-cas C, and invalidate I + T<ttl> (mark stale instead of removing).
    /// void(std::error_code, Status): deleted (also for a successful invalidate), not_found,
    /// exists (cas mismatch). Retried on a lost connection, like del.
    template <class Token>
    auto meta_delete(std::string_view key, const MetaDeleteOptions& opts, Token&& token) {
        detail::Request r;
        r.code = detail::OpCode::meta_delete;
        r.key = key;
        r.cas = opts.compare_cas.value_or(0);
        r.meta.invalidate = opts.invalidate;
        if (opts.stale_ttl) r.meta.delete_ttl = detail::to_exptime(*opts.stale_ttl);
        return single<detail::StatusCollector, void(std::error_code, Status)>(
            r, std::forward<Token>(token), expiry_refusal(r.meta.delete_ttl.value_or(0)));
    }

    // ---- every server ---------------------------------------------------------------------

    /// flush_all on every server. void(std::error_code, std::vector<NodeResult<Status>>)
    template <class Token>
    auto flush_all(std::optional<std::chrono::seconds> delay, Token&& token) {
        detail::Request r;
        r.code = detail::OpCode::flush_all;
        if (delay) r.delay = static_cast<std::uint32_t>(delay->count());
        return all_nodes<Status>(r, std::forward<Token>(token));
    }
    /// stats [group] on every server. void(std::error_code, std::vector<NodeResult<StatList>>)
    template <class Token>
    auto stats(std::string_view group, Token&& token) {
        detail::Request r;
        r.code = detail::OpCode::stats;
        r.group = group;
        return all_nodes<StatList>(r, std::forward<Token>(token));
    }
    /// Deletes `key` on every server at once (Folsom's deleteAll): for a key that may have
    /// been written to a server other than its owner (before a server set change, by another
    /// client with another placement, or on purpose to every node). One result per current
    /// server: Status::deleted where it was, Status::not_found where it was not, or that
    /// server's error (a server that is down does not stop the others).
    /// void(std::error_code, std::vector<NodeResult<Status>>): the error is set only when
    /// every server failed; an invalid key fails with errc::invalid_key (every node's result
    /// too) before anything is sent.
    template <class Token>
    auto delete_all(std::string_view key, Token&& token) {
        detail::Request r;
        r.code = detail::OpCode::del;
        r.key = key;
        return all_nodes<Status>(r, std::forward<Token>(token),
                                 protocol::validate_key(key, core_ && core_->binary_keys()));
    }
    /// `verbosity LEVEL` on every server (the level of memcached's own logging).
    /// void(std::error_code, std::vector<NodeResult<Status>>): Status::ok from each server.
    template <class Token>
    auto verbosity(std::uint32_t level, Token&& token) {
        detail::Request r;
        r.code = detail::OpCode::verbosity;
        r.level = level;
        return all_nodes<Status>(r, std::forward<Token>(token));
    }
    /// version of every server. void(std::error_code, std::vector<NodeResult<std::string>>)
    template <class Token>
    auto version(Token&& token) {
        detail::Request r;
        r.code = detail::OpCode::version;
        return all_nodes<std::string>(r, std::forward<Token>(token));
    }

    // ---- lifecycle --------------------------------------------------------------------------

    /// Fails every outstanding and later request with errc::closed. Idempotent.
    void shutdown() {
        if (core_) core_->shutdown();
    }
    /// Waits until the client has a usable connection (Folsom's ConnectFuture: with several
    /// servers, as soon as one is connected). void(std::error_code): {} when connected,
    /// errc::timeout when not within `timeout`, a connection failure that retrying cannot fix
    /// (e.g. errc::auth_failed), errc::closed after shutdown(). Requests do not need it: it is
    /// for start-up checks and health probes.
    template <class Token>
    auto wait_connected(std::chrono::milliseconds timeout, Token&& token) {
        return asio::async_initiate<Token, void(std::error_code)>(
            [core = core_](auto handler, std::chrono::milliseconds t) {
                // std::function needs a copyable target; Asio handlers may be move-only.
                auto h = std::make_shared<decltype(handler)>(std::move(handler));
                auto ex = core->completion_executor();
                core->notify_when_ready(t, [h, ex](std::error_code ec) {
                    asio::dispatch(asio::get_associated_executor(*h, ex),
                                   [h, ec] { std::move (*h)(ec); });
                });
            },
            token, timeout);
    }
    /// Requests accepted and not yet completed (for monitoring and tests).
    std::size_t outstanding() const noexcept { return core_->outstanding(); }
    /// Number of server indices (Options::servers order). With discovery, every server seen
    /// so far keeps its index, so this counts removed servers too.
    std::size_t server_count() const noexcept { return core_->server_count(); }
    /// "host:port" of server `i` (0 <= i < server_count()); lives as long as the client.
    const std::string& server_name(std::size_t i) const noexcept { return core_->server_name(i); }
    /// Which server (index) owns `key` now (with failover, a live server).
    std::size_t server_for(std::string_view key) const noexcept { return core_->server_for(key); }
    /// What each route did, when Options::routes configured a route tree (routes.hpp):
    /// requests, failovers and shadow outcomes by route name. Empty without routes, and for a
    /// tree that is one PoolRoute (served as a client without routes; per-server metrics
    /// cover it).
    std::vector<RouteStats> route_stats() const { return core_->route_stats(); }

  private:
    friend class QuietClient;

    // Initiations capture the core, not `this`: with deferred tokens they may run after this
    // handle is gone. The op keeps `core` alive; initiations move their captured copy in (Asio
    // invokes an initiation once, as an rvalue), which spares a reference count round trip.
    template <class Collector, class Handler, class... Args>
    static detail::AsyncOp<Collector, std::decay_t<Handler>>* make_op(
        std::shared_ptr<detail::ClientCore> core, Handler&& h, std::uint32_t parts,
        const detail::TraceInfo& trace, Args&&... args) {
        detail::ClientCore& c = *core;
        const bool acquired = c.try_acquire();
        auto* op = detail::AsyncOp<Collector, std::decay_t<Handler>>::create(
            std::forward<Handler>(h), std::move(core), acquired, parts,
            std::forward<Args>(args)...);
        op->trace(trace);
        if (!acquired) {
            if (Metrics* m = c.metrics()) report_overloaded(*m, trace, parts);
            // Fail every part at once; the initiator's reference then posts the result.
            for (std::uint32_t p = 0; p < parts; ++p)
                op->on_complete(p, detail::failure(make_error_code(errc::overloaded)));
        }
        return acquired ? op : (op->initiated(), nullptr);
    }

    /// Counts requests refused for backpressure (they never reach a server).
    static void report_overloaded(Metrics& m, const detail::TraceInfo& trace,
                                  std::uint32_t parts) noexcept {
        RequestRecord rec;
        rec.server = Metrics::no_server;
        rec.op = detail::to_metric_op(trace.code);
        rec.outcome = Outcome::error;
        rec.error = make_error_code(errc::overloaded);
        rec.keys =
            detail::is_retrieval(trace.code) ? static_cast<std::uint32_t>(trace.key_count) : 0;
        for (std::uint32_t p = 0; p < parts; ++p)
            m.request_completed(rec);
    }

    /// One request to the server that owns r.key.
    /// With `refused` set, nothing is sent: the request fails with it (bad input).
    template <class Collector, class Signature, class Token>
    auto single(const detail::Request& r, Token&& token, std::error_code refused = {}) {
        return asio::async_initiate<Token, Signature>(
            [core = core_, refused](auto handler, const detail::Request& req) mutable {
                detail::ClientCore& c = *core;  // kept alive by the op until initiated()
                auto* op = make_op<Collector>(std::move(core), std::move(handler), 1,
                                              detail::TraceInfo{req.code, req.key, 1, true});
                if (!op) return;
                if (refused) return refuse(*op, 1, refused);
                c.send(*op, 0, req);
                op->initiated();
            },
            token, r);
    }

    /// The refusal of a request whose exptime cannot be sent (detail::invalid_exptime: an
    /// Expiry before the epoch or past 2038-01-19), else no error.
    static std::error_code expiry_refusal(std::uint32_t exptime) noexcept {
        return exptime == detail::invalid_exptime ? make_error_code(errc::invalid_argument)
                                                  : std::error_code{};
    }

    /// Fails every part of `op` with `ec` without sending anything, and ends its initiation.
    template <class Op>
    static void refuse(Op& op, std::uint32_t parts, std::error_code ec) {
        for (std::uint32_t p = 0; p < parts; ++p)
            op.on_complete(p, detail::failure(ec));
        op.initiated();
    }

    /// Expiring: gat/gats, whose exptime may be one that cannot be sent (get's path has no
    /// such check).
    template <bool Expiring = false, class Token>
    auto retrieve(detail::OpCode code, std::string_view key, std::uint32_t exptime, Token&& token) {
        // The request is built inside the initiation (not passed to it, which copied it).
        return asio::async_initiate<Token, void(std::error_code, std::optional<Value>)>(
            [core = core_](auto handler, detail::OpCode op_code, std::string_view op_key,
                           std::uint32_t op_exptime) mutable {
                detail::Request req;
                req.code = op_code;
                req.key = op_key;
                req.keys = std::span<const std::string_view>(&req.key, 1);
                req.exptime = op_exptime;
                detail::ClientCore& c = *core;  // kept alive by the op until initiated()
                auto* op =
                    make_op<detail::GetCollector>(std::move(core), std::move(handler), 1,
                                                  detail::TraceInfo{req.code, req.key, 1, true});
                if (!op) return;
                if constexpr (Expiring) {
                    if (auto ec = expiry_refusal(op_exptime)) return refuse(*op, 1, ec);
                }
                c.send(*op, 0, req);
                op->initiated();
            },
            token, code, key, exptime);
    }

    template <class Token>
    auto retrieve_multi(detail::OpCode code, std::span<const std::string_view> keys,
                        std::uint32_t exptime, Token&& token) {
        return asio::async_initiate<Token, void(std::error_code, MultiGetResult)>(
            [core = core_, code, keys, exptime](auto handler) {
                start_multi<detail::MultiGetCollector>(core, code, keys, exptime,
                                                       std::move(handler));
            },
            token);
    }

    /// Starts a multi-get whose result `Collector` builds (constructed from the keys and
    /// `collector_args`).
    template <class Collector, class Handler, class... Args>
    static void start_multi(const std::shared_ptr<detail::ClientCore>& core, detail::OpCode code,
                            std::span<const std::string_view> keys, std::uint32_t exptime,
                            Handler&& handler, Args&&... collector_args);

    template <class Token>
    auto store_request(StoreMode mode, std::string_view key, Bytes value, Expiry ttl,
                       StoreOptions opts, bool quiet, Token&& token);

    /// A multi-key write of `n` keys: part i is the request `fill(i, request)` describes,
    /// sent quiet with its outcome required, to the server of its key. With `refused` set,
    /// nothing is sent: every key fails with it (bad input).
    template <class Handler, class Fill>
    static void start_write_multi(const std::shared_ptr<detail::ClientCore>& core,
                                  detail::OpCode code, std::size_t n, Handler&& handler, Fill fill,
                                  std::error_code refused = {}) {
        using Op = detail::AsyncOp<detail::MultiWriteCollector, std::decay_t<Handler>>;
        const bool acquired = core->try_acquire();
        const auto parts = static_cast<std::uint32_t>(n);
        Op* op = Op::create(std::forward<Handler>(handler), core, acquired, parts, n);
        detail::TraceInfo trace{code, {}, n, false, true};
        op->trace(trace);
        if (!acquired) {
            if (Metrics* m = core->metrics()) report_overloaded(*m, trace, 1);
            for (std::uint32_t p = 0; p < parts; ++p)
                op->on_complete(p, detail::failure(make_error_code(errc::overloaded)));
            op->initiated();
            return;
        }
        if (refused) return refuse(*op, parts, refused);
        detail::Request r;
        for (std::uint32_t p = 0; p < parts; ++p) {
            r = detail::Request{};
            r.code = code;
            r.quiet = true;
            r.outcome_required = true;
            fill(p, r);
            core->send(*op, p, r);
        }
        op->initiated();
    }

    template <class Token>
    auto arith(detail::OpCode code, std::string_view key, std::uint64_t delta, Token&& token,
               std::optional<std::uint64_t> initial = std::nullopt, std::uint32_t exptime = 0) {
        detail::Request r;
        r.code = code;
        r.key = key;
        r.delta = delta;
        r.initial = initial;
        r.exptime = exptime;
        return single<detail::CounterCollector,
                      void(std::error_code, std::optional<std::uint64_t>)>(
            r, std::forward<Token>(token), expiry_refusal(exptime));
    }

    /// One request to every current server. With `refused` set, nothing is sent: every
    /// server's result, and the operation, fail with it (bad input).
    template <class T, class Token>
    auto all_nodes(detail::Request r, Token&& token, std::error_code refused = {}) {
        r.to_every_server = true;
        return asio::async_initiate<Token, void(std::error_code, std::vector<NodeResult<T>>)>(
            [core = core_, refused](auto handler, const detail::Request& req) {
                const std::vector<std::size_t> servers = core->broadcast_servers();
                const auto n = static_cast<std::uint32_t>(servers.size());
                std::vector<std::string> names;
                names.reserve(n);
                for (auto s : servers)
                    names.push_back(core->server_name(s));
                auto* op = make_op<detail::NodeCollector<T>>(
                    core, std::move(handler), n, detail::TraceInfo{req.code, {}, 0, false},
                    std::move(names));
                if (!op) return;
                if (refused) {
                    op->collector().refuse(refused);
                    for (std::uint32_t i = 0; i < n; ++i)
                        op->on_complete(i, detail::failure(refused));
                } else {
                    for (std::uint32_t i = 0; i < n; ++i)
                        core->submit(servers[i], *op, i, req);
                }
                op->initiated();
            },
            token, r);
    }

    std::shared_ptr<detail::ClientCore> core_;
    std::shared_ptr<void> owner_;  // shared by copies of this handle; shuts down on last release
};

// ---- out-of-line template members --------------------------------------------------------

template <class Token>
auto Client::store(StoreMode mode, std::string_view key, Bytes value, Expiry ttl, StoreOptions opts,
                   Token&& token) {
    return store_request(mode, key, std::move(value), ttl, opts, false, std::forward<Token>(token));
}

template <class Token>
auto Client::store_request(StoreMode mode, std::string_view key, Bytes value, Expiry ttl,
                           StoreOptions opts, bool quiet, Token&& token) {
    // The request keeps `value` alive until it completes, so a moved-in string is written
    // straight from its own memory.
    return asio::async_initiate<Token, void(std::error_code, Status)>(
        [core = core_, mode, key, ttl, opts, quiet](auto handler, Bytes v) mutable {
            struct StoreCollector : detail::StatusCollector {
                explicit StoreCollector(Bytes&& b) : bytes(std::move(b)) {}
                Bytes bytes;
            };
            const auto code = static_cast<detail::OpCode>(static_cast<int>(detail::OpCode::set) +
                                                          static_cast<int>(mode));
            detail::ClientCore& c = *core;  // kept alive by the op until initiated()
            auto* op = make_op<StoreCollector>(std::move(core), std::move(handler), 1,
                                               detail::TraceInfo{code, key, 1, true}, std::move(v));
            if (!op) return;
            detail::Request r;
            r.code = code;
            r.key = key;
            r.value = op->collector().bytes.view();
            r.value_is_stable = op->collector().bytes.owned();
            r.flags = opts.flags;
            r.cas = opts.cas;
            r.exptime = detail::to_exptime(ttl);
            if (auto ec = expiry_refusal(r.exptime)) return refuse(*op, 1, ec);
            r.quiet = quiet;
            c.send(*op, 0, r);
            op->initiated();
        },
        token, std::move(value));
}

template <class Token>
auto Client::meta_set(std::string_view key, Bytes value, Expiry ttl, const MetaSetOptions& opts,
                      Token&& token) {
    // As store(): the request keeps `value` alive until it completes.
    return asio::async_initiate<Token, void(std::error_code, Status)>(
        [core = core_, key, ttl, opts](auto handler, Bytes v) {
            struct StoreCollector : detail::StatusCollector {
                explicit StoreCollector(Bytes&& b) : bytes(std::move(b)) {}
                Bytes bytes;
            };
            auto* op = make_op<StoreCollector>(
                core, std::move(handler), 1,
                detail::TraceInfo{detail::OpCode::meta_set, key, 1, true}, std::move(v));
            if (!op) return;
            detail::Request r;
            r.code = detail::OpCode::meta_set;
            r.key = key;
            r.value = op->collector().bytes.view();
            r.value_is_stable = op->collector().bytes.owned();
            r.flags = opts.flags;
            r.cas = opts.compare_cas.value_or(0);
            r.exptime = detail::to_exptime(ttl);
            if (auto ec = expiry_refusal(r.exptime)) return refuse(*op, 1, ec);
            r.meta.invalidate = opts.invalidate;
            r.meta.set_mode = static_cast<std::uint8_t>(opts.mode);
            core->send(*op, 0, r);
            op->initiated();
        },
        token, std::move(value));
}

template <class Collector, class Handler, class... Args>
void Client::start_multi(const std::shared_ptr<detail::ClientCore>& core, detail::OpCode code,
                         std::span<const std::string_view> keys, std::uint32_t exptime,
                         Handler&& handler, Args&&... collector_args) {
    using Op = detail::AsyncOp<Collector, std::decay_t<Handler>>;
    const bool acquired = core->try_acquire();
    Op* op = Op::create(std::forward<Handler>(handler), core, acquired, 0, keys,
                        std::forward<Args>(collector_args)...);
    detail::TraceInfo trace{code, keys.empty() ? std::string_view{} : keys.front(), keys.size(),
                            false, true};
    op->trace(trace);
    auto& c = op->collector();
    if (!acquired) {
        if (Metrics* m = core->metrics()) report_overloaded(*m, trace, 1);
        c.plan(c.scratch(keys.size()), ~std::size_t{0});
        op->add_parts(c.part_count());
        for (std::uint32_t p = 0; p < c.part_count(); ++p)
            op->on_complete(p, detail::failure(make_error_code(errc::overloaded)));
        op->initiated();
        return;
    }
    if (exptime == detail::invalid_exptime) {  // gat_multi with an Expiry that cannot be sent
        c.plan(c.scratch(keys.size()), ~std::size_t{0});
        op->add_parts(c.part_count());
        return refuse(*op, c.part_count(), make_error_code(errc::invalid_argument));
    }
    const std::span<std::uint32_t> server_of = c.scratch(keys.size());
    core->servers_for(c.keys(), server_of);
    // gat/gats lines must stay under memcached's 2048-byte limit for non-get lines; get/gets
    // lines may be long, but bounded chunks let replies start sooner and cap server buffers.
    const bool touch = code == detail::OpCode::gat || code == detail::OpCode::gats;
    const std::uint32_t parts = c.plan(server_of, touch ? 1900 : protocol::max_retrieval_key_bytes,
                                       core->key_prefix_size());
    op->add_parts(parts);
    detail::Request r;
    r.code = code;
    r.exptime = exptime;
    r.keys_are_stable = true;  // they point into the collector, which lives as long as the op
    for (std::uint32_t p = 0; p < parts; ++p) {
        r.keys = c.part_keys(p);
        r.key = r.keys.front();
        core->submit(c.part_server(p), *op, p, r);
    }
    op->initiated();
}

namespace detail {
/// Zero-copy get: calls the user's callback from on_value, with the view.
template <class Callback>
class GetViewOp final : public Operation {
  public:
    GetViewOp(Callback cb, std::shared_ptr<ClientCore> core)
        : cb_(std::move(cb)), core_(std::move(core)) {}
    void on_value(std::uint32_t, std::uint32_t, const ValueView& v) override {
        if (delivered_) return;
        delivered_ = true;
        if (span_) end_span(SpanEnd{Outcome::hit, {}, 1});
        cb_(std::error_code{}, &v);
    }
    /// Opens the span (when the core has a tracer). Call before initiated().
    void trace(const TraceInfo& info) {
        if (core_->tracer()) span_ = open_span(*core_, info);
    }
    void on_stat(std::uint32_t, std::string_view, std::string_view) override {}
    void on_complete(std::uint32_t, const Completion& c) override {
        ec_ = c.ec;
        drop(false);
    }
    void pin() noexcept override { refs.fetch_add(1, std::memory_order_relaxed); }
    void unpin() override { drop(false); }
    void initiated() { drop(true); }
    std::atomic<int> refs{2};

    using allocator = RequestAllocator<GetViewOp>;
    static GetViewOp* create(Callback cb, std::shared_ptr<ClientCore> core) {
        allocator alloc;
        GetViewOp* p = alloc.allocate(1);
        return ::new (static_cast<void*>(p)) GetViewOp(std::move(cb), std::move(core));
    }
    static void destroy(GetViewOp* p) {
        allocator alloc;
        p->~GetViewOp();
        alloc.deallocate(p, 1);
    }

  private:
    void drop(bool from_initiator) {
        if (!drop_reference(refs)) return;
        std::shared_ptr<ClientCore> core = std::move(core_);
        core->release();
        const bool delivered = delivered_;
        if (span_ && !delivered)
            end_span(ec_ ? SpanEnd{Outcome::error, ec_, 0} : SpanEnd{Outcome::miss, {}, 0});
        auto deliver = [cb = std::move(cb_), ec = ec_]() mutable { cb(ec, nullptr); };
        destroy(this);
        if (delivered) return;
        // A miss read inside the call that started it may be reported there too, under the
        // same rule as AsyncOp::deliver (the thread's WriteHere allows it): it spares a
        // blocking wrapper the post and the scheduler round that would run it.
        if (from_initiator && !completes_inline_here(core->inline_context(), true))
            asio::post(core->executor(), std::move(deliver));
        else
            deliver();
    }
    void end_span(const SpanEnd& e) noexcept {
        span_->end(e);
        span_.reset();
    }
    Callback cb_;
    std::shared_ptr<ClientCore> core_;
    std::unique_ptr<Span> span_;  // null unless a tracer is set
    std::error_code ec_;
    bool delivered_ = false;
};
}  // namespace detail

template <class Callback>
void Client::get_view(std::string_view key, Callback&& callback) {
    const detail::TraceInfo trace{detail::OpCode::get, key, 1, true};
    if (!core_->try_acquire()) {
        if (auto span = detail::open_span(*core_, trace))
            span->end(SpanEnd{Outcome::error, make_error_code(errc::overloaded), 0});
        if (Metrics* m = core_->metrics()) report_overloaded(*m, trace, 1);
        asio::post(core_->executor(), [cb = std::forward<Callback>(callback)]() mutable {
            cb(make_error_code(errc::overloaded), nullptr);
        });
        return;
    }
    auto* op =
        detail::GetViewOp<std::decay_t<Callback>>::create(std::forward<Callback>(callback), core_);
    op->trace(trace);
    detail::Request r;
    r.code = detail::OpCode::get;
    r.key = key;
    r.keys = std::span<const std::string_view>(&r.key, 1);
    core_->send(*op, 0, r);
    op->initiated();
}

}  // namespace folsom

// The quiet view (Client::quiet()) needs the whole Client.
#include "folsom/quiet_client.hpp"
#include "folsom/send_batch.hpp"
