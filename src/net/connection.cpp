#include "net/connection.hpp"

#include "folsom/detail/observe.hpp"
#include "folsom/detail/request_memory.hpp"
#include "folsom/error.hpp"
#include "folsom/send_batch.hpp"

#include "net/self_connection.hpp"
#include "net/send_batch.hpp"
#include "net/tls_context.hpp"

#include <asio/bind_allocator.hpp>
#include <asio/bind_executor.hpp>
#include <asio/connect.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/post.hpp>
#include <asio/write.hpp>
#include <climits>
#include <openssl/ssl.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <sys/socket.h>
#include <sys/uio.h>
#include <typeinfo>
#include <utility>

namespace folsom::net {
namespace {

constexpr std::size_t min_read_size = 16 * 1024;

std::int64_t now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

std::string unix_socket_tls_refusal(const std::string& path) {
    return "TLS over a Unix socket is not supported (" + path +
           "): memcached serves its -s socket in clear text even with -Z; drop Options::tls "
           "(--tls) for socket servers, or reach the server over TCP";
}

template <class Buffers, class Handler>
void Connection::async_read_some(const Buffers& b, Handler&& h) {
    if (tls_) {
        const auto allocator = asio::get_associated_allocator(h);
        tls_->async_read_some(
            b, asio::bind_allocator(
                   allocator, [s = tls_, h = std::forward<Handler>(h)](
                                  const std::error_code& ec, std::size_t n) mutable { h(ec, n); }));
    } else {
        socket_.async_read_some(b, std::forward<Handler>(h));
    }
}

template <class Buffers, class Handler>
void Connection::async_write_all(const Buffers& b, Handler&& h) {
    if (tls_)
        asio::async_write(*tls_, b,
                          [s = tls_, h = std::forward<Handler>(h)](
                              const std::error_code& ec, std::size_t n) mutable { h(ec, n); });
    else
        asio::async_write(socket_, b, std::forward<Handler>(h));
}

namespace {

/// The io_context behind `ex`: connections run their sockets on its concrete executor type
/// (see Connection::Strand). An any_io_executor names its target's exact type, and an
/// io_context executor's type carries 3 property bits (blocking.never, continuation,
/// outstanding work), so look for each of the 8, bare or inside a strand.
template <unsigned... Bits>
asio::io_context* io_context_behind(const asio::any_io_executor& ex,
                                    std::integer_sequence<unsigned, Bits...>) {
    asio::io_context* found = nullptr;
    auto look = [&]<unsigned B>(std::integral_constant<unsigned, B>) {
        using E = asio::io_context::basic_executor_type<std::allocator<void>, B>;
        // (This Asio's target<T>() does not check the type itself.)
        if (found) return;
        if (ex.target_type() == typeid(E))
            found = &ex.target<E>()->context();
        else if (ex.target_type() == typeid(asio::strand<E>))
            found = &ex.target<asio::strand<E>>()->get_inner_executor().context();
    };
    (look(std::integral_constant<unsigned, Bits>{}), ...);
    return found;
}

asio::io_context::executor_type io_executor_of(const asio::any_io_executor& ex) {
    if (auto* io = io_context_behind(ex, std::make_integer_sequence<unsigned, 8>{}))
        return io->get_executor();
    throw std::system_error(make_error_code(errc::invalid_argument),
                            "folsom: the executor must be an asio::io_context's (or a strand of "
                            "one)");
}

}  // namespace

Connection::Connection(asio::any_io_executor ex, const ServerAddress& server,
                       const Options& options, std::unique_ptr<detail::ProtocolDriver> driver)
    : strand_(asio::make_strand(io_executor_of(ex))),
      host_(server.host),
      port_(server.port),
      unix_socket_(server.is_unix_socket()),
      name_(server.to_string()),
      options_(options),
      driver_(std::move(driver)),
      socket_(strand_),
      resolver_(strand_),
      connect_timer_(strand_),
      retry_timer_(strand_),
      health_timer_(strand_),
      backoff_(options.reconnect_initial_delay),
      // Connections made in the same instant (a pool) must not draw the same spreads.
      jitter_(static_cast<std::uint_fast32_t>(
          std::chrono::steady_clock::now().time_since_epoch().count() ^
          static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(this)))) {
    if (options_.tls) tls_context_ = make_tls_context(*options_.tls);
}

Connection::~Connection() = default;

void Connection::start() {
    asio::post(strand_, [self = shared_from_this()] { self->do_connect(); });
}

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

void Connection::set_state(ConnectionState s) {
    {
        std::lock_guard lk(mu_);
        if (state_.load(std::memory_order_relaxed) == ConnectionState::closed) return;
        state_.store(s, std::memory_order_release);
    }
    if (listener_) listener_(s);
}

// ---- submission (any thread) -------------------------------------------------------------

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
                if (metrics_) {
                    // Under the lock, before the command can complete on the strand.
                    cmd.queued_ns = now_ns();
                    metrics_->request_sent(metrics_server_, detail::to_metric_op(cmd.code));
                }
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
                        !((strand_.running_in_this_thread() || WriteHere::active()) && decoding_);
                }
            }
        }
    }
    if (ec) {
        if (metrics_) report_refused(request, ec);
        op.on_complete(part, detail::failure(ec));
        return;
    }
    if (!need_flush || hold_flush(*this)) return;
    // The thread that is the io_context's only runner writes now (see WriteHere).
    if (WriteHere::active())
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

void Connection::close() {
    CommandQueue dropped;
    std::vector<detail::Operation*> pins;
    {
        std::lock_guard lk(mu_);
        if (state_.load(std::memory_order_relaxed) == ConnectionState::closed) return;
        state_.store(ConnectionState::closed, std::memory_order_release);
        dropped.splice_back(pending_);
        pending_out_.clear();
        pins.swap(pending_pins_);
    }
    // Commands not yet handed to the strand fail here and now; the strand fails the rest.
    fail_queue(dropped, errc::closed);
    unpin_all(pins);
    asio::post(strand_, [self = shared_from_this()] {
        self->retry_timer_.cancel();
        self->fail(errc::closed, "client shut down");
        if (self->listener_) self->listener_(ConnectionState::closed);
    });
}

// ---- connecting (strand) -------------------------------------------------------------------

void Connection::do_connect() {
    if (state() == ConnectionState::closed) return;
    if (attempted_) report_event(ConnectionEvent::reconnect_attempt);
    attempted_ = true;
    set_state(ConnectionState::connecting);
    const std::uint64_t gen = ++generation_;
    connect_timer_.expires_after(options_.connect_timeout);
    connect_timer_.async_wait([self = shared_from_this(), gen](const std::error_code& ec) {
        if (ec || gen != self->generation_ || self->state() != ConnectionState::connecting) return;
        self->fail(errc::timeout, "connect timed out");
    });
    if (unix_socket_) {
        // Options normally refuse these at configuration; a Discovery may still hand them in.
        if (tls_context_) {
            fail(errc::invalid_argument, unix_socket_tls_refusal(host_));
            return;
        }
        if (host_.size() > max_unix_socket_path) {
            fail(errc::invalid_argument, "Unix socket path too long: " + host_);
            return;
        }
        // No resolution: a missing file, a regular file or a socket nobody listens on fails
        // the connect (ENOENT, ECONNREFUSED), as a refused TCP connect does, into backoff.
        socket_.async_connect(asio::local::stream_protocol::endpoint(host_),
                              [self = shared_from_this(), gen](const std::error_code& ec) {
                                  self->on_connected(gen, ec);
                              });
        return;
    }
    if (tls_context_) tls_ = std::make_shared<asio::ssl::stream<Socket>>(strand_, *tls_context_);
    // Numeric addresses skip the resolver (which runs getaddrinfo on a helper thread).
    std::error_code addr_ec;
    const auto addr = asio::ip::make_address(host_, addr_ec);
    if (!addr_ec) {
        sock().async_connect(asio::ip::tcp::endpoint(addr, port_),
                             [self = shared_from_this(), gen](const std::error_code& ec) {
                                 self->on_connected(gen, ec);
                             });
        return;
    }
    resolver_.async_resolve(
        host_, std::to_string(port_),
        [self = shared_from_this(), gen](const std::error_code& ec,
                                         asio::ip::tcp::resolver::results_type results) {
            self->on_resolved(gen, ec, std::move(results));
        });
}

void Connection::on_resolved(std::uint64_t gen, const std::error_code& ec,
                             asio::ip::tcp::resolver::results_type results) {
    if (gen != generation_) return;
    if (ec) {
        fail(errc::resolve_failed, ec.message());
        return;
    }
    // The generic socket connects to generic endpoints: convert the resolver's TCP ones (a
    // connect is rare; the operation keeps its own copy of the list).
    std::vector<Socket::endpoint_type> endpoints;
    endpoints.reserve(results.size());
    for (const auto& entry : results)
        endpoints.emplace_back(entry.endpoint());
    asio::async_connect(
        sock(), std::move(endpoints),
        [self = shared_from_this(), gen](const std::error_code& cec, const Socket::endpoint_type&) {
            self->on_connected(gen, cec);
        });
}

void Connection::on_connected(std::uint64_t gen, const std::error_code& ec) {
    if (gen != generation_) return;
    if (ec) {
        fail(errc::connect_failed, ec.message());
        return;
    }
    std::error_code ignored;
    if (!unix_socket_) {
        if (connected_to_itself(sock())) {  // see self_connection.hpp
            fail(errc::connect_failed, "connected to itself: nothing listens on " + name_);
            return;
        }
        sock().set_option(asio::ip::tcp::no_delay(options_.tcp_nodelay), ignored);
    }
    if (tls_) {
        start_tls(gen);
        return;
    }
    // flush() writes a plain socket (TCP or Unix) with send(2), which must never block the I/O
    // thread.
    socket_.non_blocking(true, ignored);
    after_transport();
}

void Connection::start_tls(std::uint64_t gen) {
    prepare_tls_stream(*tls_, *options_.tls, host_);
    tls_->async_handshake(asio::ssl::stream_base::client,
                          [self = shared_from_this(), gen, s = tls_](const std::error_code& ec) {
                              if (gen != self->generation_) return;
                              if (ec) {
                                  self->fail(errc::tls_error, "TLS handshake: " + ec.message());
                                  return;
                              }
                              self->after_transport();
                          });
}

void Connection::after_transport() {
    driver_->reset();
    rbuf_.clear();
    read_need_ = 0;
    handshake_out_.clear();
    if (driver_->handshake_request(handshake_out_)) {
        start_handshake();  // the connect timer keeps running until the handshake is done
        return;
    }
    start_read();
    become_connected();
}

void Connection::start_handshake() {
    handshaking_ = true;
    write_handshake();
    start_read();
}

void Connection::write_handshake() {
    // Handshake messages are tiny and rare: each gets its own copy, so a reply that arrives
    // (and queues the next message) before this write's completion runs cannot disturb it.
    auto bytes = std::make_shared<std::string>(handshake_out_.contiguous());
    handshake_out_.clear();
    async_write_all(asio::buffer(*bytes), [self = shared_from_this(), gen = generation_, bytes](
                                              const std::error_code& ec, std::size_t) {
        if (gen != self->generation_) return;
        if (ec) self->fail(errc::connect_failed, "handshake write failed");
    });
}

void Connection::become_connected() {
    handshaking_ = false;
    {
        std::lock_guard lk(mu_);
        refusal_.clear();
    }
    connect_timer_.cancel();
    backoff_ = options_.reconnect_initial_delay;
    ++progress_;
    stalled_ticks_ = 0;
    set_state(ConnectionState::connected);
    report_event(ConnectionEvent::connected);
    arm_health_timer();
    flush();  // whatever queued while connecting
}

// ---- writing (strand) ----------------------------------------------------------------------

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
            if (metrics_) metrics_->bytes_sent(metrics_server_, written);
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
    if (metrics_ && n) metrics_->bytes_sent(metrics_server_, n);
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

// ---- reading (strand) ----------------------------------------------------------------------

void Connection::start_read() {
    if (read_armed_) return;
    read_armed_ = true;
    auto space = rbuf_.prepare(std::max(read_need_, min_read_size));
    // The read operation's memory comes from the request memory, as the flush's does: a
    // thread that arms it outside the io_context's run (a WriteHere thread whose write did not
    // find its reply) would otherwise reach malloc for it every time.
    async_read_some(asio::buffer(space.data(), space.size()),
                    asio::bind_allocator(detail::RequestAllocator<void>(),
                                         [self = shared_from_this(), gen = generation_](
                                             const std::error_code& ec, std::size_t n) {
                                             self->on_read(gen, ec, n);
                                         }));
}

void Connection::on_read(std::uint64_t gen, const std::error_code& ec, std::size_t n) {
    if (gen != generation_) return;  // read_armed_ belongs to the new socket
    read_armed_ = false;
    if (ec) {
        read_failed(ec);
        return;
    }
    received(n);
    if (handshaking_) {
        auto hs = driver_->handshake_reply(rbuf_.data(), handshake_out_);
        rbuf_.consume(hs.consumed);
        if (hs.ec) {
            fail(hs.ec, hs.message);
            return;
        }
        read_need_ = hs.needed;
        if (!hs.done) {
            if (!handshake_out_.empty()) write_handshake();
            start_read();
            return;
        }
        // The write of what queued meanwhile must not read: this read's bytes come first.
        reading_ = true;
        become_connected();
        reading_ = false;
        if (rbuf_.size() == 0) {
            start_read();
            return;
        }
        // Replies cannot precede requests, so nothing else should be buffered; let the
        // driver judge it (it reports a reply to a request never sent).
    }
    deliver_replies(false);
}

void Connection::deliver_replies(bool read_first) {
    reading_ = true;
    for (int round = 0;; ++round) {
        if (round > 0 || read_first) {
            if (round == max_direct_reads || inflight_.empty()) break;
            const ReadNow r = read_now();
            if (r == ReadNow::would_block) break;
            if (r == ReadNow::failed) {  // fail() has run
                reading_ = false;
                return;
            }
        }
        decoding_ = true;
        detail::DecodeStep step = driver_->decode(rbuf_.data(), inflight_);
        decoding_ = false;
        rbuf_.consume(step.consumed);
        if (step.ec) {
            reading_ = false;
            fail(step.ec, step.message);
            return;
        }
        read_need_ = step.needed;
        flush();  // what the completions just submitted (see submit())
    }
    reading_ = false;
    // While connected one read stays pending, also on an idle connection, to notice the server
    // closing it. Not when idle on a WriteHere thread: no one runs the io_context between that
    // thread's requests anyway, and the next write reads its own reply (after_send()).
    if (!not_connected() && (!inflight_.empty() || !WriteHere::active())) start_read();
}

void Connection::after_send() {
    if (reading_ || read_armed_ || inflight_.empty() || not_connected()) return;
    if (!WriteHere::active() || tls_) {
        start_read();
        return;
    }
    // The thread that is the io_context's only runner, after a write, with no read pending:
    // the reply of a server that answers at once (one on this host, often) is already in the
    // socket. Reading it now costs one recv(2), where an asynchronous read costs a speculative
    // recv, an epoll_wait and a scheduler round; when it is not there yet, deliver_replies()
    // arms the asynchronous read. Completions then run inside the call that wrote: WriteHere
    // says so.
    deliver_replies(true);
}

Connection::ReadNow Connection::read_now() {
    // Plain sockets only (a TLS record may need a write to make progress), and only while reads
    // have been finding bytes: a recv that finds none costs a syscall for nothing, so after
    // misses the probe runs once every 64 rounds until it hits again.
    if (tls_ || read_armed_ || not_connected()) return ReadNow::would_block;
    if (read_hits_ == 0 && (++read_probe_ & 63) != 0) return ReadNow::would_block;
    auto space = rbuf_.prepare(std::max(read_need_, min_read_size));
    // recv(2) itself rather than Asio's read_some, as send_now() does for writes.
    const ::ssize_t n = ::recv(socket_.native_handle(), space.data(), space.size(), 0);
    if (n < 0) {
        const int e = errno;
        if (e == EAGAIN || e == EWOULDBLOCK || e == EINTR) {
            // (EINTR: the pending asynchronous read will find the bytes.)
            if (read_hits_ > 0) --read_hits_;
            return ReadNow::would_block;
        }
        read_failed(std::error_code(e, asio::error::get_system_category()));
        return ReadNow::failed;
    }
    if (n == 0) {
        read_failed(asio::error::eof);
        return ReadNow::failed;
    }
    if (read_hits_ < 3) ++read_hits_;
    received(static_cast<std::size_t>(n));
    return ReadNow::read;
}

void Connection::read_failed(const std::error_code& ec) {
    fail(errc::connection_lost,
         ec == asio::error::eof ? "server closed the connection" : "read failed: " + ec.message());
}

void Connection::received(std::size_t n) {
    rbuf_.commit(n);
    if (metrics_) metrics_->bytes_received(metrics_server_, n);
    ++progress_;
}

// ---- health, failure and reconnect (strand) ------------------------------------------------

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

void Connection::fail_queue(CommandQueue& q, std::error_code ec) {
    const detail::Completion done = detail::failure(ec);
    while (!q.empty()) {
        Command c = q.pop_front();
        if (metrics_) completed(c, done);
        c.op->on_complete(c.part, done);
    }
}

void Connection::unpin_all(std::vector<detail::Operation*>& pins) {
    if (pins.empty()) return;
    // An unpin may complete an op whose handler submits (and so pins) again: iterate a list of
    // our own, then hand its capacity back, so that pinning stays allocation-free.
    auto local = std::move(pins);
    pins.clear();
    for (auto* op : local)
        op->unpin();
    if (pins.empty()) {
        local.clear();
        pins.swap(local);
    }
}

}  // namespace folsom::net
