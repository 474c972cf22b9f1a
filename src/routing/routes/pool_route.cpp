#include "routing/routes/pool_route.hpp"

#include "folsom/detail/request_memory.hpp"

#include "cluster/hash/murmur3.hpp"
#include "routing/route_tree.hpp"

#include <atomic>

namespace folsom::routing {
namespace {

/// One shadow copy of a request: nobody waits for it; it only counts how it ended.
class ShadowOp final : public detail::Operation {
  public:
    static void send(Route& target, RouteCounters& counters, const RouteTree& tree,
                     detail::Operation& caller, const detail::Request& r) {
        allocator alloc;
        ShadowOp* s = alloc.allocate(1);
        ::new (static_cast<void*>(s)) ShadowOp(counters, tree, caller);
        counters.shadow_requests.fetch_add(1, std::memory_order_relaxed);
        target.send(*s, 0, r);
        s->drop();  // the sender's reference
    }

    void on_value(std::uint32_t, std::uint32_t, const ValueView&) override {}
    void on_stat(std::uint32_t, std::string_view, std::string_view) override {}
    void on_complete(std::uint32_t, const detail::Completion& c) override {
        if (c.ec) counters_.shadow_errors.fetch_add(1, std::memory_order_relaxed);
        drop();
    }
    // The shadow's write may still read the caller's value: keep the caller too (it is alive
    // here, since the pin comes while the shadow is sent, inside the caller's own send).
    void pin() noexcept override {
        refs_.fetch_add(1, std::memory_order_relaxed);
        caller_.pin();
    }
    void unpin() override {
        caller_.unpin();
        drop();
    }

  private:
    using allocator = detail::RequestAllocator<ShadowOp>;

    ShadowOp(RouteCounters& counters, const RouteTree& tree, detail::Operation& caller)
        : counters_(counters), tree_(tree.shared_from_this()), caller_(caller) {}

    void drop() {
        if (!detail::drop_reference(refs_)) return;
        allocator alloc;
        this->~ShadowOp();
        alloc.deallocate(this, 1);
    }

    RouteCounters& counters_;
    std::shared_ptr<const RouteTree> tree_;  // the shadow may outlive the caller and client
    detail::Operation& caller_;
    std::atomic<int> refs_{2};  // the sender's and the send's
};

}  // namespace

void PoolRoute::send(detail::Operation& op, std::uint32_t part, const detail::Request& r) {
    count_request();
    // Shadows first: the caller may be answered (and gone) as soon as its own send returns.
    if (!shadows_.empty()) shadow(op, r);
    pool_.submit(pool_.server_for(r.key), op, part, r);
}

void PoolRoute::shadow(detail::Operation& op, const detail::Request& r) {
    const std::uint64_t h = cluster::murmur3_32(r.key);
    for (const Shadow& s : shadows_)
        if (h >= s.begin && h < s.end) ShadowOp::send(*s.target, counters(), tree_, op, r);
}

}  // namespace folsom::routing
