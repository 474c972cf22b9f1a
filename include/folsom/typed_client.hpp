/// @file
/// folsom::TypedClient<V>: the Client for values of type V, through a transcoder (Folsom's
/// MemcacheClient<V> with its Transcoder).
///
///     auto bytes = folsom::Client::connect(io, options);
///     folsom::TypedClient<std::string> text(bytes);                  // Transcoder<std::string>
///     text.set("greeting", std::string("hello"), std::chrono::seconds(60), token);
///     std::optional<std::string> s = co_await text.get("greeting", asio::use_awaitable);
///
///     // compressed above 1 KiB with zstd, read back whatever the writer chose:
///     folsom::TypedClient<Point, folsom::Compressed<folsom::Transcoder<Point>>> points(bytes);
///
/// Every operation takes an Asio completion token, exactly as Client's do (a callback,
/// asio::use_future, asio::use_awaitable, asio::deferred, ...); the completion signature is
/// given for each. Stores encode the value in the calling thread, before the call returns;
/// retrievals decode it just before the handler runs, on the handler's executor. Operations
/// that do not touch values (delete, touch) are forwarded; everything else (counters,
/// append/prepend, stats, flush_all, wait_connected, shutdown) is on client().
///
/// Errors: as Client's, plus errc::decode_failed (or the transcoder's own error) when a stored
/// value cannot be decoded: a single-key read then completes with that error and no value; a
/// multi-get reports it for that key in TypedMultiGetResult::errors, keeping the others.
///
/// Thread-safety and lifetime: a TypedClient is a cheap handle (the byte Client plus a shared,
/// immutable transcoder) and may be used from any thread; copies share connections. Keys follow
/// Client's ownership rules: copied before the call returns, except the key span of the
/// multi-gets, which must stay valid until the initiating function returns (with asio::deferred:
/// until the operation is started). Results own their values.
#pragma once

#include "folsom/client.hpp"
#include "folsom/compressed.hpp"
#include "folsom/transcoder.hpp"
#include "folsom/typed_results.hpp"

#include <asio/associator.hpp>
#include <asio/async_result.hpp>

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>

namespace folsom {

namespace detail {

/// A completion handler that turns the byte client's completion arguments into the typed ones
/// (`convert` returns them as a tuple) and calls the user's handler with them. It takes on the
/// user handler's associated executor, allocator and cancellation slot (asio::associator
/// below), so the byte Client delivers, allocates and cancels exactly as it would for the
/// user's handler itself.
template <class Handler, class Convert>
struct ConvertingHandler {
    Handler handler;  ///< the user's completion handler
    Convert convert;  ///< byte result -> typed result tuple

    /// Converts, then completes.
    template <class... Args>
    void operator()(Args&&... args) {
        std::apply(std::move(handler), convert(std::forward<Args>(args)...));
    }
};

}  // namespace detail

/// The memcached client for values of type V, encoded by the transcoder Tc (transcoder.hpp;
/// wrap it in Compressed<> to compress). See typed_client.hpp for the contracts.
template <class V, class Tc = Transcoder<V>>
requires TranscoderFor<Tc, V> && std::default_initializable<V> && std::movable<V>
class TypedClient {
  public:
    using value_type = V;                         ///< the type of the values
    using transcoder_type = Tc;                   ///< how values become bytes and back
    using executor_type = Client::executor_type;  ///< where completions run by default

    /// Wraps `client` (sharing its connections) with `transcoder`.
    explicit TypedClient(Client client, Tc transcoder = Tc{})
        : client_(std::move(client)), tc_(std::make_shared<const Tc>(std::move(transcoder))) {}

    /// Connects a byte Client (Client::connect) and wraps it.
    static TypedClient connect(asio::any_io_executor ex, const Options& options,
                               Tc transcoder = Tc{}) {
        return TypedClient(Client::connect(std::move(ex), options), std::move(transcoder));
    }
    /// As connect(io.get_executor(), options, transcoder).
    static TypedClient connect(asio::io_context& io, const Options& options, Tc transcoder = Tc{}) {
        return connect(io.get_executor(), options, std::move(transcoder));
    }

    /// The byte client underneath (same connections): counters, stats, lifecycle, raw bytes.
    Client& client() noexcept { return client_; }
    /// The byte client underneath.
    const Client& client() const noexcept { return client_; }
    /// The transcoder values go through.
    const Tc& transcoder() const noexcept { return *tc_; }
    /// The I/O executor, where completion handlers run unless bound to another.
    executor_type get_executor() const noexcept { return client_.get_executor(); }

    // ---- retrieval ------------------------------------------------------------------------

    /// void(std::error_code, std::optional<V>): the decoded value; empty on a miss.
    template <class Token>
    auto get(std::string_view key, Token&& token) {
        return retrieve<V>([key](Client& c, auto h) { c.get(key, std::move(h)); },
                           std::forward<Token>(token));
    }
    /// void(std::error_code, std::optional<WithCas<V>>): the decoded value and its cas.
    template <class Token>
    auto gets(std::string_view key, Token&& token) {
        return retrieve<WithCas<V>>([key](Client& c, auto h) { c.gets(key, std::move(h)); },
                                    std::forward<Token>(token));
    }
    /// Get and touch: the value, and its ttl set to `ttl`. void(std::error_code, optional<V>)
    template <class Token>
    auto gat(std::string_view key, Expiry ttl, Token&& token) {
        return retrieve<V>([key, ttl](Client& c, auto h) { c.gat(key, ttl, std::move(h)); },
                           std::forward<Token>(token));
    }
    /// As gat, with the cas. void(std::error_code, std::optional<WithCas<V>>)
    template <class Token>
    auto gats(std::string_view key, Expiry ttl, Token&& token) {
        return retrieve<WithCas<V>>(
            [key, ttl](Client& c, auto h) { c.gats(key, ttl, std::move(h)); },
            std::forward<Token>(token));
    }

    /// Multi-get (Client::get_multi), decoded. void(std::error_code, TypedMultiGetResult<V>)
    template <class Token>
    auto get_multi(std::span<const std::string_view> keys, Token&& token) {
        return retrieve_multi<V>([keys](Client& c, auto h) { c.get_multi(keys, std::move(h)); },
                                 std::forward<Token>(token));
    }
    /// Multi-gets, with each value's cas.
    /// void(std::error_code, TypedMultiGetResult<WithCas<V>>)
    template <class Token>
    auto gets_multi(std::span<const std::string_view> keys, Token&& token) {
        return retrieve_multi<WithCas<V>>(
            [keys](Client& c, auto h) { c.gets_multi(keys, std::move(h)); },
            std::forward<Token>(token));
    }
    /// Multi get-and-touch. void(std::error_code, TypedMultiGetResult<V>)
    template <class Token>
    auto gat_multi(std::span<const std::string_view> keys, Expiry ttl, Token&& token) {
        return retrieve_multi<V>(
            [keys, ttl](Client& c, auto h) { c.gat_multi(keys, ttl, std::move(h)); },
            std::forward<Token>(token));
    }

    // ---- storage ----------------------------------------------------------------------------

    /// Stores `value` (encoded, with the transcoder's flags) unconditionally.
    /// void(std::error_code, Status)
    template <class Token>
    auto set(std::string_view key, const V& value, Expiry ttl, Token&& token) {
        return store(StoreMode::set, key, value, ttl, 0, std::forward<Token>(token));
    }
    /// Stores only if the key is absent (else not_stored). void(std::error_code, Status)
    template <class Token>
    auto add(std::string_view key, const V& value, Expiry ttl, Token&& token) {
        return store(StoreMode::add, key, value, ttl, 0, std::forward<Token>(token));
    }
    /// Stores only if the key is present (else not_stored). void(std::error_code, Status)
    template <class Token>
    auto replace(std::string_view key, const V& value, Expiry ttl, Token&& token) {
        return store(StoreMode::replace, key, value, ttl, 0, std::forward<Token>(token));
    }
    /// Check-and-set with the cas from gets(): stored, exists (changed since) or not_found.
    /// void(std::error_code, Status)
    template <class Token>
    auto cas(std::string_view key, const V& value, std::uint64_t cas, Expiry ttl, Token&& token) {
        return store(StoreMode::cas, key, value, ttl, cas, std::forward<Token>(token));
    }

    // ---- other key operations ---------------------------------------------------------------

    /// Client::del. void(std::error_code, Status): deleted or not_found.
    template <class Token>
    auto del(std::string_view key, Token&& token) {
        return client_.del(key, std::forward<Token>(token));
    }
    /// Client::touch. void(std::error_code, Status): touched or not_found.
    template <class Token>
    auto touch(std::string_view key, Expiry ttl, Token&& token) {
        return client_.touch(key, ttl, std::forward<Token>(token));
    }

  private:
    template <class Token>
    auto store(StoreMode mode, std::string_view key, const V& value, Expiry ttl, std::uint64_t cas,
               Token&& token) {
        // Encoded now, on the caller's thread; the moved-in bytes are then never copied again
        // (large ones are written to the socket straight from this string).
        Encoded e = tc_->encode(value);
        return client_.store(mode, key, Bytes(std::move(e.data)), ttl, StoreOptions{e.flags, cas},
                             std::forward<Token>(token));
    }

    /// Decodes one stored value into R (V, or WithCas<V>); a decode error becomes the result's
    /// error, with no value.
    template <class R>
    static std::error_code decode_into(const Tc& tc, Value&& v, R& out) {
        Encoded stored{std::move(v.data), v.flags};
        return decode_encoded(tc, std::move(stored), v.cas, out);
    }
    /// As above from the stored bytes: a transcoder that does not take them leaves `stored`
    /// (and its capacity) to the caller.
    template <class R>
    static std::error_code decode_encoded(const Tc& tc, Encoded&& stored, std::uint64_t cas,
                                          R& out) {
        if constexpr (std::is_same_v<R, WithCas<V>>) {
            out.cas = cas;
            return tc.decode(std::move(stored), out.value);
        } else {
            return tc.decode(std::move(stored), out);
        }
    }

    template <class R, class Start, class Token>
    auto retrieve(Start start, Token&& token) {
        return asio::async_initiate<Token, void(std::error_code, std::optional<R>)>(
            [client = client_, tc = tc_, start](auto handler) mutable {
                auto convert = [tc](std::error_code ec, std::optional<Value> v) {
                    if (ec || !v) return std::tuple(ec, std::optional<R>());
                    std::optional<R> out(std::in_place);
                    if (auto dec = decode_into(*tc, std::move(*v), *out))
                        return std::tuple(dec, std::optional<R>());
                    return std::tuple(ec, std::move(out));
                };
                start(client, detail::ConvertingHandler<decltype(handler), decltype(convert)>{
                                  std::move(handler), std::move(convert)});
            },
            token);
    }

    template <class R, class Start, class Token>
    auto retrieve_multi(Start start, Token&& token) {
        return asio::async_initiate<Token, void(std::error_code, TypedMultiGetResult<R>)>(
            [client = client_, tc = tc_, start](auto handler) mutable {
                auto convert = [tc](std::error_code ec, MultiGetResult raw) {
                    TypedMultiGetResult<R> typed;
                    typed.errors = std::move(raw.errors);
                    typed.values.resize(raw.values.size());
                    // The raw values view the result's one buffer: each is decoded from one
                    // reused copy, so a transcoder that does not keep the bytes (a number, a
                    // struct) costs no allocation per value (a std::string value takes them).
                    Encoded scratch;
                    for (std::size_t i = 0; i < raw.values.size(); ++i) {
                        if (!raw.values[i]) continue;
                        auto& slot = typed.values[i].emplace();
                        scratch.data.assign(raw.values[i]->data);
                        scratch.flags = raw.values[i]->flags;
                        if (auto dec =
                                decode_encoded(*tc, std::move(scratch), raw.values[i]->cas, slot)) {
                            typed.values[i].reset();
                            if (typed.errors.empty())
                                typed.errors.assign(raw.values.size(), std::error_code{});
                            typed.errors[i] = dec;
                        }
                    }
                    return std::tuple(ec, std::move(typed));
                };
                start(client, detail::ConvertingHandler<decltype(handler), decltype(convert)>{
                                  std::move(handler), std::move(convert)});
            },
            token);
    }

    Client client_;
    std::shared_ptr<const Tc> tc_;
};

}  // namespace folsom

/// @cond
// The converting handler is the user's handler for every associated characteristic.
template <template <typename, typename> class Associator, class Handler, class Convert,
          class DefaultCandidate>
struct asio::associator<Associator, folsom::detail::ConvertingHandler<Handler, Convert>,
                        DefaultCandidate> {
    using type = typename Associator<Handler, DefaultCandidate>::type;
    static type get(const folsom::detail::ConvertingHandler<Handler, Convert>& h,
                    const DefaultCandidate& c = DefaultCandidate()) noexcept {
        return Associator<Handler, DefaultCandidate>::get(h.handler, c);
    }
};
/// @endcond
