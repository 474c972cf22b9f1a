#include "wire/request_meter.hpp"

#include "folsom/detail/observe.hpp"
#include "folsom/error.hpp"

#include "wire/command_queue.hpp"

namespace folsom::net {

void RequestMeter::sent(Command& c) const noexcept {
    c.queued_ns = now_ns();
    sink_->request_sent(server_, detail::to_metric_op(c.code));
}

void RequestMeter::completed(const Command& c, const detail::Completion& done) const noexcept {
    if (c.barrier) return;  // the connection's own, not a request
    RequestRecord r;
    r.server = server_;
    r.op = detail::to_metric_op(c.code);
    r.sent = true;
    const bool retrieval = detail::is_retrieval(c.code);
    if (retrieval) {
        r.keys = c.key_count;
        r.hits = c.hits;
    }
    if (done.ec) {
        r.outcome = Outcome::error;
        r.error = done.ec;
        r.retried = c.retryable && done.ec == errc::connection_lost;
    } else if (retrieval) {
        r.outcome = c.hits ? Outcome::hit : Outcome::miss;
    } else {
        r.outcome = detail::to_outcome(done.status);
    }
    r.latency = std::chrono::nanoseconds(now_ns() - c.queued_ns);
    sink_->request_completed(r);
}

void RequestMeter::refused(const detail::Request& req, std::error_code ec) const noexcept {
    RequestRecord r;
    r.server = server_;
    r.op = detail::to_metric_op(req.code);
    r.outcome = Outcome::error;
    r.error = ec;
    if (detail::is_retrieval(req.code)) r.keys = static_cast<std::uint32_t>(req.keys.size());
    sink_->request_completed(r);
}

}  // namespace folsom::net
