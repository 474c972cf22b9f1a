// Connection: one stream to one memcached server -- TCP, TLS over TCP, or a Unix domain socket
// -- pipelined, that re-establishes itself. One class, its member functions defined by concern:
//   connection.cpp          construction, state, close, failing queued commands;
//   connection_connect.cpp  transport and handshake (resolve, connect, TLS, the driver's login);
//   connection_write.cpp    the write path (submit, flush, quiet-run barriers);
//   connection_read.cpp     the read path (the asynchronous read, decoding, direct reads);
//   connection_health.cpp   health and backoff (request timeout, fail, reconnect).
// What it reports to Options::metrics about requests, wire/request_meter.hpp records (the
// in-flight queue records completions with it); bytes and connection events are reported
// where they happen.
//
// Flow of a request:
//   submit() (any thread, under mu_): encode into pending_out_ and queue the command in
//     pending_. Once connected, the first request after a flush starts the next one, unless
//     the read loop is delivering replies (it flushes what their handlers submitted when the
//     batch is done): the flush is held by the thread's SendBatch, run at once on a WriteHere
//     thread, or else posted to the strand. While connecting, requests just queue; the
//     connection flushes them when it becomes connected.
//   flush() (strand, or the WriteHere thread): swap pending_out_ into writing_out_, move
//     pending_ into inflight_, and write everything with one scatter-gather write: at once
//     (non-blocking) on a plain socket, asynchronously for what the socket does not take and
//     over TLS. Requests that arrive meanwhile collect in pending_out_ and go out together in
//     the next write, so a burst costs one syscall.
//   on_read() (strand): feed the unparsed bytes to the driver, which completes commands at the
//     front of inflight_ in FIFO order; then, while replies keep coming, read directly.
//
// Lifecycle:  connecting -> connected -> (failure) -> backoff -> connecting -> ...
//   * While connecting (transport, TLS, the protocol's handshake), requests queue (bounded by
//     connect_timeout and the client's outstanding limit) and go out once connected.
//   * In backoff (the server is known down), requests fail at once with not_connected, or
//     with the refusal of the last connect (tls_error, auth_failed, ...).
//   * On any failure (I/O error, protocol error, health timeout) the socket is closed and
//     every queued and in-flight command fails exactly once, then a reconnect is scheduled
//     after an exponentially growing delay.
//   * close() fails everything with errc::closed and stops reconnecting.
#pragma once

#include "folsom/metrics.hpp"
#include "folsom/options.hpp"
#include "folsom/protocol/output_buffer.hpp"
#include "folsom/server_address.hpp"

#include "net/read_buffer.hpp"
#include "wire/command_queue.hpp"
#include "wire/protocol_driver.hpp"
#include "wire/request_meter.hpp"

#include <asio/generic/stream_protocol.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ssl/context.hpp>
#include <asio/ssl/stream.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <sys/uio.h>
#include <vector>

namespace folsom::net {

enum class ConnectionState : std::uint8_t { connecting, connected, backoff, closed };

/// Why a Unix socket server cannot be combined with Options::tls: memcached serves its `-s`
/// socket in clear text even when started with -Z (its TLS is for TCP listeners only).
std::string unix_socket_tls_refusal(const std::string& path);

class Connection final : public std::enable_shared_from_this<Connection> {
  public:
    /// Called on the connection's strand whenever the state changes.
    using StateListener = std::function<void(ConnectionState)>;

    /// A connection to `server`: TCP (resolved on every connect unless numeric) or, for a
    /// socket path, a Unix domain socket (never resolved; no TCP options).
    Connection(asio::any_io_executor ex, const ServerAddress& server, const Options& options,
               std::unique_ptr<detail::ProtocolDriver> driver);
    ~Connection();

    /// Starts the first connect. Call once, after construction.
    void start();

    /// Sends one command (any thread). Failures before sending complete the part at once.
    void submit(detail::Operation& op, std::uint32_t part, const detail::Request& request);

    /// Fails everything with errc::closed and stops for good (any thread; idempotent).
    void close();

    /// Posts a flush of what submit() queued to the strand (any thread). submit() calls it,
    /// or hands the connection to the thread's SendBatch, which calls it when it ends.
    void post_flush();

    ConnectionState state() const noexcept { return state_.load(std::memory_order_acquire); }
    /// Why the server refused the last connect (errc::tls_error, errc::auth_failed,
    /// errc::unsupported: no SASL), until a connect succeeds; empty otherwise. Thread-safe.
    std::error_code refusal() const {
        std::lock_guard lk(mu_);
        return refusal_;
    }
    const std::string& name() const noexcept { return name_; }
    void set_state_listener(StateListener l) { listener_ = std::move(l); }
    /// Reports requests, bytes and connection events to `m` under server id `server`. Call
    /// before start(); `m` must outlive the connection (Options::metrics keeps it alive).
    void set_metrics(Metrics* m, std::uint32_t server) noexcept {
        meter_.attach(m, server);
        inflight_.set_meter(m ? &meter_ : nullptr);
    }

  private:
    // ---- transport and handshake (connection_connect.cpp) ----
    void do_connect();
    void on_resolved(std::uint64_t gen, const std::error_code& ec,
                     asio::ip::tcp::resolver::results_type results);
    void on_connected(std::uint64_t gen, const std::error_code& ec);
    /// Registers the connected socket with the reactor again, for read readiness alone (see
    /// on_connected); false when that failed (the socket is then closed).
    bool reregister_for_reads();
    void start_tls(std::uint64_t gen);
    void after_transport();
    void start_handshake();
    void write_handshake();
    /// Feeds a reply to the protocol's handshake (on_read, while handshaking_): true when
    /// the handshake is done and replies may follow in rbuf_ (deliver them).
    bool handshake_received();
    void become_connected();

    // ---- the read path (connection_read.cpp) ----
    /// Arms the asynchronous read (at most one is ever pending; a no-op when one is).
    void start_read();
    void on_read(std::uint64_t gen, const std::error_code& ec, std::size_t n);
    /// Why a direct read is made: on the chance that bytes are there (read_now() weighs it
    /// and counts the outcome), because the caller has weighed it already (the outcome is
    /// counted), or because the socket was just reported readable (not counted: it says
    /// nothing of the odds).
    enum class ReadWhy : std::uint8_t { chance, decided, readable };
    /// Decodes what rbuf_ holds and delivers it, then keeps reading on this thread while
    /// replies keep coming (read_now()), bounded; `read_first`: reads before the first decode,
    /// for reason `why`. Arms the asynchronous read at the end while requests remain, and also
    /// when idle unless this thread is the io_context's only runner (WriteHere); there, after
    /// a recv that found nothing, a readiness wait instead (await_readable()).
    void deliver_replies(bool read_first, ReadWhy why = ReadWhy::chance);
    /// After a write: on the thread that is the io_context's only runner (WriteHere), with no
    /// asynchronous read pending, reads the replies here at once (deliver_replies), or waits
    /// for them with await_readable() when direct reads have been finding nothing; otherwise
    /// arms the asynchronous read if none is pending. See WriteHere.
    void after_send();
    /// On a WriteHere thread (the io_context's only runner), plain socket: waits for the
    /// socket to become readable, then reads it directly (on_readable). Unlike an asynchronous
    /// read, the wait makes no speculative recv and posts no completion when the bytes are
    /// already there: Asio's reactor reports them, and one recv reads them. Only where no
    /// epoll_wait can have run since the socket was last found empty (a recv that returned
    /// EAGAIN, or the write of a request on an idle connection): Asio registers the socket
    /// edge-triggered, and a readiness reported before the wait was armed would never be
    /// reported again.
    void await_readable();
    void on_readable(std::uint64_t gen, const std::error_code& ec);
    /// After a read's replies are delivered (and what their handlers sent is written), a
    /// reply to those requests is often already in the socket (a server on the same CPU
    /// answers before the client thread runs on). Reading it here, with a non-blocking recv,
    /// spares an Asio read operation, a scheduler round and an epoll_wait per round trip.
    /// Bounded, so that one busy connection cannot starve the io_context's other work.
    /// would_block: a recv found nothing; skipped: none was made (see direct_read_likely()).
    enum class ReadNow : std::uint8_t { read, would_block, skipped, failed };
    ReadNow read_now(ReadWhy why = ReadWhy::chance);
    /// Whether a direct recv is worth its system call: while recent ones found bytes, and
    /// once every 64 rounds after they stopped finding any.
    bool direct_read_likely() noexcept;
    static constexpr int max_direct_reads = 16;
    void received(std::size_t n);
    void read_failed(const std::error_code& ec);  // fails the connection: connection_lost
    bool not_connected() const noexcept { return state() != ConnectionState::connected; }

    // ---- the write path (connection_write.cpp) ----
    void flush();
    /// Ends a run of quiet commands at the tail of pending_ with a barrier, so that a reply
    /// passes over each of them before any other command's reply (under mu_). See
    /// ProtocolDriver::sends_quietly.
    void end_quiet_run();
    /// Completes the written ascii noreply commands at the front of inflight_ with
    /// Status::sent (strand); true when it completed any.
    bool complete_unanswered();
    void on_written(std::uint64_t gen, const std::error_code& ec, std::size_t n);
    void finish_write(std::size_t n);
    /// One non-blocking sendmsg of sys_iov_ (a plain socket, no TLS): the bytes the socket took.
    std::size_t send_now() noexcept;
    void consume_iov(std::size_t n);

    // ---- health and backoff (connection_health.cpp) ----
    void arm_health_timer();
    std::chrono::milliseconds health_period() const noexcept;
    /// One health check (strand): false when it failed the connection.
    bool health_tick();
    void fail(std::error_code ec, const std::string& why);
    void schedule_reconnect();

    // ---- lifecycle (connection.cpp) ----
    /// Untracks the socket for fork (after_fork.hpp) before it closes.
    void forget_socket() noexcept;
    void set_state(ConnectionState s);
    void fail_queue(CommandQueue& q, std::error_code ec);
    static void unpin_all(std::vector<detail::Operation*>& pins);

    /// The operation of every barrier command: it has no caller to tell.
    struct BarrierOp final : detail::Operation {
        void on_value(std::uint32_t, std::uint32_t, const ValueView&) override {}
        void on_stat(std::uint32_t, std::string_view, std::string_view) override {}
        void on_complete(std::uint32_t, const detail::Completion&) override {}
        void pin() noexcept override {}
        void unpin() override {}
    };
    BarrierOp barrier_op_;

    // ---- metrics ----
    // Only when set_metrics was called; otherwise each hook is one null check.
    void report_event(ConnectionEvent e) noexcept {
        if (Metrics* m = meter_.sink()) m->connection_event(meter_.server(), e);
    }

    // The I/O objects are typed on a strand of the io_context's own executor type, with no
    // any_io_executor anywhere in the I/O path: every completion queries and prefers
    // properties of its I/O executor, and through an any_io_executor such a query allocates
    // its result (Asio's type erasure): allocations on every read and write.
    // The socket is a generic stream socket, which connects to a TCP endpoint or to a Unix
    // domain socket's (asio::local) alike; the I/O path is the same for both.
    using Strand = asio::strand<asio::io_context::executor_type>;
    using Socket = asio::basic_stream_socket<asio::generic::stream_protocol, Strand>;
    using Resolver = asio::ip::basic_resolver<asio::ip::tcp, Strand>;
    using Timer = asio::basic_waitable_timer<std::chrono::steady_clock,
                                             asio::wait_traits<std::chrono::steady_clock>, Strand>;

    Strand strand_;
    const std::string host_;  // a name, an IP literal, or a Unix socket's path
    const std::uint16_t port_;
    const bool unix_socket_;  // host_ is a Unix socket path
    const std::string name_;
    const Options options_;
    std::unique_ptr<detail::ProtocolDriver> driver_;

    // The transport: a plain socket, or a TLS stream over its own socket (recreated on every
    // connect, since a TLS stream cannot be reused). sock() is whichever socket is live. The
    // two templates are defined in connection_stream.hpp.
    Socket& sock() noexcept { return tls_ ? tls_->next_layer() : socket_; }
    template <class Buffers, class Handler>
    void async_read_some(const Buffers& b, Handler&& h);
    template <class Buffers, class Handler>
    void async_write_all(const Buffers& b, Handler&& h);

    // Strand-only state.
    Socket socket_;
    std::unique_ptr<asio::ssl::context> tls_context_;  // null without TLS
    // Shared so that each pending TLS operation can keep the stream it runs on alive until it
    // completes, even after a failure replaced it.
    std::shared_ptr<asio::ssl::stream<Socket>> tls_;
    Resolver resolver_;
    Timer connect_timer_;
    Timer retry_timer_;
    Timer health_timer_;
    std::uint64_t generation_ = 0;  // bumps on every (re)connect: stale handlers are ignored
    ReadBuffer rbuf_;
    std::size_t read_need_ = 0;
    std::uint8_t read_hits_ = 3;   // recent read_now() outcomes: 0 = they found nothing
    std::uint8_t read_probe_ = 0;  // counts skipped read_now() rounds while read_hits_ == 0
    CommandQueue inflight_;
    protocol::OutputBuffer writing_out_;
    std::vector<detail::Operation*> writing_pins_;  // ops whose values writing_out_ references
    std::vector<::iovec> sys_iov_;                  // the batch being written, for send_now()
    std::vector<asio::const_buffer> iov_;           // what is left of it for an asynchronous write
    bool writing_ = false;
    bool decoding_ = false;  // inside driver_->decode(): completions run on this strand
    // An asynchronous read is pending (and holds a buffer in rbuf_'s free space: nothing else
    // may read into rbuf_ until it completes), or a readiness wait (await_readable()). One is
    // always pending while connected, except on an idle connection whose io_context a
    // WriteHere thread drives: there the next write reads its reply on the spot
    // (after_send()), with no Asio read before or after it.
    bool read_armed_ = false;
    bool reading_ = false;  // inside deliver_replies() (or the handshake's reply): no nesting
    bool handshaking_ = false;
    protocol::OutputBuffer handshake_out_;
    std::chrono::milliseconds backoff_;
    std::minstd_rand jitter_;  // spreads reconnect delays (schedule_reconnect)
    // Health: "no bytes for request_timeout with requests outstanding" is judged by the timer,
    // in ticks, from a counter the I/O path bumps (bytes arrived, or requests went out to an
    // idle connection), so that the per-request path reads no clock.
    std::uint64_t progress_ = 0;       // bumped on progress; strand only
    std::uint64_t progress_seen_ = 0;  // progress_ at the last health tick
    std::uint32_t stalled_ticks_ = 0;  // health ticks in a row without progress
    StateListener listener_;
    RequestMeter meter_;      // what is reported to Options::metrics; off until set_metrics
    bool attempted_ = false;  // a connect was tried before: the next one is a reconnect
    int tracked_fd_ = -1;     // the socket as tracked for fork (after_fork.hpp), or -1

    // Submission side, shared with callers' threads.
    mutable std::mutex mu_;
    std::atomic<ConnectionState> state_{ConnectionState::connecting};
    protocol::OutputBuffer pending_out_;
    std::vector<detail::Operation*> pending_pins_;
    CommandQueue pending_;
    bool flush_posted_ = false;
    std::error_code refusal_;  // tls_error / auth_failed / unsupported (no SASL) of the last
                               // connect, until one succeeds
};

}  // namespace folsom::net
