// Connection, the write path: submit() queues encoded requests under the lock (any thread),
// flush() writes what queued in one system call (strand), and quiet runs get their barrier.
#include "folsom/detail/request_memory.hpp"
#include "folsom/detail/write_here.hpp"
#include "folsom/error.hpp"

#include "net/connection.hpp"
#include "net/connection_stream.hpp"
#include "net/send_batch.hpp"

#include <asio/bind_allocator.hpp>
#include <asio/post.hpp>
#include <climits>

#include <algorithm>
#include <cstdint>
#include <span>
#include <sys/socket.h>
#include <sys/uio.h>

namespace folsom::net {

void Connection::submit(detail::Operation& op, std::uint32_t part, const detail::Request& request) {
    std::error_code ec;
    bool need_flush = false;
    {
        std::lock_guard lk(mu_);
        const auto st = state_.load(std::memory_order_relaxed);
        if (st == ConnectionState::closed) {
            ec = errc::closed;
        } else if (st == ConnectionState::backoff) {
            // A server that refuses us (bad certificate, bad credentials) says so on every
            // request until a connect succeeds; one that is merely down is "not connected".
            ec = refusal_ ? refusal_ : make_error_code(errc::not_connected);
        } else {
            // A command that is not quiet must not be answered amid a quiet run: its error
            // reply could not be told from theirs (meta errors echo no opaque).
            if (!request.quiet || !driver_->sends_quietly(request)) end_quiet_run();
            Command cmd{&op, part, request.code};
            cmd.retryable = request.retryable;
            const std::size_t refs_before = pending_out_.ref_count();
            if (pending_.empty() || !driver_->join(request, pending_out_, pending_.back(), cmd))
                ec = driver_->encode(request, pending_out_, cmd);
            if (!ec) {
                // Under the lock, before the command can complete on the strand.
                if (meter_.sink()) meter_.sent(cmd);
                if (pending_out_.ref_count() != refs_before) {
                    op.pin();
                    pending_pins_.push_back(&op);
                }
                pending_.push_back(cmd, request.keys.empty() ? request.key : request.keys[0]);
                if (st == ConnectionState::connected && !flush_posted_) {
                    flush_posted_ = true;
                    // Submitted from a completion inside the read loop: the loop flushes
                    // once it has delivered the whole batch, so every request the batch's
                    // handlers made goes out in one write, without a round trip through
                    // the strand's queue.
                    // (Also on a WriteHere thread, which may be delivering replies itself.)
                    need_flush =
                        !((strand_.running_in_this_thread() || detail::this_thread_writes_here()) &&
                          decoding_);
                }
            }
        }
    }
    if (ec) {
        if (meter_.sink()) meter_.refused(request, ec);
        op.on_complete(part, detail::failure(ec));
        return;
    }
    if (!need_flush || hold_flush(*this)) return;
    // The thread that is the io_context's only runner writes now (see WriteHere).
    if (detail::this_thread_writes_here())
        flush();
    else
        post_flush();
}

void Connection::post_flush() {
    // The flush's own memory comes from the request memory too: Asio's allocator would reach
    // malloc for it on every thread that is not running the io_context.
    asio::post(strand_, asio::bind_allocator(detail::RequestAllocator<void>(),
                                             [self = shared_from_this()] { self->flush(); }));
}

void Connection::flush() {
    bool sent = false;  // a write went out whole, here
    for (;;) {
        if (writing_) return;  // on_written flushes again
        {
            std::lock_guard lk(mu_);
            flush_posted_ = false;
            if (state_.load(std::memory_order_relaxed) != ConnectionState::connected ||
                pending_out_.empty())
                break;
            end_quiet_run();  // every write ends what it says; nothing waits for more
            std::swap(pending_out_, writing_out_);
            writing_pins_.swap(pending_pins_);
            if (inflight_.empty()) ++progress_;  // the wait for a reply starts now
            inflight_.splice_back(pending_);
        }
        sys_iov_.clear();
        std::size_t total = 0;
        writing_out_.for_each_segment([this, &total](protocol::OutputBuffer::Segment s) {
            sys_iov_.push_back(::iovec{const_cast<char*>(s.data), s.size});
            total += s.size;
        });
        writing_ = true;
        // Plain socket (TCP or Unix, no TLS): write now. The socket is non-blocking and its send
        // buffer almost always takes the whole batch, so the usual write costs one syscall and no
        // Asio operation (no completion to queue, no strand hop). Whatever is left (a full send
        // buffer) or went wrong is handed to an asynchronous write, which also reports errors the
        // usual way, from its own completion, never from inside this call.
        std::size_t written = 0;
        if (!tls_) {
            written = send_now();
            if (written == total) {
                // Requests that arrive from here on post a flush of their own (flush_posted_
                // is clear); only completions run by the unpinning below need the loop, to
                // go out in this call.
                const bool unpinned = !writing_pins_.empty();
                finish_write(written);
                const bool completed = complete_unanswered();
                sent = true;
                if (unpinned || completed) continue;
                break;
            }
        }
        iov_.clear();
        for (const auto& v : sys_iov_)
            iov_.emplace_back(v.iov_base, v.iov_len);
        if (written > 0) {
            if (Metrics* m = meter_.sink()) m->bytes_sent(meter_.server(), written);
            consume_iov(written);
        }
        // A span, not the vector: the write operation keeps a copy of its buffer sequence,
        // and copying the vector allocated once per write. iov_ is left alone until
        // on_written.
        async_write_all(
            std::span<const asio::const_buffer>(iov_),
            [self = shared_from_this(), gen = generation_](
                const std::error_code& ec, std::size_t n) { self->on_written(gen, ec, n); });
        if (!reading_) start_read();  // the replies come through Asio
        return;
    }
    if (sent) after_send();
}

std::size_t Connection::send_now() noexcept {
    // The system call itself rather than Asio's write_some: the same call without the
    // wrapper's error_code bookkeeping (error categories looked up per call). One segment (a
    // sequential request, a batch that references no value) goes through send(2), so that
    // the kernel has no msghdr and iovec array to copy in and check; more go through
    // sendmsg(2), at most IOV_MAX in one call (the asynchronous write sends the rest).
    ::ssize_t n;
    if (sys_iov_.size() == 1) {
        n = ::send(socket_.native_handle(), sys_iov_[0].iov_base, sys_iov_[0].iov_len,
                   MSG_NOSIGNAL);
    } else {
        ::msghdr msg{};
        msg.msg_iov = sys_iov_.data();
        msg.msg_iovlen = std::min<std::size_t>(sys_iov_.size(), IOV_MAX);
        n = ::sendmsg(socket_.native_handle(), &msg, MSG_NOSIGNAL);
    }
    return n > 0 ? static_cast<std::size_t>(n) : 0;  // an error resurfaces in the async write
}

void Connection::consume_iov(std::size_t n) {
    std::size_t drop = 0;
    while (drop < iov_.size() && n >= iov_[drop].size())
        n -= iov_[drop++].size();
    iov_.erase(iov_.begin(), iov_.begin() + static_cast<std::ptrdiff_t>(drop));
    if (n > 0) iov_.front() += n;
}

void Connection::finish_write(std::size_t n) {
    if (Metrics* m = meter_.sink(); m && n) m->bytes_sent(meter_.server(), n);
    writing_ = false;
    writing_out_.clear();
    unpin_all(writing_pins_);
}

void Connection::on_written(std::uint64_t gen, const std::error_code& ec, std::size_t n) {
    finish_write(n);
    if (gen != generation_) {
        // A write of a connection that has since failed; the new one may have work waiting.
        if (state() == ConnectionState::connected) flush();
        return;
    }
    if (ec) {
        fail(errc::connection_lost, "write failed: " + ec.message());
        return;
    }
    complete_unanswered();
    flush();
}

void Connection::end_quiet_run() {
    if (pending_.empty() || !pending_.back().quiet) return;
    detail::Request noop;
    noop.code = detail::OpCode::noop;
    Command barrier{&barrier_op_, 0, detail::OpCode::noop};
    barrier.barrier = true;
    if (!driver_->encode(noop, pending_out_, barrier)) pending_.push_back(barrier);
}

bool Connection::complete_unanswered() {
    if (inflight_.empty() || !inflight_.front().unanswered) return false;
    detail::Completion sent;
    sent.status = Status::sent;
    while (!inflight_.empty() && inflight_.front().unanswered)
        inflight_.complete_front(sent);
    return true;
}

}  // namespace folsom::net
