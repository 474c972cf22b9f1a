// folsom._native.Waiter (waiter.hpp): a future-like object whose completion from the loop's
// reader wakes the awaiting task at once.
#include "waiter.hpp"

#include <structmember.h>
#include <utility>

namespace folsom::python {
namespace {

enum class State : char { pending, done, cancelled };

struct Waiter {
    PyObject ob_base;      // (what PyObject_HEAD declares)
    PyObject* loop;        // the event loop (get_loop())
    PyObject* callback;    // the first done-callback (the awaiting task's wake-up), or null
    PyObject* context;     // its context
    PyObject* more;        // further (callback, context) tuples: a list, or null
    PyObject* result;      // once done
    PyObject* exception;   // once done with an error (an exception instance)
    PyObject* cancel_msg;  // cancel(msg)'s message, or null
    PyObject* keep_alive;  // the native client, alive as long as the request may be cancelled
    WaitedRequest* request;
    char blocking;  // _asyncio_future_blocking: set when yielded to the task, which clears it
    State state;
};

PyTypeObject* waiter_type = nullptr;
PyObject* cancelled_error = nullptr;      // asyncio.CancelledError
PyObject* invalid_state_error = nullptr;  // asyncio.InvalidStateError
PyObject* context_kwnames = nullptr;      // ("context",) for loop.call_soon
PyObject* call_soon_name = nullptr;
PyObject* exception_handler_name = nullptr;

Waiter* as_waiter(PyObject* o) noexcept {
    return reinterpret_cast<Waiter*>(o);
}

/// loop.call_soon(callback, waiter, context=context).
int schedule(Waiter* w, PyObject* callback, PyObject* context) {
    PyObject* args[4] = {w->loop, callback, reinterpret_cast<PyObject*>(w), context};
    PyObject* handle = PyObject_VectorcallMethod(
        call_soon_name, args, 3 | PY_VECTORCALL_ARGUMENTS_OFFSET, context_kwnames);
    if (!handle) return -1;
    Py_DECREF(handle);
    return 0;
}

/// Reports the error in flight through loop.call_exception_handler (as asyncio does for a
/// callback that raises), or as unraisable when that fails too.
void report(Waiter* w, PyObject* callback) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb && value) PyException_SetTraceback(value, tb);
    PyObject* ctx =
        Py_BuildValue("{s:s,s:O,s:O}", "message", "Exception in a folsom request's done-callback",
                      "exception", value ? value : Py_None, "callback", callback);
    PyObject* r = ctx ? PyObject_CallMethodOneArg(w->loop, exception_handler_name, ctx) : nullptr;
    Py_XDECREF(ctx);
    if (r) {
        Py_DECREF(r);
    } else {
        PyErr_WriteUnraisable(callback);
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
}

/// Runs callback(waiter) in `context`. KeyboardInterrupt and SystemExit go into `*fatal`
/// (the first one; later ones are reported); any other error is reported.
void run(Waiter* w, PyObject* callback, PyObject* context, PyObject* fatal[3]) {
    if (PyContext_Enter(context) < 0) {
        report(w, callback);
        return;
    }
    PyObject* r = PyObject_CallOneArg(callback, reinterpret_cast<PyObject*>(w));
    PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
    if (!r) PyErr_Fetch(&type, &value, &tb);
    if (PyContext_Exit(context) < 0) PyErr_WriteUnraisable(callback);
    if (r) {
        Py_DECREF(r);
        return;
    }
    const bool is_fatal = PyErr_GivenExceptionMatches(type, PyExc_KeyboardInterrupt) ||
                          PyErr_GivenExceptionMatches(type, PyExc_SystemExit);
    if (is_fatal && !fatal[0]) {
        fatal[0] = type;
        fatal[1] = value;
        fatal[2] = tb;
        return;
    }
    PyErr_Restore(type, value, tb);
    report(w, callback);
}

/// Hands the callbacks over (the Waiter is complete or cancelled): run at once or scheduled.
int fire(Waiter* w, bool run_now) {
    PyObject* callback = w->callback;
    PyObject* context = w->context;
    PyObject* more = w->more;
    w->callback = w->context = w->more = nullptr;
    PyObject* fatal[3] = {nullptr, nullptr, nullptr};
    auto one = [&](PyObject* cb, PyObject* ctx) {
        if (run_now) {
            run(w, cb, ctx, fatal);
        } else if (schedule(w, cb, ctx) < 0) {
            report(w, cb);
        }
    };
    if (callback) one(callback, context);
    if (more) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(more); ++i) {
            PyObject* t = PyList_GET_ITEM(more, i);
            one(PyTuple_GET_ITEM(t, 0), PyTuple_GET_ITEM(t, 1));
        }
    }
    Py_XDECREF(callback);
    Py_XDECREF(context);
    Py_XDECREF(more);
    if (fatal[0]) {
        PyErr_Restore(fatal[0], fatal[1], fatal[2]);
        return -1;
    }
    return 0;
}

/// Sets the exception the Waiter's outcome raises (result(), the await); false when it has a
/// result.
bool raise_outcome(Waiter* w) {
    if (w->state == State::cancelled) {
        PyObject* e = w->cancel_msg ? PyObject_CallOneArg(cancelled_error, w->cancel_msg)
                                    : PyObject_CallNoArgs(cancelled_error);
        if (e) {
            PyErr_SetObject(cancelled_error, e);
            Py_DECREF(e);
        }
        return true;
    }
    if (w->exception) {
        PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(w->exception)), w->exception);
        return true;
    }
    return false;
}

// ---- the type's slots ----

int waiter_traverse(PyObject* self, visitproc visit, void* arg) {
    Waiter* w = as_waiter(self);
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(w->loop);
    Py_VISIT(w->callback);
    Py_VISIT(w->context);
    Py_VISIT(w->more);
    Py_VISIT(w->result);
    Py_VISIT(w->exception);
    Py_VISIT(w->cancel_msg);
    Py_VISIT(w->keep_alive);
    return 0;
}

int waiter_clear(PyObject* self) {
    Waiter* w = as_waiter(self);
    Py_CLEAR(w->loop);
    Py_CLEAR(w->callback);
    Py_CLEAR(w->context);
    Py_CLEAR(w->more);
    Py_CLEAR(w->result);
    Py_CLEAR(w->exception);
    Py_CLEAR(w->cancel_msg);
    // keep_alive stays until the request reference is dropped (dealloc).
    return 0;
}

void waiter_dealloc(PyObject* self) {
    Waiter* w = as_waiter(self);
    PyTypeObject* type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    waiter_clear(self);
    if (w->request) std::exchange(w->request, nullptr)->drop_waiter_reference();
    Py_CLEAR(w->keep_alive);
    PyObject_GC_Del(self);
    Py_DECREF(type);
}

PyObject* waiter_self(PyObject* self) {
    return Py_NewRef(self);
}

/// The await: the Waiter itself while pending (for the task to wait on), then its outcome.
PySendResult waiter_send(PyObject* self, PyObject*, PyObject** out) {
    Waiter* w = as_waiter(self);
    if (w->state == State::pending) {
        w->blocking = 1;
        *out = Py_NewRef(self);
        return PYGEN_NEXT;
    }
    *out = nullptr;
    if (raise_outcome(w)) return PYGEN_ERROR;
    *out = Py_NewRef(w->result);
    return PYGEN_RETURN;
}

/// Raises StopIteration carrying `value`, as a generator's return does. CPython's helper for
/// this (_PyGen_SetStopIterationValue) left the public headers in 3.13; like it, a tuple or an
/// exception is wrapped in an instance first, since PyErr_SetObject would take a tuple for the
/// constructor's arguments and an exception for the exception to raise.
void set_stop_iteration_value(PyObject* value) {
    if (!PyTuple_Check(value) && !PyExceptionInstance_Check(value)) {
        PyErr_SetObject(PyExc_StopIteration, value);
        return;
    }
    PyObject* stop = PyObject_CallOneArg(PyExc_StopIteration, value);
    if (stop == nullptr) return;
    PyErr_SetObject(PyExc_StopIteration, stop);
    Py_DECREF(stop);
}

PyObject* waiter_next(PyObject* self) {
    PyObject* out;
    switch (waiter_send(self, Py_None, &out)) {
        case PYGEN_NEXT:
            return out;
        case PYGEN_RETURN:
            set_stop_iteration_value(out);
            Py_DECREF(out);
            return nullptr;
        default:
            return nullptr;
    }
}

// ---- the methods asyncio's Task and users call ----

PyObject* waiter_get_loop(PyObject* self, PyObject*) {
    return Py_NewRef(as_waiter(self)->loop);
}

PyObject* waiter_add_done_callback(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                                   PyObject* kwnames) {
    Waiter* w = as_waiter(self);
    if (nargs != 1) {
        PyErr_SetString(PyExc_TypeError, "add_done_callback(fn, *, context=None)");
        return nullptr;
    }
    PyObject* context = Py_None;
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; ++i) {
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), "context") != 0) {
            PyErr_SetString(PyExc_TypeError, "add_done_callback(fn, *, context=None)");
            return nullptr;
        }
        context = args[nargs + i];
    }
    PyObject* ctx = context == Py_None ? PyContext_CopyCurrent() : Py_NewRef(context);
    if (!ctx) return nullptr;
    int rc = 0;
    if (w->state != State::pending) {
        rc = schedule(w, args[0], ctx);
    } else if (!w->callback) {
        w->callback = Py_NewRef(args[0]);
        w->context = Py_NewRef(ctx);
    } else {
        if (!w->more) w->more = PyList_New(0);
        PyObject* t = w->more ? PyTuple_Pack(2, args[0], ctx) : nullptr;
        rc = t ? PyList_Append(w->more, t) : -1;
        Py_XDECREF(t);
    }
    Py_DECREF(ctx);
    if (rc < 0) return nullptr;
    Py_RETURN_NONE;
}

PyObject* waiter_remove_done_callback(PyObject* self, PyObject* fn) {
    Waiter* w = as_waiter(self);
    Py_ssize_t removed = 0;
    if (w->callback) {
        const int eq = PyObject_RichCompareBool(w->callback, fn, Py_EQ);
        if (eq < 0) return nullptr;
        if (eq) {
            Py_CLEAR(w->callback);
            Py_CLEAR(w->context);
            ++removed;
        }
    }
    if (w->more) {
        PyObject* kept = PyList_New(0);
        if (!kept) return nullptr;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(w->more); ++i) {
            PyObject* t = PyList_GET_ITEM(w->more, i);
            const int eq = PyObject_RichCompareBool(PyTuple_GET_ITEM(t, 0), fn, Py_EQ);
            if (eq < 0 || (!eq && PyList_Append(kept, t) < 0)) {
                Py_DECREF(kept);
                return nullptr;
            }
            removed += eq;
        }
        Py_SETREF(w->more, kept);
    }
    return PyLong_FromSsize_t(removed);
}

PyObject* waiter_result(PyObject* self, PyObject*) {
    Waiter* w = as_waiter(self);
    if (w->state == State::pending) {
        PyErr_SetString(invalid_state_error, "Result is not set.");
        return nullptr;
    }
    if (raise_outcome(w)) return nullptr;
    return Py_NewRef(w->result);
}

PyObject* waiter_exception(PyObject* self, PyObject*) {
    Waiter* w = as_waiter(self);
    if (w->state == State::pending) {
        PyErr_SetString(invalid_state_error, "Exception is not set.");
        return nullptr;
    }
    if (w->state == State::cancelled) {
        raise_outcome(w);
        return nullptr;
    }
    return Py_NewRef(w->exception ? w->exception : Py_None);
}

PyObject* waiter_done(PyObject* self, PyObject*) {
    return PyBool_FromLong(as_waiter(self)->state != State::pending);
}

PyObject* waiter_cancelled(PyObject* self, PyObject*) {
    return PyBool_FromLong(as_waiter(self)->state == State::cancelled);
}

/// cancel(msg=None): cancels the request and schedules the callbacks; False when done.
PyObject* waiter_cancel(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                        PyObject* kwnames) {
    Waiter* w = as_waiter(self);
    PyObject* msg = nargs > 0 ? args[0] : Py_None;
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs + nkw > 1 ||
        (nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "msg") != 0)) {
        PyErr_SetString(PyExc_TypeError, "cancel(msg=None)");
        return nullptr;
    }
    if (nkw == 1) msg = args[nargs];
    if (w->state != State::pending) Py_RETURN_FALSE;
    w->state = State::cancelled;
    if (msg != Py_None) w->cancel_msg = Py_NewRef(msg);
    if (w->request) w->request->cancel_request();
    if (fire(w, false) < 0) return nullptr;
    Py_RETURN_TRUE;
}

/// A METH_FASTCALL | METH_KEYWORDS function as the PyCFunction a PyMethodDef holds.
template <class F>
PyCFunction method(F* f) noexcept {
    return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

PyMethodDef waiter_methods[] = {
    {"get_loop", waiter_get_loop, METH_NOARGS, "The event loop the request belongs to."},
    {"add_done_callback", method(waiter_add_done_callback), METH_FASTCALL | METH_KEYWORDS,
     "As asyncio.Future.add_done_callback."},
    {"remove_done_callback", waiter_remove_done_callback, METH_O,
     "As asyncio.Future.remove_done_callback."},
    {"result", waiter_result, METH_NOARGS, "The reply, or the request's error raised."},
    {"exception", waiter_exception, METH_NOARGS, "The request's error, or None."},
    {"done", waiter_done, METH_NOARGS, "True once answered or cancelled."},
    {"cancelled", waiter_cancelled, METH_NOARGS, "True once cancelled."},
    {"cancel", method(waiter_cancel), METH_FASTCALL | METH_KEYWORDS,
     "Cancels the request (as asyncio.Future.cancel)."},
    {nullptr, nullptr, 0, nullptr},
};

PyMemberDef waiter_members[] = {
    {"_asyncio_future_blocking", T_BOOL, offsetof(Waiter, blocking), 0,
     "asyncio's protocol between a task and the future it waits on"},
    {nullptr, 0, 0, 0, nullptr},
};

PyType_Slot waiter_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(waiter_dealloc)},
    {Py_tp_traverse, reinterpret_cast<void*>(waiter_traverse)},
    {Py_tp_clear, reinterpret_cast<void*>(waiter_clear)},
    {Py_tp_iter, reinterpret_cast<void*>(waiter_self)},
    {Py_tp_iternext, reinterpret_cast<void*>(waiter_next)},
    {Py_am_await, reinterpret_cast<void*>(waiter_self)},
    {Py_am_send, reinterpret_cast<void*>(waiter_send)},
    {Py_tp_methods, waiter_methods},
    {Py_tp_members, waiter_members},
    {Py_tp_doc, const_cast<char*>("A folsom request awaited by asyncio (AsyncClient.get).")},
    {0, nullptr},
};

PyType_Spec waiter_spec = {
    "folsom._native.Waiter",
    sizeof(Waiter),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    waiter_slots,
};

}  // namespace

bool add_waiter_type(PyObject* module) {
    PyObject* exceptions = PyImport_ImportModule("asyncio.exceptions");
    if (!exceptions) return false;
    cancelled_error = PyObject_GetAttrString(exceptions, "CancelledError");
    invalid_state_error = PyObject_GetAttrString(exceptions, "InvalidStateError");
    Py_DECREF(exceptions);
    if (!cancelled_error || !invalid_state_error) return false;
    context_kwnames = Py_BuildValue("(s)", "context");
    call_soon_name = PyUnicode_InternFromString("call_soon");
    exception_handler_name = PyUnicode_InternFromString("call_exception_handler");
    if (!context_kwnames || !call_soon_name || !exception_handler_name) return false;
    waiter_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&waiter_spec));
    if (!waiter_type) return false;
    return PyModule_AddObjectRef(module, "Waiter", reinterpret_cast<PyObject*>(waiter_type)) == 0;
}

PyObject* new_waiter(PyObject* loop, WaitedRequest* request, PyObject* keep_alive) {
    Waiter* w = PyObject_GC_New(Waiter, waiter_type);
    if (!w) {
        request->drop_waiter_reference();
        return nullptr;
    }
    w->loop = Py_NewRef(loop);
    w->callback = w->context = w->more = nullptr;
    w->result = w->exception = w->cancel_msg = nullptr;
    w->keep_alive = Py_NewRef(keep_alive);
    w->request = request;
    w->blocking = 0;
    w->state = State::pending;
    PyObject_GC_Track(w);
    return reinterpret_cast<PyObject*>(w);
}

bool is_waiter(PyObject* o) noexcept {
    return Py_IS_TYPE(o, waiter_type);
}

int complete_waiter(PyObject* waiter, PyObject* result, PyObject* exception, bool run_now) {
    Waiter* w = as_waiter(waiter);
    if (w->state != State::pending) return 0;
    w->state = State::done;
    if (exception)
        w->exception = Py_NewRef(exception);
    else
        w->result = Py_NewRef(result);
    return fire(w, run_now) < 0 ? -1 : 1;
}

}  // namespace folsom::python
