// Connection, metrics: what a connection reports to Options::metrics (requests with their
// latency and outcome, refusals before sending). Bytes and connection events are reported
// where they happen.
#include "folsom/detail/observe.hpp"

#include "net/connection.hpp"

namespace folsom::net {

void Connection::set_metrics(Metrics* m, std::uint32_t server) noexcept {
    metrics_ = m;
    metrics_server_ = server;
    inflight_.set_observer(m ? this : nullptr);
}

void Connection::completed(const Command& c, const detail::Completion& done) noexcept {
    if (c.barrier) return;  // the connection's own, not a request
    RequestRecord r;
    r.server = metrics_server_;
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
    metrics_->request_completed(r);
}

void Connection::report_refused(const detail::Request& req, std::error_code ec) noexcept {
    RequestRecord r;
    r.server = metrics_server_;
    r.op = detail::to_metric_op(req.code);
    r.outcome = Outcome::error;
    r.error = ec;
    if (detail::is_retrieval(req.code)) r.keys = static_cast<std::uint32_t>(req.keys.size());
    metrics_->request_completed(r);
}

}  // namespace folsom::net
