// Connection, health and backoff: the request-timeout check while requests are outstanding,
// failing the connection (every queued and in-flight request exactly once), and the jittered,
// growing delay before the next connect.
#include "folsom/error.hpp"

#include "net/connection.hpp"

#include <algorithm>
#include <chrono>
#include <random>

namespace folsom::net {

void Connection::arm_health_timer() {
    if (options_.request_timeout.count() <= 0) return;
    health_timer_.expires_after(health_period());
    health_timer_.async_wait(
        [self = shared_from_this(), gen = generation_](const std::error_code& ec) {
            if (ec || gen != self->generation_ || self->state() != ConnectionState::connected)
                return;
            if (self->health_tick()) self->arm_health_timer();
        });
}

std::chrono::milliseconds Connection::health_period() const noexcept {
    return std::max(options_.request_timeout / 4, std::chrono::milliseconds(1));
}

bool Connection::health_tick() {
    // A stall that began just after one tick is seen from the next, so the connection fails
    // between request_timeout and request_timeout + one period after the last progress.
    const auto period = health_period();
    const auto needed = static_cast<std::uint32_t>(
        (options_.request_timeout.count() + period.count() - 1) / period.count());
    if (inflight_.empty() || progress_ != progress_seen_) {
        stalled_ticks_ = 0;
        progress_seen_ = progress_;
        return true;
    }
    if (++stalled_ticks_ < needed) return true;
    fail(errc::timeout, "no reply within the request timeout");
    return false;
}

void Connection::fail(std::error_code ec, const std::string& /*why*/) {
    ++generation_;  // every handler of the old socket is now stale
    read_armed_ = false;
    forget_socket();
    std::error_code ignored;
    sock().close(ignored);
    resolver_.cancel();
    connect_timer_.cancel();
    health_timer_.cancel();
    rbuf_.clear();
    read_need_ = 0;
    driver_->reset();

    CommandQueue dropped;
    std::vector<detail::Operation*> pins;
    bool closed = false;
    ConnectionState before = ConnectionState::closed;
    {
        std::lock_guard lk(mu_);
        before = state_.load(std::memory_order_relaxed);
        closed = before == ConnectionState::closed;
        if (!closed) state_.store(ConnectionState::backoff, std::memory_order_release);
        // Refusals say the same on every connect: a bad certificate, bad credentials, or a
        // server without SASL (the login is an unknown command to it: errc::unsupported).
        // (And a server this connection cannot reach at all: TLS asked over a Unix socket.)
        if (ec == errc::tls_error || ec == errc::auth_failed || ec == errc::unsupported ||
            ec == errc::no_sasl_mechanism || ec == errc::invalid_argument)
            refusal_ = ec;
        dropped.splice_back(pending_);
        pending_out_.clear();
        pins.swap(pending_pins_);
    }
    const std::error_code reason = closed ? std::error_code(errc::closed) : ec;
    // Announce the state before failing requests: a retry decided in their completion then
    // already sees this server as down (and, with failover, routes elsewhere).
    if (!closed && listener_) listener_(ConnectionState::backoff);
    if (before == ConnectionState::connected)
        report_event(ConnectionEvent::disconnected);
    else if (before == ConnectionState::connecting)
        report_event(ConnectionEvent::connect_failed);
    fail_queue(inflight_, reason);
    fail_queue(dropped, reason);
    unpin_all(pins);
    if (closed) return;
    schedule_reconnect();
}

void Connection::schedule_reconnect() {
    // Each delay is spread at random over 80..120% of the backoff (as gRPC does), so that the
    // connections of a pool -- and of every client of a restarted server -- that failed in the
    // same instant do not all come back in the same instant, forever in step.
    const double spread = std::uniform_real_distribution<double>(0.8, 1.2)(jitter_);
    retry_timer_.expires_after(std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::duration<double, std::milli>(backoff_) * spread));
    backoff_ = std::min(backoff_ * 2, options_.reconnect_max_delay);
    retry_timer_.async_wait([self = shared_from_this()](const std::error_code& ec) {
        if (!ec) self->do_connect();
    });
}

}  // namespace folsom::net
