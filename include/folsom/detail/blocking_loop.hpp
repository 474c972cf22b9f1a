/// @file
/// BlockingLoop: the event loop behind a blocking facade (BlockingClient, the Python Client).
///
/// An asio::io_context run either by a dedicated I/O thread, or by the threads that wait on it:
/// the first waiter drives the loop until its own request is done, the others sleep until
/// theirs is done or the loop is free to drive (leader/follower). A caller-driven loop costs a
/// sequential request no thread hand-off: it is written, its reply read and its handler run on
/// the thread that asked, as libmemcached does. A blocking request takes the lead (start())
/// before it starts, so that it is written at once under a folsom::WriteHere rather than by a
/// flush posted to the loop.
///
/// Timers (request and connect timeouts, health checks, the reconnect after a backoff) run only
/// while some thread drives. A request that completes inside the call that started it (a reply
/// read in the call, a refusal while the server is in backoff) drives nothing, so a leader first
/// runs whatever is due (one non-blocking poll) when the loop has not been polled for
/// `catch_up_period`: a client whose every call fails at once still reconnects.
///
/// A handler that throws (one of the caller's own, started through the client's asynchronous
/// API: the client's never do) while a thread drives: the drive goes on until that thread's
/// own request is done (its handler points at the thread's frame), then rethrows.
#pragma once

#include "folsom/export.hpp"
#include "folsom/send_batch.hpp"

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

namespace folsom::detail {

class FOLSOM_EXPORT BlockingLoop {
  public:
    /// How long a caller-driven loop may go without running its due timers while its requests
    /// keep completing inside the calls that start them.
    static constexpr std::chrono::milliseconds catch_up_period{1};

    /// Who calls a caller-driven loop: any threads at once (`many`), or one thread at a time
    /// (`one`: the owner serialises its calls, as libmemcached's one memcached_st per thread;
    /// a handler never runs elsewhere, since no other thread runs the io_context). With `one`,
    /// the lead and the outcomes of requests need no lock and no wake-up.
    enum class Callers : unsigned char { many, one };

    /// `threaded`: a thread of the loop's own runs the io_context; else the waiting threads do.
    /// `callers` (caller-driven only; a threaded loop always locks): see Callers.
    explicit BlockingLoop(bool threaded, int concurrency_hint = ASIO_CONCURRENCY_HINT_DEFAULT,
                          Callers callers = Callers::many)
        : io_(concurrency_hint),
          work_(asio::make_work_guard(io_)),
          threaded_(threaded),
          locking_(threaded || callers == Callers::many) {
        if (threaded_) thread_ = std::thread([this] { io_.run(); });
    }
    ~BlockingLoop() { stop(); }
    BlockingLoop(const BlockingLoop&) = delete;
    BlockingLoop& operator=(const BlockingLoop&) = delete;

    asio::io_context& io() noexcept { return io_; }
    bool threaded() const noexcept { return threaded_; }

    /// Starts a blocking request: `start()` runs on this thread, as the loop's leader when the
    /// loop is caller-driven and no other thread drives (then under a WriteHere whose handlers
    /// may run inline: one send(2), and the reply read in the call when it is already there).
    /// Returns whether this thread leads: pass it to wait(done, leading), which ends the lead.
    template <class Start>
    bool start(Start&& start) {
        const bool lead = try_lead();
        try {
            WriteHere here(lead, WriteHere::Handlers::may_run_inline);
            std::forward<Start>(start)();
        } catch (...) {
            if (lead) end_lead();
            throw;
        }
        return lead;
    }

    /// Caller-driven, with no thread driving: makes this thread the driver and returns true,
    /// after running what is due if the loop has not been polled for catch_up_period. The
    /// caller must end the lead: wait(done, true), or end_lead(). Threaded, or another thread
    /// driving: false.
    bool try_lead() {
        if (threaded_) return false;
        {
            Guard lk(*this);
            if (driving_) return false;
            driving_ = true;
        }
        if (std::chrono::steady_clock::now() - last_poll_ >= catch_up_period) {
            try {
                WriteHere here(true, WriteHere::Handlers::may_run_inline);
                poll_now();
            } catch (...) {  // (a handler of the caller's own threw)
                end_lead();
                throw;
            }
        }
        return true;
    }
    void end_lead() {
        {
            Guard lk(*this);
            driving_ = false;
        }
        if (locking_) cv_.notify_all();
    }

    /// As wait(done); `leading`: this thread holds the lead start() or try_lead() gave it, and
    /// drives.
    template <class Pred>
    void wait(Pred done, bool leading) {
        if (!leading) {
            wait(done);
            return;
        }
        SendBatch::send_held();
        lead_then_end([&] { drive_until(done); });
    }

    /// Blocks until `done()` is true. `done` is read under the loop's mutex (and, on a driving
    /// thread, between handlers); whatever makes it true must do so through notify().
    /// A SendBatch open on this thread would hold back the request being waited for: it is
    /// sent first.
    template <class Pred>
    void wait(Pred done) {
        SendBatch::send_held();
        std::unique_lock lk(m_);
        if (threaded_) {
            cv_.wait(lk, done);
            return;
        }
        while (!done()) {
            if (!driving_) {
                driving_ = true;
                lk.unlock();
                lead_then_end([&] { drive_until(done); });
                lk.lock();
            } else {
                cv_.wait(lk);
            }
        }
    }

    /// Runs `change` under the loop's mutex, then wakes the waiters.
    template <class Change>
    void notify(Change change) {
        {
            Guard lk(*this);
            change();
        }
        if (locking_) cv_.notify_all();
    }

    /// Caller-driven: runs the handlers that are ready (sends what was queued), unless another
    /// thread is driving. Threaded: nothing to do.
    void poll() {
        if (threaded_) return;
        std::unique_lock lk(m_);
        if (driving_) return;
        driving_ = true;
        lk.unlock();
        lead_then_end([&] { poll_now(); });
    }

    /// Lets the loop run out of work (bounded by `limit`), then stops it. Caller-driven, this
    /// thread runs it: no other thread may be waiting on the loop.
    void stop(std::chrono::milliseconds limit = std::chrono::milliseconds(2000)) {
        if (stopped_) return;
        stopped_ = true;
        work_.reset();
        if (threaded_) {
            // The thread's run() returns once nothing is left; past the limit, stop it.
            const auto deadline = std::chrono::steady_clock::now() + limit;
            while (!io_.stopped() && std::chrono::steady_clock::now() < deadline)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            io_.stop();
            thread_.join();
        } else {
            // A handler of the caller's own that throws now has no call to report it to (and
            // this may run in a destructor): the exception is dropped and the run goes on.
            const auto deadline = std::chrono::steady_clock::now() + limit;
            io_.restart();
            for (;;) {
                try {
                    io_.run_until(deadline);
                    break;
                } catch (...) {
                }
            }
            io_.stop();
        }
    }

  private:
    /// The loop's mutex, held unless one thread at a time calls (Callers::one).
    class Guard {
      public:
        explicit Guard(BlockingLoop& l) : held_(l.locking_ ? &l.m_ : nullptr) {
            if (held_) held_->lock();
        }
        ~Guard() {
            if (held_) held_->unlock();
        }
        Guard(const Guard&) = delete;
        Guard& operator=(const Guard&) = delete;

      private:
        std::mutex* held_;  // null: no lock (Callers::one)
    };

    /// Runs `drive` on the thread that holds the lead, then ends the lead (a follower takes
    /// over, if its request is still open), also when `drive` throws (see drive_until).
    template <class Drive>
    void lead_then_end(Drive&& drive) {
        try {
            drive();
        } catch (...) {
            end_lead();
            throw;
        }
        end_lead();
    }

    /// The driving thread is the io_context's only runner (WriteHere): what its handlers
    /// submit is written here, and a write reads its reply here when it is already there.
    /// A handler that throws (one of the caller's own: the client's never do) does not end
    /// the drive, whose waiter's request still points at the waiter's frame: the first such
    /// exception is rethrown once `done()`.
    /// A drive that ran handlers counts as a poll (try_lead() then skips its catch-up): Asio's
    /// run_one() runs the reactor, which runs the due timers, whenever the reactor's turn
    /// comes in its queue, and a drive that waits for a reply runs it to read the reply.
    template <class Pred>
    void drive_until(Pred& done) {
        WriteHere here(true, WriteHere::Handlers::may_run_inline);
        std::exception_ptr thrown;
        bool ran = false;
        for (;;) {
            {
                Guard lk(*this);
                if (done()) break;
            }
            ran = true;
            try {
                io_.run_one();
            } catch (...) {
                if (!thrown) thrown = std::current_exception();
            }
        }
        if (ran) last_poll_ = std::chrono::steady_clock::now();
        if (thrown) std::rethrow_exception(thrown);
    }

    /// On the driving thread.
    void poll_now() {
        io_.poll();
        last_poll_ = std::chrono::steady_clock::now();
    }

    asio::io_context io_;
    asio::executor_work_guard<asio::io_context::executor_type> work_;
    std::mutex m_;
    std::condition_variable cv_;
    bool driving_ = false;
    bool threaded_;
    bool locking_;  // false: Callers::one (see Guard)
    bool stopped_ = false;
    std::chrono::steady_clock::time_point last_poll_{};  // written by the driving thread only
    std::thread thread_;
};

/// A blocking request's outcome: written by its handler (through the loop's notify()), read by
/// the thread that waits for it once `done`.
template <class T>
struct WaitSlot {
    bool done = false;
    std::error_code error;
    T value{};
};

/// The completion handler of a blocking request: stores its outcome in a WaitSlot on the
/// waiting thread's stack and wakes the waiters. It may run on any thread, inline included.
template <class T>
struct WaitHandler {
    WaitSlot<T>* slot;
    BlockingLoop* loop;
    template <class U>
    void operator()(std::error_code ec, U&& v) const {
        loop->notify([&] {
            slot->error = ec;
            slot->value = std::forward<U>(v);
            slot->done = true;
        });
    }
};

}  // namespace folsom::detail
