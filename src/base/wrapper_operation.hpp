// WrapperOperation: the reference counting and pinning of an Operation that stands between a
// core and the caller's operation (the wrapped one) while a request is on its way: the key
// prefix and retry shims (cluster/), and the route tree's fan-out, key split and shadow
// operations (routing/). Each is created in request memory for one request, and freed by
// whoever drops its last reference.
//
// References: the creator says how many it starts with (usually one per send still to
// complete, plus one the sender holds until it has sent everything); each pin() adds one and
// its unpin() drops it. A write may still read the wrapped operation's value while it is
// pinned, so a pin of the wrapper pins the wrapped operation too, and its unpin unpins it.
//
// Derived (CRTP) says what happens to the last reference: by default the wrapper is destroyed
// and freed; a Derived that must still answer the wrapped operation defines
// on_last_reference() and calls release() in it, before it answers (the answer may free the
// wrapped operation, and with it whatever keeps this one's state alive).
#pragma once

#include "folsom/detail/operation.hpp"
#include "folsom/detail/request_memory.hpp"

#include <atomic>
#include <new>
#include <utility>

namespace folsom::detail {

template <class Derived>
class WrapperOperation : public Operation {
  public:
    void pin() noexcept override {
        refs_.fetch_add(1, std::memory_order_relaxed);
        wrapped_.pin();
    }
    void unpin() override {
        wrapped_.unpin();
        drop();
    }

  protected:
    /// A new Derived in request memory. Derived's constructor may be private: Derived then
    /// befriends WrapperOperation<Derived>.
    template <class... Args>
    static Derived* make(Args&&... args) {
        RequestAllocator<Derived> alloc;
        Derived* p = alloc.allocate(1);
        return ::new (static_cast<void*>(p)) Derived(std::forward<Args>(args)...);
    }

    WrapperOperation(Operation& wrapped, int references) noexcept
        : wrapped_(wrapped), refs_(references) {}
    ~WrapperOperation() = default;

    /// One more reference, for a send about to start (its on_complete drops it).
    void add_reference() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }

    /// Drops one reference; the last one goes to Derived::on_last_reference().
    void drop() {
        if (drop_reference(refs_)) static_cast<Derived*>(this)->on_last_reference();
    }

    /// What the last reference does unless Derived says otherwise: release().
    void on_last_reference() { release(); }

    /// Destroys and frees this operation. Nothing of it may be touched afterwards.
    void release() noexcept {
        Derived* self = static_cast<Derived*>(this);
        self->~Derived();
        RequestAllocator<Derived>{}.deallocate(self, 1);
    }

    /// The caller's operation: the one this answers (a shadow answers nobody), pinned with it.
    Operation& wrapped_;

  private:
    std::atomic<int> refs_;
};

}  // namespace folsom::detail
