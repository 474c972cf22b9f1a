// AsyncOp: one user request in flight, joining a Collector (what the result is) to the user's
// completion handler (how it is delivered). Internal; used by client.hpp.
//
// Lifetime and "exactly once": the op counts its parts plus one reference held by the
// initiating function. Each part's on_complete drops one; the initiator drops its own after
// submitting every part. When the last reference goes, the result is delivered:
//   - from a part's completion (the I/O thread): dispatched to the handler's executor, which
//     runs it inline when that is the I/O executor;
//   - from the initiator (every part failed before anything was sent, or, on a WriteHere
//     thread, was answered inside the call): posted, so a handler is never invoked from inside
//     the call that started it -- unless the thread's WriteHere allows it (may_run_inline).
//
// Cancellation: when the handler has a connected cancellation slot (asio::bind_cancellation_slot,
// awaitable operators, parallel_group, ...), emitting it completes the request at once with
// errc::cancelled. Whatever was sent stays on the wire; its reply, when it comes, is read and
// dropped (the connection stays in step), and the memory is freed only then. `delivered_`
// decides which of the two paths delivers, so the handler still runs exactly once.
// As everywhere in Asio, the signal must not be emitted concurrently with the request's own
// completion: emit it from the client's I/O executor (as awaitable operators do).
//
// The op's memory comes from the handler's associated allocator (by default the request memory,
// request_memory.hpp, recycled per thread and across threads), so requests do not reach malloc
// for it once its caches are warm; it is freed before the handler runs, so the next request
// can reuse it.
#pragma once

#include "folsom/detail/client_core.hpp"
#include "folsom/detail/observe.hpp"
#include "folsom/detail/operation.hpp"
#include "folsom/detail/request_memory.hpp"
#include "folsom/detail/write_here.hpp"
#include "folsom/error.hpp"
#include "folsom/export.hpp"
#include "folsom/tracing.hpp"

#include <asio/associated_allocator.hpp>
#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/cancellation_type.hpp>
#include <asio/dispatch.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>

#include <atomic>
#include <exception>
#include <memory>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace folsom::detail {

/// What an operation's span says about it when it starts (see tracing.hpp). Cheap to build:
/// names are looked up only when a tracer is set. `routed`: the operation goes to the server
/// that owns `key`; `multi`: a multi-key retrieval (named "get_multi", ...).
struct FOLSOM_EXPORT TraceInfo {
    OpCode code = OpCode::get;
    std::string_view key;
    std::size_t key_count = 0;
    bool routed = false;
    bool multi = false;
};

/// The span name of an operation ("get", "set", "delete", "get_multi", ...).
FOLSOM_EXPORT std::string_view span_name(const TraceInfo& info) noexcept;

/// Opens the span of an operation when the core has a tracer (the only cost otherwise is the
/// null check).
inline std::unique_ptr<Span> open_span(ClientCore& core, const TraceInfo& info) {
    Tracer* t = core.tracer();
    if (!t) return nullptr;
    SpanStart s;
    s.operation = span_name(info);
    s.key = info.key;
    s.key_count = info.key_count;
    if (info.routed && core.server_count() > 0)
        s.server = core.server_name(core.server_for(info.key));
    return t->start_span(s);
}

template <class Collector, class Handler>
class AsyncOp final : public Operation {
    using base_allocator =
        typename asio::associated_allocator<Handler, RequestAllocator<void>>::type;
    using allocator =
        typename std::allocator_traits<base_allocator>::template rebind_alloc<AsyncOp>;
    using slot_type = typename asio::associated_cancellation_slot<Handler>::type;
    using result_type = decltype(std::declval<Collector&>().result());

  public:
    /// Creates the op holding `parts` part references plus the initiator's. `acquired` says
    /// whether an outstanding-request slot was taken (and must be released on completion).
    template <class H, class... Args>
    static AsyncOp* create(H&& handler, std::shared_ptr<ClientCore> core, bool acquired,
                           std::uint32_t parts, Args&&... collector_args) {
        allocator alloc(asio::get_associated_allocator(handler, RequestAllocator<void>()));
        AsyncOp* p = std::allocator_traits<allocator>::allocate(alloc, 1);
        try {
            ::new (static_cast<void*>(p))
                AsyncOp(std::forward<H>(handler), std::move(core), acquired, parts, alloc,
                        std::forward<Args>(collector_args)...);
        } catch (...) {
            std::allocator_traits<allocator>::deallocate(alloc, p, 1);
            throw;
        }
        p->install_cancellation();
        return p;
    }

    Collector& collector() noexcept { return collector_; }

    /// Opens this operation's span (when the core has a tracer); it ends when the result is
    /// delivered. Call before initiated().
    void trace(const TraceInfo& info) {
        if (core_->tracer()) span_ = open_span(*core_, info);
    }

    /// Adds part references (for collectors that plan their parts after creation).
    void add_parts(std::uint32_t n) noexcept { refs_.fetch_add(n, std::memory_order_relaxed); }

    /// The initiator is done submitting; drops its reference.
    void initiated() { drop(true); }

    void on_value(std::uint32_t part, std::uint32_t position, const ValueView& v) override {
        collector_.on_value(part, position, v);
    }
    void on_stat(std::uint32_t part, std::string_view name, std::string_view value) override {
        collector_.on_stat(part, name, value);
    }
    void on_complete(std::uint32_t part, const Completion& c) override {
        collector_.on_complete(part, c);
        drop(false);
    }
    void on_key_error(std::uint32_t part, std::uint32_t position, std::error_code ec) override {
        if constexpr (requires { collector_.on_key_error(part, position, ec); })
            collector_.on_key_error(part, position, ec);
    }
    void pin() noexcept override { refs_.fetch_add(1, std::memory_order_relaxed); }
    void unpin() override { drop(false); }

  private:
    template <class H, class... Args>
    AsyncOp(H&& handler, std::shared_ptr<ClientCore> core, bool acquired, std::uint32_t parts,
            const allocator& alloc, Args&&... collector_args)
        : collector_(std::forward<Args>(collector_args)...),
          handler_(std::forward<H>(handler)),
          core_(std::move(core)),
          alloc_(alloc),
          acquired_(acquired),
          refs_(parts + 1) {}

    struct CancelHandler {
        AsyncOp* op;
        void operator()(asio::cancellation_type type) const {
            if ((type & (asio::cancellation_type::terminal | asio::cancellation_type::partial |
                         asio::cancellation_type::total)) == asio::cancellation_type::none)
                return;
            // Keep the op alive until the posted cancel has run, whatever the wire does.
            op->pin();
            asio::post(op->core_->executor(), [o = op] { o->cancel(); });
        }
    };

    void install_cancellation() {
        slot_type slot = asio::get_associated_cancellation_slot(handler_);
        if (!slot.is_connected()) return;
        cancellable_ = true;
        slot.template emplace<CancelHandler>(CancelHandler{this});
    }

    void clear_cancellation() {
        slot_type slot = asio::get_associated_cancellation_slot(handler_);
        if (slot.is_connected()) slot.clear();
    }

    void cancel() {
        if (!delivered_.exchange(true, std::memory_order_acq_rel)) {
            result_type r{};
            std::get<0>(r) = make_error_code(errc::cancelled);
            clear_cancellation();
            end_span(r);
            Handler handler(std::move(handler_));
            deliver(std::move(handler), std::move(r), *core_, false);
        }
        drop(false);
    }

    void drop(bool from_initiator) {
        if (drop_reference(refs_)) finish(from_initiator);
    }

    void finish(bool from_initiator) {
        // The last reference: release the outstanding slot, then either deliver (normal path)
        // or just free (a cancel already delivered). The op is freed before the handler runs,
        // so that a request the handler makes can reuse its memory.
        if (acquired_) core_->release();
        // Without a cancellation slot nothing else can deliver, and the flag is not needed.
        if (cancellable_ && delivered_.exchange(true, std::memory_order_acq_rel)) {
            destroy();
            return;
        }
        result_type result = collector_.result();
        clear_cancellation();
        end_span(result);
        Handler handler(std::move(handler_));
        std::shared_ptr<ClientCore> core = std::move(core_);
        destroy();
        deliver(std::move(handler), std::move(result), *core, from_initiator);
    }

    void destroy() {
        allocator alloc(alloc_);
        this->~AsyncOp();
        std::allocator_traits<allocator>::deallocate(alloc, this, 1);
    }

    void end_span(const result_type& result) {
        if (span_) {
            span_->end(span_end_of(result));
            span_.reset();
        }
    }

    /// A handler with no executor of its own (a plain callback) runs on the core's completion
    /// executor. Detected with a marker type as the fallback: associated_executor yields the
    /// fallback's type exactly when the handler names no executor.
    struct NoExecutor {};
    static constexpr bool has_own_executor =
        !std::is_same_v<typename asio::associated_executor<Handler, NoExecutor>::type, NoExecutor>;

    /// Hands the result to the handler (exactly once: the caller won `delivered_`). Static:
    /// the op may already be freed.
    static void deliver(Handler&& handler, result_type&& result, ClientCore& core, bool post) {
        if constexpr (!has_own_executor) {
            // The usual case: a callback, completed on the I/O thread of a client without a
            // reply executor. What asio::dispatch would do (run it now), decided without
            // building an any_io_executor for the handler.
            // The rule of completes_inline_here (write_here.hpp), spelled out: on this, the
            // hot path, the compiler inlines the caller better so. A WriteHere thread is the
            // io_context's only runner, inside run_one() or not; from inside the initiating
            // call only when it allows that (may_run_inline).
            if (asio::io_context* io = core.inline_context(); io != nullptr) {
                const bool inline_ok = !post || this_thread_runs_handlers_inline();
                if (inline_ok &&
                    (io->get_executor().running_in_this_thread() || this_thread_writes_here())) {
                    invoke_inline(io->get_executor(), std::move(handler), std::move(result));
                    return;
                }
            }
        }
        auto ex = asio::get_associated_executor(handler, core.completion_executor());
        if constexpr (std::is_same_v<decltype(ex), asio::any_io_executor>) {
            if (!post && runs_inline_here(ex)) {
                // What asio::dispatch would do, without wrapping the handler in a type-erased
                // function object first (built, and called through a pointer, per completion).
                invoke_inline(ex, std::move(handler), std::move(result));
                return;
            }
        }
        auto run = [h = std::move(handler), r = std::move(result)]() mutable {
            std::apply(std::move(h), std::move(r));
        };
        if (post)
            asio::post(ex, std::move(run));
        else
            asio::dispatch(ex, std::move(run));
    }

    /// True when `ex` is a plain io_context executor whose io_context runs on this thread:
    /// dispatching to it runs the function at once.
    static bool runs_inline_here(const asio::any_io_executor& ex) noexcept {
        using E = asio::io_context::executor_type;
        // (This Asio's target<T>() does not check the type itself.)
        return ex.target_type() == typeid(E) && ex.template target<E>()->running_in_this_thread();
    }

    /// Runs the handler now. As with asio::dispatch, an exception it throws leaves through
    /// io_context::run() (posted to `ex`), not through the connection that delivered the result.
    template <class Executor>
    static void invoke_inline(const Executor& ex, Handler&& handler, result_type&& result) {
        try {
            std::apply(std::move(handler), std::move(result));
        } catch (...) {
            asio::post(ex, [e = std::current_exception()] { std::rethrow_exception(e); });
        }
    }

    Collector collector_;
    Handler handler_;  // moved out by deliver(); valid only while !delivered_
    std::shared_ptr<ClientCore> core_;
    std::unique_ptr<Span> span_;  // null unless a tracer is set
    allocator alloc_;
    bool acquired_;
    bool cancellable_ = false;  // the handler has a connected cancellation slot
    std::atomic<bool> delivered_{false};
    std::atomic<std::uint32_t> refs_;
};

}  // namespace folsom::detail
