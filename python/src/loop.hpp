// The event loop behind one Python client: an asio::io_context run either by a dedicated I/O
// thread (AsyncClient, and Client(io_thread=True)) or by the Python threads that wait on it
// (the default for the blocking Client): the first waiter drives the loop until its own request
// is done, the others sleep until theirs is done or the loop is free to drive (leader/follower).
// A caller-driven loop costs a sequential get no thread hand-off: the request is written, its
// reply read and its handler run on the thread that asked, as libmemcached does. A blocking
// request takes the lead (try_lead()) before it starts, so that it is written at once under a
// folsom::WriteHere rather than by a flush posted to the loop.
//
// Nothing here touches Python: handlers run without the GIL.
#pragma once

#include "folsom/send_batch.hpp"

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace folsom::python {

class Loop {
  public:
    explicit Loop(bool threaded) : work_(asio::make_work_guard(io_)), threaded_(threaded) {
        if (threaded_) thread_ = std::thread([this] { io_.run(); });
    }
    ~Loop() { stop(); }
    Loop(const Loop&) = delete;
    Loop& operator=(const Loop&) = delete;

    asio::io_context& io() noexcept { return io_; }
    bool threaded() const noexcept { return threaded_; }

    /// Caller-driven, with no thread driving: makes this thread the driver and returns true.
    /// The request it starts next is then written on this thread (under a folsom::WriteHere),
    /// without a flush posted to the loop and Asio's zero-timeout epoll_wait before it, and its
    /// wait(done, true) drives at once. The caller must end the lead: wait(done, true), or
    /// end_lead() if it does not wait. Threaded, or another thread driving: false.
    bool try_lead() {
        if (threaded_) return false;
        std::lock_guard lk(m_);
        if (driving_) return false;
        driving_ = true;
        return true;
    }
    void end_lead() {
        {
            std::lock_guard lk(m_);
            driving_ = false;
        }
        cv_.notify_all();
    }

    /// As wait(done); `leading`: this thread holds the lead try_lead() gave it, and drives.
    template <class Pred>
    void wait(Pred done, bool leading) {
        if (!leading) {
            wait(done);
            return;
        }
        SendBatch::send_held();
        drive_until(done);
        end_lead();  // a follower takes over, if its request is still open
    }

    /// Blocks until `done()` is true. `done` is read under the loop's mutex (and, on a driving
    /// thread, between handlers); whatever makes it true must do so through notify().
    /// A SendBatch open on this thread (an AsyncClient's, on the asyncio loop's thread) would
    /// hold back the request being waited for: it is sent first.
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
                drive_until(done);
                lk.lock();
                driving_ = false;
                cv_.notify_all();  // a follower takes over, if its request is still open
            } else {
                cv_.wait(lk);
            }
        }
    }

    /// Runs `change` under the loop's mutex, then wakes the waiters.
    template <class Change>
    void notify(Change change) {
        {
            std::lock_guard lk(m_);
            change();
        }
        cv_.notify_all();
    }

    /// Caller-driven: runs the handlers that are ready (sends what was queued), unless another
    /// thread is driving. Threaded: nothing to do.
    void poll() {
        if (threaded_) return;
        std::unique_lock lk(m_);
        if (driving_) return;
        driving_ = true;
        lk.unlock();
        io_.poll();
        lk.lock();
        driving_ = false;
        cv_.notify_all();
    }

    /// Lets the loop run out of work (bounded by `limit`), then stops it.
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
            io_.restart();
            io_.run_for(limit);
            io_.stop();
        }
    }

  private:
    /// The driving thread is the io_context's only runner (WriteHere): what its handlers
    /// submit is written here, and a write reads its reply here when it is already there.
    template <class Pred>
    void drive_until(Pred& done) {
        WriteHere here(true, WriteHere::Handlers::may_run_inline);
        for (;;) {
            {
                std::lock_guard lk(m_);
                if (done()) return;
            }
            io_.run_one();
        }
    }

    asio::io_context io_;
    asio::executor_work_guard<asio::io_context::executor_type> work_;
    std::mutex m_;
    std::condition_variable cv_;
    bool driving_ = false;
    bool threaded_;
    bool stopped_ = false;
    std::thread thread_;
};

}  // namespace folsom::python
