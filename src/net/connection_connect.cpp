// Connection, transport and handshake: resolve, connect (TCP or a Unix socket), TLS, then the
// protocol's handshake (SASL, text authentication), after which the connection is connected.
#include "folsom/error.hpp"

#include "net/after_fork.hpp"
#include "net/connection.hpp"
#include "net/connection_stream.hpp"
#include "net/self_connection.hpp"
#include "net/socket_options.hpp"
#include "net/tls_context.hpp"

#include <asio/connect.hpp>
#include <asio/local/stream_protocol.hpp>
#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

namespace folsom::net {

std::string unix_socket_tls_refusal(const std::string& path) {
    return "TLS over a Unix socket is not supported (" + path +
           "): memcached serves its -s socket in clear text even with -Z; drop Options::tls "
           "(--tls) for socket servers, or reach the server over TCP";
}

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
    // Asio learnt that the connect finished from the socket's write readiness, and keeps the
    // socket registered for it from then on (edge-triggered): every acknowledgement that frees
    // send space would wake the reactor for nothing, an epoll_wait that reports EPOLLOUT alone
    // before the one that brings the reply. Handing the descriptor back to Asio registers it
    // anew, for reads alone (a write that must wait for space registers it for writes again).
    if (!reregister_for_reads()) {
        fail(errc::connect_failed, "the connected socket could not be registered");
        return;
    }
    // From here the socket is one a forked child must not use (after_fork.hpp).
    tracked_fd_ = sock().native_handle();
    track_connection_socket(tracked_fd_);
    std::error_code ignored;
    if (!unix_socket_) {
        if (connected_to_itself(sock())) {  // see self_connection.hpp
            fail(errc::connect_failed, "connected to itself: nothing listens on " + name_);
            return;
        }
        sock().set_option(asio::ip::tcp::no_delay(options_.tcp_nodelay), ignored);
        // Keepalive and user timeout: best effort, a socket without them still works.
        (void)apply_tcp_options(sock().native_handle(), options_);
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

bool Connection::reregister_for_reads() {
    Socket& s = sock();
    std::error_code ec;
    const auto protocol = s.local_endpoint(ec).protocol();
    if (ec) return false;
    const auto fd = s.release(ec);
    if (ec) return false;
    s.assign(protocol, fd, ec);
    if (ec) {
        ::close(fd);
        return false;
    }
    return true;
}

void Connection::start_tls(std::uint64_t gen) {
    prepare_tls_stream(*tls_, *options_.tls, host_);  // SNI and the host name check
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

bool Connection::handshake_received() {
    auto hs = driver_->handshake_reply(rbuf_.data(), handshake_out_);
    rbuf_.consume(hs.consumed);
    if (hs.ec) {
        fail(hs.ec, hs.message);
        return false;
    }
    read_need_ = hs.needed;
    if (!hs.done) {
        if (!handshake_out_.empty()) write_handshake();
        start_read();
        return false;
    }
    // The write of what queued meanwhile must not read: this read's bytes come first.
    reading_ = true;
    become_connected();
    reading_ = false;
    if (rbuf_.size() == 0) {
        start_read();
        return false;
    }
    // Replies cannot precede requests, so nothing else should be buffered; let the driver
    // judge it (it reports a reply to a request never sent).
    return true;
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

}  // namespace folsom::net
