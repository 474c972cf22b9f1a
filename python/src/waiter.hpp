// folsom._native.Waiter: what `await client.get(key)` awaits (AsyncClient.get without a serde).
//
// An asyncio.Future is resolved with set_result(), which schedules the awaiting task's wake-up
// with loop.call_soon(): a Handle object made by Python code, queued, and run on a later turn
// of the loop, a large share of what asyncio itself spends on an awaited request. A Waiter is a future-like object (the protocol asyncio's Task accepts from any
// awaitable: _asyncio_future_blocking, get_loop, add_done_callback, result, cancel) whose
// completion, made from the loop's reader callback (drain), runs the task's wake-up at once, in
// the task's context, instead of scheduling it. Everything else keeps asyncio's order: a
// completion made from any other code (close(), say), a cancellation, and any callback added
// after completion are scheduled with call_soon, as a Future's are.
//
// Its result and exception are set once, by the loop's thread, with the GIL held. A Waiter is
// awaited by exactly one coroutine (AsyncClient.get's); it takes part in the cyclic GC (the
// awaiting task refers to it, and it to the task's wake-up until it completes).
#pragma once

#include <Python.h>

namespace folsom::python {

/// The request behind a Waiter, as the Waiter sees it (implemented by the native client's
/// asynchronous operation).
class WaitedRequest {
  public:
    /// Asks the request to stop: it still completes (with errc::cancelled unless its reply
    /// came first), and the Waiter, already cancelled, ignores that completion.
    virtual void cancel_request() noexcept = 0;
    /// The Waiter's reference to the request is released (the Waiter is being freed).
    virtual void drop_waiter_reference() noexcept = 0;

  protected:
    ~WaitedRequest() = default;
};

/// Adds the Waiter type to `module` (at import). Returns false with a Python error set.
bool add_waiter_type(PyObject* module);

/// A new pending Waiter of `loop` for `request` (the Waiter takes over one reference to it);
/// `keep_alive` (the native client) lives at least as long as the Waiter. Null with a Python
/// error set on failure (then the reference to `request` is dropped).
PyObject* new_waiter(PyObject* loop, WaitedRequest* request, PyObject* keep_alive);

/// True when `o` is a Waiter.
bool is_waiter(PyObject* o) noexcept;

/// Completes a Waiter still pending (a cancelled one is left as it is and false returned) with
/// `result`, or with the exception instance `exception` when it is not null. With `run_now`
/// its callbacks run at once, each in its context (the caller is the loop's reader callback,
/// not a task); otherwise they are scheduled with loop.call_soon. A callback that raises
/// KeyboardInterrupt or SystemExit leaves that exception set and returns -1 (the Waiter is
/// complete and every callback has run); other errors of the callbacks are reported through
/// the loop's exception handler. Returns 1 when it completed the Waiter, 0 when it was not
/// pending, -1 with a Python error set.
int complete_waiter(PyObject* waiter, PyObject* result, PyObject* exception, bool run_now);

}  // namespace folsom::python
