/// @file
/// SendBatch: holds back the writes of the requests this thread starts until the batch ends,
/// so that a burst of requests from a thread that is not running the I/O goes out in one
/// write per connection and wakes the I/O thread once.
///
/// Why: a request started outside the io_context posts its connection's flush to the I/O
/// thread. The post wakes that thread, and on a busy core the woken thread often runs at
/// once, writes the one request queued so far and sleeps again, so a loop of N requests costs
/// up to N writes and N wake-ups. Inside a SendBatch the requests are encoded and queued as
/// usual (errors on bad input still complete them at once), but the flushes are posted only
/// when the outermost SendBatch on the thread ends (or send_held() is called).
///
///   {
///       folsom::SendBatch batch;
///       for (auto& k : keys) client.get(k, handler);
///   }  // every request goes out here
///
/// A batch is per thread and covers every Client used on it. Nesting is allowed: only the
/// outermost batch sends. A held request may still go out earlier, with a write the I/O
/// thread makes meanwhile for its connection (after a reply, say): the batch saves wake-ups,
/// it is no barrier. Never wait for a held request inside its batch (a future's get(), a
/// BlockingClient call, a coroutine resumed only by its reply): it may not be sent until the
/// batch ends. BlockingClient and the Python binding call send_held() before they wait.
/// Requests started on the I/O thread from a completion are batched by the connection
/// already; a SendBatch there is harmless.
#pragma once

#include "folsom/export.hpp"

namespace folsom {

/// Holds back the writes of the requests this thread starts while it lives (RAII; see the
/// file's description): only the outermost SendBatch on a thread sends when it ends.
class FOLSOM_EXPORT SendBatch {
  public:
    /// Opens a batch on this thread (nested in any open one).
    SendBatch() noexcept;
    /// Sends what the batch holds, if it is the outermost one on this thread.
    ~SendBatch();
    SendBatch(const SendBatch&) = delete;
    SendBatch& operator=(const SendBatch&) = delete;

    /// Sends what this thread's batches hold now; the batches stay open.
    static void send_held() noexcept;
    /// True while a SendBatch is alive on this thread.
    static bool active() noexcept;
};

/// Marks this thread, while it lives, as the only one that may run the io_context of every
/// connection it starts requests on: the thread that drives a caller-driven io_context
/// (run_one()/poll() from the thread that waits), with no other thread running it meanwhile.
/// Never with an io_context that another thread runs: the thread's I/O would race that one's.
///
/// A request started here (outside a SendBatch, which still holds) is then written at once, on
/// this thread, instead of by a flush posted to the io_context: no scheduler turn, and none of
/// the zero-timeout epoll_wait Asio makes before it runs a posted handler. And when its
/// connection has nothing else in flight, the reply is read at once after the write (one
/// non-blocking recv(2)): a server that answers at once (one on this host, often) has it there
/// already, and the round trip then costs a send and a recv, with no Asio read operation,
/// epoll_wait or scheduler round. When it is not there yet, the reply comes through the
/// io_context as usual. Between requests, no read is pending on an idle connection of such a
/// thread (no one runs the io_context then anyway); the next write reads its reply.
///
/// Handlers: a reply read inside the call that started its request completes the request
/// there, but its handler is still posted to the io_context (and runs from run_one()), as Asio
/// promises: never from inside the initiating call. Handlers::may_run_inline drops that
/// promise for the requests this thread starts while the guard lives: their handlers (plain
/// callbacks with no executor of their own, on a client without a reply executor) may then
/// run before the call that started them returns, which spares the post and its scheduler
/// round. For a handler that only records its result, as a blocking wrapper's does.
class FOLSOM_EXPORT WriteHere {
  public:
    /// Where the handler of a request this thread starts may run (see the class description).
    enum class Handlers : unsigned char {
        never_inline,   ///< never inside the call that started the request (Asio's promise)
        may_run_inline  ///< possibly inside that call, when its reply was read there
    };

    /// Marks the thread when `on` (nestable; an unmarked guard does nothing).
    explicit WriteHere(bool on = true, Handlers handlers = Handlers::never_inline) noexcept;
    ~WriteHere();
    WriteHere(const WriteHere&) = delete;
    WriteHere& operator=(const WriteHere&) = delete;

    /// Deprecated: the library's own question (whether to write and read in the call); a
    /// thread knows whether it holds a WriteHere.
    [[deprecated("the library asks this itself; a thread knows its own WriteHere")]] static bool
    active() noexcept;
    /// Deprecated, as active().
    [[deprecated("the library asks this itself; a thread knows its own WriteHere")]] static bool
    handlers_may_run_inline() noexcept;

  private:
    bool on_;
    bool inline_;
};

}  // namespace folsom
