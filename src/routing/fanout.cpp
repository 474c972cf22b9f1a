#include "routing/fanout.hpp"

#include "folsom/detail/request_memory.hpp"
#include "folsom/error.hpp"
#include "folsom/protocol/limits.hpp"

#include "base/wrapper_operation.hpp"
#include "routing/route_tree.hpp"

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

namespace folsom::routing {
namespace {

using detail::Completion;
using detail::OpCode;
using detail::Operation;
using detail::Request;

/// The part number of the warm-up fill: its reply is nobody's.
constexpr std::uint32_t fill_part = 0xfffffff0u;

bool is_success(Status s) noexcept {
    return s == Status::stored || s == Status::deleted || s == Status::touched || s == Status::ok ||
           s == Status::sent;
}

/// A meta reply kept past its on_complete call: its views point into `bytes`.
struct MetaCopy {
    explicit MetaCopy(const protocol::meta::Reply& r) : reply(r), bytes(r.data) {
        reply.data = bytes;
        reply.key = {};
        reply.opaque = {};
    }
    protocol::meta::Reply reply;
    std::string bytes;
};

/// What one child answered.
struct Child {
    bool done = false;
    bool hit = false;        ///< a value (or a meta value reply) came back
    bool has_value = false;  ///< data/flags/cas hold a copy of it
    std::error_code ec;
    Status status = Status::ok;
    std::uint64_t number = 0;
    std::string data;
    std::uint32_t flags = 0;
    std::uint64_t cas = 0;
    std::unique_ptr<MetaCopy> meta;
};

/// What to do once the lock is released.
struct Action {
    int answer = -1;     ///< the child whose reply answers the caller
    int send_next = -1;  ///< the child to try next
    bool fill = false;   ///< warm-up: write warm's value into the cold child
};

class FanoutOp final : public detail::WrapperOperation<FanoutOp> {
  public:
    static void start(const FanoutPlan& plan, Operation& op, std::uint32_t part, const Request& r) {
        if (r.key.empty() || r.key.size() > protocol::max_key_length) {
            op.on_complete(part, detail::failure(make_error_code(errc::invalid_key)));
            return;
        }
        FanoutOp* f = make(plan, op, part, r);
        f->begin();
        f->drop();  // start()'s own reference
    }

    void on_value(std::uint32_t child, std::uint32_t position, const ValueView& v) override {
        if (child == fill_part) return;
        bool forward = false;
        {
            std::lock_guard<std::mutex> lock(mu_);
            Child& ch = children_[child];
            ch.hit = true;
            if (answered_) return;
            if (chosen_ < 0 && commits_on_value(child)) chosen_ = static_cast<int>(child);
            if (chosen_ == static_cast<int>(child) && !forwarded_) forward = forwarded_ = true;
            if (keeps_value(child)) {
                ch.data.assign(v.data);
                ch.flags = v.flags;
                ch.cas = v.cas;
                ch.has_value = true;
            }
        }
        // Straight from the connection's buffer: the caller's part is single-key.
        if (forward) wrapped_.on_value(part_, position, v);
    }

    void on_stat(std::uint32_t, std::string_view, std::string_view) override {}

    void on_complete(std::uint32_t child, const Completion& c) override {
        if (child == fill_part) {
            drop();
            return;
        }
        Action a;
        {
            std::lock_guard<std::mutex> lock(mu_);
            Child& ch = children_[child];
            ch.done = true;
            ch.ec = c.ec;
            ch.status = c.status;
            ch.number = c.number;
            ++done_;
            if (!c.ec && c.meta && c.meta->kind == protocol::meta::ReplyKind::value) {
                ch.hit = true;
                if (keeps_value(child) && !ch.has_value) {
                    ch.data.assign(c.meta->data);
                    ch.flags = c.meta->client_flags.value_or(0);
                    ch.cas = c.meta->cas.value_or(0);
                    ch.has_value = true;
                }
            }
            if (!c.ec && c.meta && buffers_value(child))
                ch.meta = std::make_unique<MetaCopy>(*c.meta);
            if (!answered_) {
                a = decide(child);
                if (a.answer >= 0) answered_ = true;
            }
        }
        if (a.answer >= 0) answer(static_cast<std::uint32_t>(a.answer), child, c);
        if (a.send_next >= 0) send(static_cast<std::uint32_t>(a.send_next));
        if (a.fill) send_fill();
        drop();  // this child's send
    }

  private:
    // A child's write still reads the value, which is the caller's: WrapperOperation keeps the
    // caller pinned too.
    friend class detail::WrapperOperation<FanoutOp>;
    static constexpr std::size_t inline_children = 4;

    FanoutOp(const FanoutPlan& plan, Operation& op, std::uint32_t part, const Request& r)
        : WrapperOperation(op, 1),  // start()'s own; each send adds one
          tree_(plan.tree->shared_from_this()),
          plan_(plan),
          part_(part),
          n_(plan.children.size()),
          req_(r) {
        std::memcpy(key_, r.key.data(), r.key.size());
        req_.key = std::string_view(key_, r.key.size());
        if (!r.keys.empty()) req_.keys = std::span<const std::string_view>(&req_.key, 1);
        req_.keys_are_stable = true;
        if (n_ > inline_children) heap_children_ = std::make_unique<Child[]>(n_);
        children_ = heap_children_ ? heap_children_.get() : inline_children_;
        // Children after the first are sent after the caller's call returned: a value the
        // caller only lent must be ours by then.
        if (sends_later() && !r.value.empty() && !r.value_is_stable) {
            value_copy_.assign(r.value);
            req_.value = value_copy_;
        }
        get_like_ = is_get_like(r.code);
    }

    bool sends_later() const noexcept {
        return plan_.policy == FanoutPolicy::failover ||
               plan_.policy == FanoutPolicy::miss_failover || plan_.policy == FanoutPolicy::warm_up;
    }

    void begin() {
        plan_.counters->requests.fetch_add(1, std::memory_order_relaxed);
        if (sends_later()) {
            send(0);
            return;
        }
        for (std::uint32_t i = 0; i < n_; ++i)
            send(i);
        if (plan_.policy == FanoutPolicy::all_async) {
            {
                std::lock_guard<std::mutex> lock(mu_);
                if (answered_) return;
                answered_ = true;
            }
            Completion c = default_reply(req_.code);
            // The writes went out; nobody waits for their outcome (AllAsyncRoute).
            if (!get_like_ && c.status != Status::not_found) c.status = Status::sent;
            wrapped_.on_complete(part_, c);
        }
    }

    void send(std::uint32_t i) {
        add_reference();
        if (i == 0 || !sends_later()) {
            plan_.children[i]->send(*this, i, req_);
            return;
        }
        plan_.counters->failovers.fetch_add(1, std::memory_order_relaxed);
        Request r = req_;
        if (plan_.failover_exptime && has_write_exptime(r.code) &&
            (r.exptime == 0 || r.exptime > *plan_.failover_exptime))
            r.exptime = *plan_.failover_exptime;
        plan_.children[i]->send(*this, i, r);
    }

    /// WarmUpRoute: the warm child's hit is added to the cold child, with its own exptime.
    void send_fill() {
        const Child& warm = children_[1];
        Request r;
        r.code = OpCode::add;
        r.key = req_.key;
        r.value = warm.data;
        r.flags = warm.flags;
        r.exptime = plan_.fill_exptime;
        add_reference();
        plan_.children[0]->send(*this, fill_part, r);
    }

    /// True when a value from `child` is the caller's answer as soon as it arrives.
    bool commits_on_value(std::uint32_t child) const noexcept {
        switch (plan_.policy) {
            case FanoutPolicy::all_fastest:
            case FanoutPolicy::failover:
            case FanoutPolicy::miss_failover:
            case FanoutPolicy::warm_up:
                return true;  // the fastest; or the one child in flight
            case FanoutPolicy::all_initial:
                return child == 0;
            default:
                return false;
        }
    }
    /// True when `child`'s value bytes must be kept. Under all_sync a value reaches the caller
    /// only when every child hit, and worst() then answers with child 0: the others' copies
    /// would never be read.
    bool keeps_value(std::uint32_t child) const noexcept {
        return plan_.policy == FanoutPolicy::all_sync ? child == 0 : buffers_value(child);
    }
    /// True when `child`'s reply must be kept past its own event.
    bool buffers_value(std::uint32_t child) const noexcept {
        return plan_.policy == FanoutPolicy::all_sync ||
               plan_.policy == FanoutPolicy::all_majority ||
               (plan_.policy == FanoutPolicy::warm_up && child == 1);
    }

    /// How bad a reply is (mcrouter's "worst"): an error, then a miss or a refused write,
    /// then success.
    int severity(const Child& ch) const noexcept {
        if (ch.ec) return 3;
        if (get_like_) return ch.hit ? 1 : 2;
        return is_success(ch.status) ? 1 : 2;
    }
    bool same_result(const Child& a, const Child& b) const noexcept {
        if (a.ec || b.ec) return false;
        return get_like_ ? a.hit == b.hit : a.status == b.status;
    }
    int worst() const noexcept {
        int at = -1, sev = -1;
        for (std::uint32_t i = 0; i < n_; ++i) {
            if (!children_[i].done) continue;
            const int s = severity(children_[i]);
            if (s > sev) {
                sev = s;
                at = static_cast<int>(i);
            }
        }
        return at;
    }

    /// Under mu_, the caller not answered yet: what `child`'s reply leads to.
    Action decide(std::uint32_t child) {
        Action a;
        const Child& ch = children_[child];
        const int me = static_cast<int>(child);
        const bool all_in = done_ == n_;
        switch (plan_.policy) {
            case FanoutPolicy::all_sync:
                if (all_in) a.answer = worst();
                break;
            case FanoutPolicy::all_majority: {
                if (!ch.ec) {
                    std::size_t agree = 0;
                    for (std::uint32_t i = 0; i < n_; ++i)
                        agree += children_[i].done && same_result(children_[i], ch) ? 1 : 0;
                    if (agree >= n_ / 2 + 1) a.answer = me;
                }
                // No majority: unlike mcrouter's latest reply, the worst, so that a write
                // most replicas refused is reported as failed.
                if (a.answer < 0 && all_in) a.answer = worst();
                break;
            }
            case FanoutPolicy::all_fastest:
                if (chosen_ == me || (chosen_ < 0 && (!ch.ec || all_in))) a.answer = me;
                break;
            case FanoutPolicy::all_initial:
                if (child == 0) a.answer = 0;
                break;
            case FanoutPolicy::all_async:
                break;  // answered at once
            case FanoutPolicy::failover:
            case FanoutPolicy::miss_failover: {
                const bool miss =
                    plan_.policy == FanoutPolicy::miss_failover && get_like_ && !ch.hit;
                if ((ch.ec || miss) && chosen_ != me && child + 1 < n_)
                    a.send_next = me + 1;
                else
                    a.answer = me;
                break;
            }
            case FanoutPolicy::warm_up:
                if (child == 0) {
                    cold_missed_ = !ch.ec && !ch.hit;
                    if (ch.hit || chosen_ == 0)
                        a.answer = 0;
                    else
                        a.send_next = 1;
                } else {
                    a.answer = 1;
                    a.fill = ch.hit && ch.has_value && cold_missed_ && !ch.ec;
                }
                break;
        }
        return a;
    }

    /// Answers the caller with child `j`'s reply; `current` is child `now`'s completion, in
    /// hand (its views valid during this call).
    void answer(std::uint32_t j, std::uint32_t now, const Completion& current) {
        const Child& ch = children_[j];
        const bool value_sent = forwarded_ && chosen_ == static_cast<int>(j);
        if (ch.has_value && !value_sent && req_.code != OpCode::meta_get)
            wrapped_.on_value(part_, 0, ValueView{req_.key, ch.data, ch.flags, ch.cas});
        if (j == now) {
            wrapped_.on_complete(part_, current);
            return;
        }
        Completion c;
        c.ec = ch.ec;
        c.status = ch.status;
        c.number = ch.number;
        c.meta = ch.meta ? &ch.meta->reply : nullptr;
        wrapped_.on_complete(part_, c);
    }

    std::shared_ptr<const RouteTree> tree_;  // keeps plan_ and the children alive
    const FanoutPlan& plan_;
    const std::uint32_t part_;
    const std::size_t n_;
    Request req_;
    bool get_like_ = false;
    std::mutex mu_;  // guards everything below; never held while calling out
    bool answered_ = false;
    bool forwarded_ = false;  // chosen_'s value went to the caller
    bool cold_missed_ = false;
    int chosen_ = -1;  // the child whose value events go straight to the caller
    std::size_t done_ = 0;
    Child* children_ = nullptr;
    Child inline_children_[inline_children];
    std::unique_ptr<Child[]> heap_children_;
    std::string value_copy_;
    char key_[protocol::max_key_length];
};

// One block of the request memory's largest small size: a fan-out per request is recycled,
// never malloc'd, once the caches are warm.
static_assert(sizeof(FanoutOp) <= 1024);

}  // namespace

void fan_out(const FanoutPlan& plan, detail::Operation& op, std::uint32_t part,
             const detail::Request& r) {
    FanoutOp::start(plan, op, part, r);
}

detail::Completion default_reply(detail::OpCode code) noexcept {
    Completion c;
    using detail::OpCode;
    if (is_get_like(code)) {
        c.status = Status::ok;  // no value: a miss
    } else if (detail::is_store(code) || code == OpCode::meta_set) {
        c.status = Status::not_stored;
    } else {
        c.status = Status::not_found;  // delete, touch, incr/decr
    }
    return c;
}

}  // namespace folsom::routing
