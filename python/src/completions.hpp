// The asynchronous requests' side: one op per request (its Waiter, cancellation signal and
// result), and the completion queue between the I/O thread and the asyncio loop (an eventfd
// written only when the queue goes from empty to non-empty: one wake-up per batch).
#pragma once

#include "conversions.hpp"
#include "waiter.hpp"

#include <asio/cancellation_signal.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>
#include <pybind11/pybind11.h>
#include <sys/eventfd.h>
#include <system_error>
#include <unistd.h>
#include <utility>
#include <vector>

namespace folsom::python {

namespace py = pybind11;

class NativeClient;

/// One asynchronous request: its Waiter (a strong reference taken with the GIL, released by
/// drain() with the GIL), its cancellation signal, and its result once complete. Shared by the
/// handler (then the completion queue) and the Waiter, through an intrusive count: one
/// allocation per request, where a shared_ptr in a capsule took two.
struct AsyncOpBase : python::WaitedRequest {
    virtual ~AsyncOpBase() = default;
    /// The result as the Python value the Waiter is resolved with (GIL held).
    virtual py::object result() = 0;

    void add_ref() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
    void release() noexcept {
        if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }

    /// The Waiter's cancel(): the signal is emitted on the I/O thread, where the request
    /// installs and clears its slot.
    void cancel_request() noexcept override;
    void drop_waiter_reference() noexcept override { release(); }

    PyObject* waiter = nullptr;  // the Waiter its completion resolves (a strong reference)
    std::error_code error;
    asio::cancellation_signal signal;
    asio::io_context* io = nullptr;  // where the request runs (cancel_request()); set by async()
    std::atomic<int> refs{1};
};

/// An owning reference to an op (move-only; ref() takes another).
class OpRef {
  public:
    OpRef() = default;
    explicit OpRef(AsyncOpBase* op) noexcept : op_(op) {}  // adopts one reference
    OpRef(OpRef&& o) noexcept : op_(std::exchange(o.op_, nullptr)) {}
    OpRef& operator=(OpRef&& o) noexcept {
        if (this != &o) {
            reset();
            op_ = std::exchange(o.op_, nullptr);
        }
        return *this;
    }
    OpRef(const OpRef&) = delete;
    OpRef& operator=(const OpRef&) = delete;
    ~OpRef() { reset(); }

    OpRef ref() const noexcept {
        op_->add_ref();
        return OpRef(op_);
    }
    AsyncOpBase* get() const noexcept { return op_; }
    AsyncOpBase* operator->() const noexcept { return op_; }
    AsyncOpBase& operator*() const noexcept { return *op_; }
    AsyncOpBase* release() noexcept { return std::exchange(op_, nullptr); }
    void reset() noexcept {
        if (op_) std::exchange(op_, nullptr)->release();
    }

  private:
    AsyncOpBase* op_ = nullptr;
};

inline void AsyncOpBase::cancel_request() noexcept {
    add_ref();
    try {
        asio::post(*io, [op = OpRef(this)] { op->signal.emit(asio::cancellation_type::terminal); });
    } catch (...) {  // (out of memory: the request is left to complete on its own)
    }
}

/// The completion queue between the I/O thread and the asyncio loop.
class Completions {
  public:
    Completions() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
        if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
    }
    ~Completions() { ::close(fd_); }
    Completions(const Completions&) = delete;
    Completions& operator=(const Completions&) = delete;

    int fd() const noexcept { return fd_; }

    /// I/O thread: queues a finished op; wakes the loop only for the first of a batch. The
    /// counters move before the op is published (under the mutex take() also holds), so a
    /// completion the loop has delivered is always counted.
    void push(OpRef op) {
        bool first;
        {
            std::lock_guard lk(m_);
            pushed_.fetch_add(1, std::memory_order_relaxed);
            first = queue_.empty();
            if (first) wakeups_.fetch_add(1, std::memory_order_relaxed);
            queue_.push_back(std::move(op));
        }
        if (first) {
            const std::uint64_t one = 1;
            ssize_t n;
            do {
                n = ::write(fd_, &one, sizeof one);
            } while (n < 0 && errno == EINTR);
        }
    }

    /// Loop thread: clears the eventfd, then takes the whole queue into `out` (emptied first).
    /// The caller keeps `out` from one drain to the next and the queue keeps its own capacity,
    /// so a steady stream of batches allocates nothing (a fresh vector per batch would grow
    /// through reallocations and free them at once).
    void take(std::vector<OpRef>& out) {
        std::uint64_t count;
        while (::read(fd_, &count, sizeof count) < 0 && errno == EINTR) {
        }
        out.clear();
        std::lock_guard lk(m_);
        out.swap(queue_);
    }

    std::uint64_t wakeups() const noexcept { return wakeups_.load(std::memory_order_relaxed); }
    std::uint64_t pushed() const noexcept { return pushed_.load(std::memory_order_relaxed); }

  private:
    int fd_;
    std::mutex m_;
    std::vector<OpRef> queue_;
    std::atomic<std::uint64_t> wakeups_{0};
    std::atomic<std::uint64_t> pushed_{0};
};

template <class T>
struct AsyncOp final : AsyncOpBase {
    py::object result() override { return convert(std::move(value)); }
    T value{};
};

/// The completion handler of an asynchronous request (runs on the I/O thread, no GIL).
template <class T>
struct AsyncHandler {
    OpRef op;
    Completions* queue;
    template <class U>
    void operator()(std::error_code ec, U&& v) {
        op->error = ec;
        static_cast<AsyncOp<T>*>(op.get())->value = std::forward<U>(v);
        queue->push(std::move(op));
    }
};

}  // namespace folsom::python
