// folsom::SendBatch: a per-thread list of connections whose flush is held back; and the
// thread's folsom::WriteHere marks (detail/write_here.hpp asks them).
#include "folsom/send_batch.hpp"

#include "folsom/detail/write_here.hpp"

#include "net/connection.hpp"
#include "net/send_batch.hpp"

#include <vector>

namespace folsom {
namespace {

struct HeldFlushes {
    int depth = 0;
    // Kept between batches: its capacity is reused, so a batch allocates nothing once the
    // thread has seen as many connections in one batch.
    // Weak: a client destroyed while a batch is open takes its connections (and their
    // io_context) with it, and the batch then has nothing to send to them.
    std::vector<std::weak_ptr<net::Connection>> connections;
};

// The thread's WriteHere marks, together: a WriteHere that sets both finds them with one
// thread-local lookup (in a library loaded with dlopen, each lookup is a call).
struct WriteHereMarks {
    int write_here = 0;
    int inline_handlers = 0;
};

thread_local HeldFlushes t_held;
thread_local WriteHereMarks t_marks;

}  // namespace

SendBatch::SendBatch() noexcept {
    ++t_held.depth;
}

SendBatch::~SendBatch() {
    if (--t_held.depth == 0) send_held();
}

bool SendBatch::active() noexcept {
    return t_held.depth > 0;
}

void SendBatch::send_held() noexcept {
    // post_flush() only posts (it never submits), so nothing appends to the list meanwhile.
    auto& held = t_held.connections;
    for (auto& w : held)
        if (auto c = w.lock()) c->post_flush();
    held.clear();
}

WriteHere::WriteHere(bool on, Handlers handlers) noexcept
    : on_(on), inline_(on && handlers == Handlers::may_run_inline) {
    if (!on_) return;
    WriteHereMarks& m = t_marks;
    ++m.write_here;
    if (inline_) ++m.inline_handlers;
}

WriteHere::~WriteHere() {
    if (!on_) return;
    WriteHereMarks& m = t_marks;
    --m.write_here;
    if (inline_) --m.inline_handlers;
}

bool WriteHere::active() noexcept {
    return t_marks.write_here > 0;
}

bool WriteHere::handlers_may_run_inline() noexcept {
    return t_marks.inline_handlers > 0;
}

namespace detail {

bool this_thread_writes_here() noexcept {
    return t_marks.write_here > 0;
}

bool this_thread_runs_handlers_inline() noexcept {
    return t_marks.inline_handlers > 0;
}

}  // namespace detail

namespace net {

bool hold_flush(Connection& c) {
    if (t_held.depth == 0) return false;
    t_held.connections.push_back(c.weak_from_this());
    return true;
}

}  // namespace net
}  // namespace folsom
