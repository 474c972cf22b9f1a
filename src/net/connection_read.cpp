// Connection, the read path: one asynchronous read armed while connected, replies decoded and
// delivered in FIFO order, and direct non-blocking reads where a reply is likely waiting.
#include "folsom/detail/request_memory.hpp"
#include "folsom/detail/write_here.hpp"

#include "net/connection.hpp"
#include "net/connection_stream.hpp"

#include <asio/bind_allocator.hpp>

#include <algorithm>
#include <cerrno>
#include <sys/socket.h>

namespace folsom::net {
namespace {

constexpr std::size_t min_read_size = 16 * 1024;

}  // namespace

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
    if (handshaking_ && !handshake_received()) return;
    deliver_replies(false);
}

void Connection::deliver_replies(bool read_first, ReadWhy why) {
    reading_ = true;
    ReadNow last = ReadNow::read;
    for (int round = 0;; ++round) {
        if (round > 0 || read_first) {
            if (round == max_direct_reads || inflight_.empty()) {
                last = ReadNow::read;
                break;
            }
            last = read_now(round == 0 ? why : ReadWhy::chance);
            if (last == ReadNow::would_block || last == ReadNow::skipped) break;
            if (last == ReadNow::failed) {  // fail() has run
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
    if (not_connected() || (inflight_.empty() && detail::this_thread_writes_here())) return;
    // A WriteHere thread whose recv has just found the socket empty waits for it to become
    // readable: no speculative recv (it would find nothing again), no posted completion.
    if (last == ReadNow::would_block && detail::this_thread_writes_here())
        await_readable();
    else
        start_read();
}

void Connection::after_send() {
    if (reading_ || read_armed_ || inflight_.empty() || not_connected()) return;
    if (!detail::this_thread_writes_here() || tls_) {
        start_read();
        return;
    }
    // The thread that is the io_context's only runner, after a write, with no read pending:
    // the reply of a server that answers at once (one on this host, often) is already in the
    // socket. Reading it now costs one recv(2), where an asynchronous read costs a speculative
    // recv, an epoll_wait and a scheduler round; when it is not there yet, deliver_replies()
    // waits for it (await_readable()). Completions then run inside the call that wrote:
    // WriteHere says so. While such recvs keep finding nothing (a server on another CPU or
    // host), the reply is waited for at once: an epoll_wait and a recv, and no recv before.
    // (No epoll_wait has run since the write, so the wait cannot miss the reply.)
    if (!direct_read_likely()) {
        await_readable();
        return;
    }
    deliver_replies(true, ReadWhy::decided);
}

void Connection::await_readable() {
    read_armed_ = true;
    socket_.async_wait(
        asio::socket_base::wait_read,
        asio::bind_allocator(detail::RequestAllocator<void>(),
                             [self = shared_from_this(), gen = generation_](
                                 const std::error_code& ec) { self->on_readable(gen, ec); }));
}

void Connection::on_readable(std::uint64_t gen, const std::error_code& ec) {
    if (gen != generation_) return;  // read_armed_ belongs to the new socket
    read_armed_ = false;
    if (ec) {
        read_failed(ec);
        return;
    }
    deliver_replies(true, ReadWhy::readable);
}

bool Connection::direct_read_likely() noexcept {
    return read_hits_ > 0 || (++read_probe_ & 63) == 0;
}

Connection::ReadNow Connection::read_now(ReadWhy why) {
    // Plain sockets only (a TLS record may need a write to make progress), and only while reads
    // have been finding bytes: a recv that finds none costs a syscall for nothing, so after
    // misses the probe runs once every 64 rounds until it hits again. A socket just reported
    // readable is read whatever the odds.
    if (tls_ || read_armed_ || not_connected()) return ReadNow::skipped;
    if (why == ReadWhy::chance && !direct_read_likely()) return ReadNow::skipped;
    const bool counted = why != ReadWhy::readable;
    auto space = rbuf_.prepare(std::max(read_need_, min_read_size));
    // recv(2) itself rather than Asio's read_some, as send_now() does for writes.
    const ::ssize_t n = ::recv(socket_.native_handle(), space.data(), space.size(), 0);
    if (n < 0) {
        const int e = errno;
        if (e == EAGAIN || e == EWOULDBLOCK) {
            if (read_hits_ > 0 && counted) --read_hits_;
            return ReadNow::would_block;
        }
        if (e == EINTR) return ReadNow::skipped;  // (the asynchronous read will find the bytes)
        read_failed(std::error_code(e, asio::error::get_system_category()));
        return ReadNow::failed;
    }
    if (n == 0) {
        read_failed(asio::error::eof);
        return ReadNow::failed;
    }
    if (read_hits_ < 3 && counted) ++read_hits_;
    received(static_cast<std::size_t>(n));
    return ReadNow::read;
}

void Connection::read_failed(const std::error_code& ec) {
    fail(errc::connection_lost,
         ec == asio::error::eof ? "server closed the connection" : "read failed: " + ec.message());
}

void Connection::received(std::size_t n) {
    rbuf_.commit(n);
    if (Metrics* m = meter_.sink()) m->bytes_received(meter_.server(), n);
    ++progress_;
}

}  // namespace folsom::net
