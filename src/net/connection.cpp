// Connection: construction, start, state, close, and failing what is queued (the lifecycle
// around the concerns in the other connection_*.cpp files).
#include "net/connection.hpp"

#include "folsom/error.hpp"

#include "net/after_fork.hpp"
#include "net/tls_context.hpp"

#include <asio/post.hpp>

#include <cstdint>
#include <memory>
#include <typeinfo>
#include <utility>

namespace folsom::net {
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

Connection::~Connection() {
    forget_socket();
}

void Connection::forget_socket() noexcept {
    if (tracked_fd_ < 0) return;
    untrack_connection_socket(tracked_fd_);
    tracked_fd_ = -1;
}

void Connection::start() {
    asio::post(strand_, [self = shared_from_this()] { self->do_connect(); });
}

void Connection::set_state(ConnectionState s) {
    {
        std::lock_guard lk(mu_);
        if (state_.load(std::memory_order_relaxed) == ConnectionState::closed) return;
        state_.store(s, std::memory_order_release);
    }
    if (listener_) listener_(s);
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

void Connection::fail_queue(CommandQueue& q, std::error_code ec) {
    const detail::Completion done = detail::failure(ec);
    while (!q.empty()) {
        Command c = q.pop_front();
        if (meter_.sink()) meter_.completed(c, done);
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
