/// @file
/// Two cache recipes over the meta protocol's win tokens (docs/meta-protocol.md):
///
///   * get_or_fill — stampede protection. On a miss exactly one caller (the one memcached hands
///     the win, W) runs your fill function and stores its result; the others wait for it
///     (polling with bounded backoff up to a deadline) or, by option, get the miss at once.
///   * get_stale_while_revalidate — everyone is served the value at once, even when it is stale
///     (invalidated) or about to expire; only the caller handed the win refreshes it.
///   * invalidate — marks an item stale (md I T<ttl>), so the next get triggers one refresh.
///
///     folsom::Options o;
///     o.protocol = folsom::Protocol::meta;            // required: W/X/Z exist only in meta
///     auto client = folsom::Client::connect(io, o);
///     folsom::CacheResult r = co_await folsom::get_or_fill(
///         client, "user:42", {.ttl = std::chrono::minutes(5)},
///         [&]() -> asio::awaitable<std::string> { co_return co_await load_user(42); },
///         asio::use_awaitable);
///
/// The fill function comes in two forms:
///   * callback: `void(folsom::FillDone done)`; call `done(ec, value)` once, from any thread
///     (an error code means the fill failed; later calls are ignored). If it throws before
///     calling done, the fill fails with errc::fill_failed.
///   * coroutine: `asio::awaitable<std::string>()`, run on the client's executor; an exception
///     fails the fill (a std::system_error with its code, anything else with errc::fill_failed).
///
/// Completion: every recipe takes an Asio completion token (callback, use_future,
/// use_awaitable) with the signature void(std::error_code, CacheResult), and completes exactly
/// once on every path: a client error (connection lost, timeout, unsupported over
/// ascii/binary) completes at once with that error; a failed fill completes with the fill's
/// error after releasing the win (see below); waiting past FillOptions::wait_timeout completes
/// with errc::timeout. The handler runs on its associated executor (by default the client's).
///
/// Releasing the win when a fill fails, so another caller can win later: a stub created on a
/// miss is deleted with md C<cas> (only if nobody stored over it meanwhile); an existing item
/// (stale or near expiry) is re-invalidated with md I C<cas>, which re-arms its win token.
///
/// Limits: an empty stored value cannot be told from a stub being filled (memcached marks
/// neither); do not cache empty values with these recipes. A filled value is stored with
/// ms C<cas of the stub>; if that store fails (the item changed meanwhile, or its stub
/// expired because the fill took longer than FillOptions::stub_ttl) the filled value is still
/// returned, with CacheResult::stored false. Cancellation slots are not supported.
///
/// Thread-safety: as Client; each call is independent. Lifetime: the call keeps a copy of the
/// Client handle (so its connections) and of the key until it completes; in background
/// refresh mode, until the refresh ends.
#pragma once

#include "folsom/client.hpp"
#include "folsom/error.hpp"
#include "folsom/meta.hpp"

#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/awaitable.hpp>
#include <asio/co_spawn.hpp>
#include <asio/dispatch.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

namespace folsom {

/// What the fill function of a recipe reports: an error (the fill failed), or the value to
/// store and return. Call it once; it may be called from any thread.
using FillDone = std::function<void(std::error_code, std::string)>;

/// How get_or_fill fills, stores and waits.
struct FillOptions {
    /// When the stored value expires: a ttl (0: never) or an absolute time (expiry.hpp).
    Expiry ttl{};
    std::uint32_t flags = 0;  ///< client flags of the stored value
    /// Lifetime of the empty stub a miss creates (mg N<ttl>). The win it carries lasts as long:
    /// a fill that takes longer loses its store, and a waiter then wins and fills again.
    Ttl stub_ttl{30};
    /// On a miss someone else is filling: true, poll until the value appears (or the win
    /// comes free, and this caller fills); false, complete at once with CacheSource::miss.
    bool wait_for_fill = true;
    /// How long a waiter polls before completing with errc::timeout.
    std::chrono::milliseconds wait_timeout{3000};
    std::chrono::milliseconds poll_initial{2};  ///< first poll interval (then doubled)
    std::chrono::milliseconds poll_max{100};    ///< longest poll interval
};

/// How get_stale_while_revalidate refreshes.
struct RevalidateOptions {
    /// Filling, storing and waiting, as for get_or_fill (used for the store of a refresh, and
    /// when the item is missing altogether: then there is nothing stale to serve).
    FillOptions fill{};
    /// R<ttl>: hand out a win (one refresh) once the item has less than this left to live;
    /// 0: refresh only after an invalidation (invalidate(), md I).
    Ttl recache_below{0};
    /// true: the winner too is served the stale value at once, and refreshes in the
    /// background (outcome reported to on_refreshed); false: the winner waits for its refresh
    /// and is served the fresh value (CacheSource::filled).
    bool refresh_in_background = true;
    /// Called once when a background refresh ends: {} and whether the store succeeded, or
    /// the fill's / client's error. Runs on the client's executor; may be empty.
    std::function<void(std::error_code, bool stored)> on_refreshed{};
};

/// Where a recipe's value came from.
enum class CacheSource : std::uint8_t {
    hit,     ///< the cache had it, fresh
    filled,  ///< this caller won, ran the fill and stored the result
    waited,  ///< another caller was filling; this one waited for the value
    stale,   ///< the value is stale (invalidated) or due for refresh; another caller (or, with
             ///< `refreshing`, this one in the background) refreshes it
    miss,    ///< another caller is filling and wait_for_fill was false: no value
};

/// The result of a recipe.
struct CacheResult {
    std::optional<Value> value;              ///< empty only with CacheSource::miss
    CacheSource source = CacheSource::miss;  ///< where `value` came from
    /// filled: the store with the win's cas succeeded (false: the item changed meanwhile, or
    /// the store failed; the value is still the one filled).
    bool stored = false;
    /// stale: this caller holds the win and refreshes in the background.
    bool refreshing = false;
};

namespace detail {

/// One recipe call in progress: a chain of client requests (meta_get, the fill, meta_set or
/// meta_delete, timer waits), one at a time. Each step starts the next or finishes, so the
/// handler is delivered exactly once (`handler_` is emptied by the delivery).
template <class Fill, class Handler>
class RecipeOp : public std::enable_shared_from_this<RecipeOp<Fill, Handler>> {
  public:
    RecipeOp(Client client, std::string_view key, const RevalidateOptions& opts, bool revalidate,
             Fill fill, Handler handler)
        : client_(std::move(client)),
          key_(key),
          opts_(opts),
          revalidate_(revalidate),
          fill_(std::move(fill)),
          handler_(std::move(handler)),
          timer_(client_.get_executor()),
          backoff_(std::max(opts.fill.poll_initial, std::chrono::milliseconds(1))) {}

    void start() {
        deadline_ = std::chrono::steady_clock::now() + opts_.fill.wait_timeout;
        lookup();
    }

  private:
    using Self = RecipeOp<Fill, Handler>;

    void lookup() {
        MetaGetOptions g;
        g.vivify_on_miss = opts_.fill.stub_ttl;
        if (revalidate_ && opts_.recache_below.count() > 0) g.recache_below = opts_.recache_below;
        client_.meta_get(key_, g,
                         [self = this->shared_from_this()](std::error_code ec, MetaGetResult r) {
                             self->on_lookup(ec, std::move(r));
                         });
    }

    void on_lookup(std::error_code ec, MetaGetResult r) {
        if (ec) return finish(ec, {});
        // With N every get answers with an item (a stub on a miss); a plain miss can only
        // mean the stub expired between requests: look again.
        if (!r.value) return wait();
        // A stub: an empty value nobody stored, marked W (ours) or Z (someone else's). An
        // existing item handed out a win because it is stale (X) or near expiry (R).
        const bool stub = !r.stale && r.value->data.empty() && (r.win || r.win_sent);
        if (r.win) {
            cas_ = r.cas;
            had_item_ = !stub;
            if (!stub && revalidate_ && opts_.refresh_in_background) {
                CacheResult served{std::move(r.value), CacheSource::stale, false, true};
                deliver({}, std::move(served));
            }
            return run_fill();
        }
        if (stub) {
            if (!opts_.fill.wait_for_fill) return finish({}, CacheResult{});
            return wait();
        }
        CacheResult hit;
        hit.source = r.stale || r.win_sent ? CacheSource::stale
                     : waited_             ? CacheSource::waited
                                           : CacheSource::hit;
        hit.value = std::move(r.value);
        finish({}, std::move(hit));
    }

    void wait() {
        waited_ = true;
        const auto now = std::chrono::steady_clock::now();
        if (now + backoff_ > deadline_) return finish(make_error_code(errc::timeout), {});
        timer_.expires_after(backoff_);
        backoff_ = std::min(backoff_ * 2, std::max(opts_.fill.poll_max, backoff_));
        timer_.async_wait([self = this->shared_from_this()](std::error_code) {
            // The timer is never cancelled: each wait ends in one lookup.
            self->lookup();
        });
    }

    void run_fill() {
        // The fill reports once, from any thread; hop back to the client's executor so the
        // steps of this op stay sequential and a synchronous report does not recurse.
        auto once = std::make_shared<std::atomic<bool>>(false);
        FillDone done = [self = this->shared_from_this(), once](std::error_code ec,
                                                                std::string value) {
            if (once->exchange(true, std::memory_order_acq_rel)) return;
            asio::post(self->client_.get_executor(), [self, ec, v = std::move(value)]() mutable {
                self->on_filled(ec, std::move(v));
            });
        };
        if constexpr (std::is_invocable_v<Fill&, FillDone>) {
            try {
                fill_(done);
            } catch (const std::system_error& e) {
                done(e.code(), {});
            } catch (...) {
                done(make_error_code(errc::fill_failed), {});
            }
        } else {
            static_assert(std::is_same_v<std::invoke_result_t<Fill&>, asio::awaitable<std::string>>,
                          "a fill is void(folsom::FillDone) or asio::awaitable<std::string>()");
            asio::co_spawn(client_.get_executor(), fill_(),
                           [done](std::exception_ptr e, std::string value) {
                               if (!e) return done({}, std::move(value));
                               try {
                                   std::rethrow_exception(e);
                               } catch (const std::system_error& se) {
                                   done(se.code(), {});
                               } catch (...) {
                                   done(make_error_code(errc::fill_failed), {});
                               }
                           });
        }
    }

    void on_filled(std::error_code ec, std::string value) {
        if (ec) {
            // Give the win back: delete our stub (only if it is still ours), or re-invalidate
            // the existing item so that its next get hands out a win again.
            MetaDeleteOptions d;
            d.compare_cas = cas_;
            d.invalidate = had_item_;
            client_.meta_delete(key_, d,
                                [self = this->shared_from_this(), ec](std::error_code, Status) {
                                    self->finish(ec, {});
                                });
            return;
        }
        MetaSetOptions s;
        s.flags = opts_.fill.flags;
        s.compare_cas = cas_;
        Value filled{value, opts_.fill.flags, 0};
        client_.meta_set(key_, std::move(value), opts_.fill.ttl, s,
                         [self = this->shared_from_this(), v = std::move(filled)](
                             std::error_code store_ec, Status st) mutable {
                             CacheResult r;
                             r.value = std::move(v);
                             r.source = CacheSource::filled;
                             r.stored = !store_ec && st == Status::stored;
                             self->finish({}, std::move(r));
                         });
    }

    /// The end of the chain: delivers the result, or, when the caller was already served
    /// (background refresh), reports the refresh.
    void finish(std::error_code ec, CacheResult r) {
        if (handler_) return deliver(ec, std::move(r));
        if (opts_.on_refreshed) opts_.on_refreshed(ec, r.stored);
    }

    void deliver(std::error_code ec, CacheResult r) {
        Handler h(std::move(*handler_));
        handler_.reset();
        auto ex = asio::get_associated_executor(h, client_.get_executor());
        asio::dispatch(ex, [h = std::move(h), ec, r = std::move(r)]() mutable {
            std::move(h)(ec, std::move(r));
        });
    }

    Client client_;
    std::string key_;
    RevalidateOptions opts_;
    bool revalidate_;
    Fill fill_;
    std::optional<Handler> handler_;
    asio::steady_timer timer_;
    std::chrono::milliseconds backoff_;
    std::chrono::steady_clock::time_point deadline_{};
    std::uint64_t cas_ = 0;  // cas of the item whose win we hold
    bool had_item_ = false;  // the win came with a real (stale / expiring) item, not a stub
    bool waited_ = false;
};

template <class Fill, class Token>
auto start_recipe(const Client& client, std::string_view key, const RevalidateOptions& opts,
                  bool revalidate, Fill&& fill, Token&& token) {
    return asio::async_initiate<Token, void(std::error_code, CacheResult)>(
        [c = client, k = std::string(key), opts, revalidate](auto handler, auto f) mutable {
            using Op = RecipeOp<decltype(f), decltype(handler)>;
            auto op = std::make_shared<Op>(std::move(c), k, opts, revalidate, std::move(f),
                                           std::move(handler));
            op->start();
        },
        token, std::decay_t<Fill>(std::forward<Fill>(fill)));
}

}  // namespace detail

/// Stampede-protected get: returns the cached value, or on a miss lets exactly one caller run
/// `fill` and store its result (ms C<cas of the stub>, FillOptions::ttl and flags), while the
/// others wait for it (or get CacheSource::miss with wait_for_fill false). A stale item
/// (invalidated) is served to everybody but the winner, who fills and gets the fresh value.
/// Meta protocol only (else errc::unsupported). void(std::error_code, CacheResult)
template <class Fill, class Token>
auto get_or_fill(const Client& client, std::string_view key, const FillOptions& opts, Fill&& fill,
                 Token&& token) {
    RevalidateOptions r;
    r.fill = opts;
    return detail::start_recipe(client, key, r, false, std::forward<Fill>(fill),
                                std::forward<Token>(token));
}

/// Stale-while-revalidate: serves the value at once even when it is stale (after
/// invalidate()) or has less than RevalidateOptions::recache_below to live; the one caller
/// memcached hands the win refreshes it with `fill` and stores it with ms C<cas> (in the
/// background by default). A missing item is filled as get_or_fill does. Meta protocol only
/// (else errc::unsupported). void(std::error_code, CacheResult)
template <class Fill, class Token>
auto get_stale_while_revalidate(const Client& client, std::string_view key,
                                const RevalidateOptions& opts, Fill&& fill, Token&& token) {
    return detail::start_recipe(client, key, opts, true, std::forward<Fill>(fill),
                                std::forward<Token>(token));
}

/// Marks `key` stale instead of deleting it (md I T<stale_ttl>): it is still served for up to
/// `stale_ttl`, or until it if an absolute time (a ttl of 0 or less: keep its ttl), and the
/// next get hands one caller the win to refresh it.
/// void(std::error_code, Status): deleted (marked stale) or not_found; errc::invalid_argument
/// for a time that cannot be sent (expiry.hpp).
template <class Token>
auto invalidate(Client& client, std::string_view key, Expiry stale_ttl, Token&& token) {
    MetaDeleteOptions d;
    d.invalidate = true;
    if (stale_ttl.kind() == Expiry::Kind::absolute || stale_ttl.count() > 0)
        d.stale_ttl = stale_ttl;
    return client.meta_delete(key, d, std::forward<Token>(token));
}

}  // namespace folsom
