#include "routing/routes/pool_route.hpp"

#include "folsom/detail/request_memory.hpp"

#include "base/wrapper_operation.hpp"
#include "cluster/hash/murmur3.hpp"
#include "routing/route_tree.hpp"

#include <atomic>

namespace folsom::routing {
namespace {

/// One shadow copy of a request: nobody waits for it; it only counts how it ended.
class ShadowOp final : public detail::WrapperOperation<ShadowOp> {
  public:
    static void send(Route& target, RouteCounters& counters, const RouteTree& tree,
                     detail::Operation& caller, const detail::Request& r) {
        ShadowOp* s = make(counters, tree, caller);
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

  private:
    // The shadow's write may still read the caller's value: WrapperOperation keeps the caller
    // pinned too (it is alive then, since the pin comes while the shadow is sent, inside the
    // caller's own send).
    friend class detail::WrapperOperation<ShadowOp>;

    // Two references: the sender's and the send's.
    ShadowOp(RouteCounters& counters, const RouteTree& tree, detail::Operation& caller)
        : WrapperOperation(caller, 2), counters_(counters), tree_(tree.shared_from_this()) {}

    RouteCounters& counters_;
    std::shared_ptr<const RouteTree> tree_;  // the shadow may outlive the caller and client
};

}  // namespace

void PoolRoute::send(detail::Operation& op, std::uint32_t part, const detail::Request& r) {
    count_request();
    // Shadows first: the caller may be answered (and gone) as soon as its own send returns.
    if (!shadows_.empty()) shadow(op, r);
    pool_.send(op, part, r);
}

void PoolRoute::shadow(detail::Operation& op, const detail::Request& r) {
    const std::uint64_t h = cluster::murmur3_32(r.key);
    for (const Shadow& s : shadows_)
        if (h >= s.begin && h < s.end) ShadowOp::send(*s.target, counters(), tree_, op, r);
}

}  // namespace folsom::routing
