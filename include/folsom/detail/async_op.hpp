// AsyncOp: one user request in flight, joining a Collector (what the result is) to the user's
// completion handler (how it is delivered). Internal; used by client.hpp.
//
// Lifetime and "exactly once": the op counts its parts plus one reference held by the
// initiating function. Each part's on_complete drops one; the initiator drops its own after
// submitting every part. Whoever drops the last reference delivers the result, exactly once:
//   - from a part's completion (the I/O thread): dispatched to the handler's executor, which
//     runs it inline when that is the I/O executor;
//   - from the initiator (every part failed before anything was sent): posted, so a handler is
//     never invoked from inside the call that started it.
// The op's memory comes from the handler's associated allocator (Asio's recycling allocator by
// default), so steady-state requests do not reach malloc for it; it is freed before the handler
// runs, so the next request can reuse it.
#pragma once

#include "folsom/detail/client_core.hpp"
#include "folsom/detail/operation.hpp"

#include <asio/associated_allocator.hpp>
#include <asio/associated_executor.hpp>
#include <asio/dispatch.hpp>
#include <asio/post.hpp>
#include <asio/recycling_allocator.hpp>

#include <atomic>
#include <memory>
#include <tuple>
#include <utility>

namespace folsom::detail {

template <class Collector, class Handler>
class AsyncOp final : public Operation {
    using base_allocator =
        typename asio::associated_allocator<Handler, asio::recycling_allocator<void>>::type;
    using allocator =
        typename std::allocator_traits<base_allocator>::template rebind_alloc<AsyncOp>;

  public:
    /// Creates the op holding `parts` part references plus the initiator's. `acquired` says
    /// whether an outstanding-request slot was taken (and must be released on completion).
    template <class H, class... Args>
    static AsyncOp* create(H&& handler, std::shared_ptr<ClientCore> core, bool acquired,
                           std::uint32_t parts, Args&&... collector_args) {
        allocator alloc(asio::get_associated_allocator(handler, asio::recycling_allocator<void>()));
        AsyncOp* p = std::allocator_traits<allocator>::allocate(alloc, 1);
        try {
            return ::new (static_cast<void*>(p))
                AsyncOp(std::forward<H>(handler), std::move(core), acquired, parts,
                        std::forward<Args>(collector_args)...);
        } catch (...) {
            std::allocator_traits<allocator>::deallocate(alloc, p, 1);
            throw;
        }
    }

    Collector& collector() noexcept { return collector_; }

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
    void pin() noexcept override { refs_.fetch_add(1, std::memory_order_relaxed); }
    void unpin() override { drop(false); }

  private:
    template <class H, class... Args>
    AsyncOp(H&& handler, std::shared_ptr<ClientCore> core, bool acquired, std::uint32_t parts,
            Args&&... collector_args)
        : collector_(std::forward<Args>(collector_args)...),
          handler_(std::forward<H>(handler)),
          core_(std::move(core)),
          acquired_(acquired),
          refs_(parts + 1) {}

    void drop(bool from_initiator) {
        if (refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
        finish(from_initiator);
    }

    void finish(bool post) {
        // Move everything out, free the op, then deliver: the handler may start a new request
        // that reuses this memory and this outstanding slot.
        auto result = collector_.result();
        Handler handler(std::move(handler_));
        std::shared_ptr<ClientCore> core = std::move(core_);
        if (acquired_) core->release();
        allocator alloc(asio::get_associated_allocator(handler, asio::recycling_allocator<void>()));
        this->~AsyncOp();
        std::allocator_traits<allocator>::deallocate(alloc, this, 1);

        auto ex = asio::get_associated_executor(handler, core->executor());
        auto deliver = [h = std::move(handler), r = std::move(result)]() mutable {
            std::apply(std::move(h), std::move(r));
        };
        if (post)
            asio::post(ex, std::move(deliver));
        else
            asio::dispatch(ex, std::move(deliver));
    }

    Collector collector_;
    Handler handler_;
    std::shared_ptr<ClientCore> core_;
    bool acquired_;
    std::atomic<std::uint32_t> refs_;
};

}  // namespace folsom::detail
