// The hot requests as plain METH_FASTCALL functions (fast_path.hpp).
#include "fast_path.hpp"

#include "operations.hpp"

#include <pybind11/stl.h>
#include <type_traits>
#include <utility>

namespace folsom::python {

// ---- the hot paths without pybind11's dispatch --------------------------------------------
//
// Client.get and AsyncClient.get (without a serde) make one native call per request. Through
// pybind11 the call builds an argument tuple, dispatches over the overloads, looks up types and
// makes a bound method object before the request starts, several times what the request itself
// costs; a plain METH_FASTCALL function whose self is a capsule naming the client does none of
// that. The capsule keeps the client's Python object alive, so the function may outlive the
// Python client that made it.

namespace {

constexpr const char* fast_entry_name = "folsom.fast_entry";

struct FastEntry {
    PyObject* owner;  // the NativeClient's Python object (a strong reference)
    NativeClient* client;
};

/// Hands the exception in flight to Python (the translations pybind11 would make).
void set_python_error() noexcept {
    try {
        throw;
    } catch (py::error_already_set& e) {
        e.restore();
    } catch (const py::cast_error& e) {  // an argument of the wrong type: pybind11 says TypeError
        PyErr_SetString(PyExc_TypeError, e.what());
    } catch (py::builtin_exception& e) {
        e.set_error();
    } catch (const std::bad_alloc&) {
        PyErr_NoMemory();
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (...) {
        PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
    }
}

/// The argument `o` as the parameter type T (what pybind11 would convert it to).
template <class T>
T fast_arg(PyObject* o) {
    if constexpr (std::is_same_v<T, py::handle>)
        return py::handle(o);
    else
        return py::cast<T>(py::handle(o));
}

/// A METH_FASTCALL function over `F(NativeClient&, Args...)`: checks the argument count,
/// converts each argument, calls F and turns a C++ exception into the Python one.
template <auto F>
struct Fast;
template <class... Args, py::object (*F)(NativeClient&, Args...)>
struct Fast<F> {
    static PyObject* call(PyObject* self, PyObject* const* args, Py_ssize_t nargs) noexcept {
        auto* e = static_cast<FastEntry*>(PyCapsule_GetPointer(self, fast_entry_name));
        if (!e) return nullptr;
        if (nargs != static_cast<Py_ssize_t>(sizeof...(Args))) {
            PyErr_Format(PyExc_TypeError, "takes %d argument(s), %zd given",
                         static_cast<int>(sizeof...(Args)), nargs);
            return nullptr;
        }
        try {
            return [&]<std::size_t... I>(std::index_sequence<I...>) {
                return F(*e->client, fast_arg<std::decay_t<Args>>(args[I])...);
            }
            (std::index_sequence_for<Args...>{}).release().ptr();
        } catch (...) {
            set_python_error();
            return nullptr;
        }
    }
};

template <auto F>
constexpr PyCFunction fast_pointer() noexcept {
    return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&Fast<F>::call));
}

}  // namespace

// The operations with a fast form. Each is also a pybind11 method of NativeClient.

/// get_value(key) -> bytes or None (blocking): Client.get without a serde.
py::object py_get_value(NativeClient& c, py::handle key) {
    return c.get_value(key);
}
/// get(key) -> (bytes, flags, cas) or None (blocking): Client.get with a serde.
py::object py_get(NativeClient& c, py::handle key) {
    return run_sync<std::optional<Value>>(c, GetOp{c.key(key), false, {}});
}
/// a_get_value(key) -> Waiter of bytes or None: AsyncClient.get without a serde.
py::object py_a_get_value(NativeClient& c, py::handle key) {
    return run_async<BytesOnly>(c, GetOp{c.key(key), false, {}});
}
/// store(mode, key, value, exptime, flags, cas, noreply) -> Status (None when noreply).
py::object py_store(NativeClient& c, int mode, py::handle key, py::handle value,
                    std::int64_t exptime, std::uint32_t flags, std::uint64_t cas, bool noreply) {
    return run_or_fire<Status>(
        c, StoreOp{store_mode(mode), c.key(key), c.value(value), exptime, flags, cas, noreply},
        noreply);
}
/// delete(key, noreply) -> Status (None when noreply).
py::object py_delete(NativeClient& c, py::handle key, bool noreply) {
    return run_or_fire<Status>(c, DeleteOp{c.key(key), noreply}, noreply);
}

/// arith(incr, key, delta, noreply, initial, exptime) -> the new value or None.
py::object py_arith(NativeClient& c, bool incr, py::handle key, std::uint64_t delta, bool noreply,
                    std::optional<std::uint64_t> initial, std::int64_t exptime) {
    std::string_view k = c.key(key);
    if (noreply) {
        QuietArithOp op{incr, k, delta};
        c.fire([&](auto h) { op(c, std::move(h)); });
        return py::none();
    }
    return run_sync<std::optional<std::uint64_t>>(c, ArithOp{incr, k, delta, initial, exptime});
}

namespace {

/// ({key: value} of the hits, errc of the first unanswered key or 0) for the keys of the list
/// `keys_obj`: Client.get_many, each hit's value made by `value_of(const ValueRef&)` (the dict's
/// keys are the caller's key objects).
template <class ValueOf>
py::object get_multi_as_dict(NativeClient& c, py::handle keys_obj, ValueOf value_of) {
    py::list keys = py::reinterpret_borrow<py::object>(keys_obj).cast<py::list>();
    auto k = c.keys(keys);
    return c.sync<MultiGetResult>(
        [&](auto h) {
            GetMultiOp{&k, false, {}}(c, std::move(h));
        },
        [&](MultiGetResult&& r) {
            py::dict out;
            for (std::size_t i = 0; i < r.values.size() && i < k.size(); ++i) {
                if (!r.values[i]) continue;
                py::object v = value_of(*r.values[i]);
                if (PyDict_SetItem(out.ptr(),
                                   PyList_GET_ITEM(keys.ptr(), static_cast<Py_ssize_t>(i)),
                                   v.ptr()) != 0)
                    throw py::error_already_set();
            }
            return py::make_tuple(std::move(out), first_error_index(r));
        });
}

}  // namespace

/// get_multi_dict(keys) -> ({key: bytes} of the hits, errc of the first unanswered key or 0):
/// Client.get_many without a serde.
py::object py_get_multi_dict(NativeClient& c, py::handle keys_obj) {
    return get_multi_as_dict(c, keys_obj, [](const ValueRef& v) -> py::object {
        return py::bytes(v.data.data(), v.data.size());
    });
}
namespace {

/// A value as pymemcache's pickle serde (python_memcache_deserializer) reads it, by its flags:
/// 0 bytes, FLAG_TEXT (16) UTF-8 text, FLAG_INTEGER (2) / FLAG_LONG (4) an int, FLAG_PICKLE (1)
/// a pickle (None when it does not load, as pymemcache's). Other flags: the bytes.
py::object python_memcache_value(std::string_view d, std::uint32_t flags) {
    constexpr std::uint32_t flag_pickle = 1, flag_integer = 2, flag_long = 4, flag_text = 16;
    if (flags == 0) return py::bytes(d.data(), d.size());
    if (flags & flag_text) {
        PyObject* s = PyUnicode_DecodeUTF8(d.data(), static_cast<Py_ssize_t>(d.size()), nullptr);
        if (!s) throw py::error_already_set();
        return py::reinterpret_steal<py::object>(s);
    }
    if (flags & (flag_integer | flag_long)) {
        PyObject* n = PyLong_FromUnicodeObject(py::str(d.data(), d.size()).ptr(), 10);
        if (!n) throw py::error_already_set();
        return py::reinterpret_steal<py::object>(n);
    }
    if (flags & flag_pickle) {
        // pickle.loads, looked up once (a module global for the interpreter's life).
        static PyObject* loads = [] {
            py::object f = py::module_::import("pickle").attr("loads");
            return f.release().ptr();
        }();
        PyObject* b = PyBytes_FromStringAndSize(d.data(), static_cast<Py_ssize_t>(d.size()));
        if (!b) throw py::error_already_set();
        PyObject* v = PyObject_CallOneArg(loads, b);
        Py_DECREF(b);
        if (!v) {
            PyErr_Clear();
            return py::none();
        }
        return py::reinterpret_steal<py::object>(v);
    }
    return py::bytes(d.data(), d.size());
}

}  // namespace

/// get_multi_pickled(keys) -> ({key: value} of the hits, errc of the first unanswered key or 0),
/// each value read as pymemcache's pickle serde reads it: Client.get_many with that serde (or
/// folsom.serde's), without a Python call per key.
py::object py_get_multi_pickled(NativeClient& c, py::handle keys_obj) {
    return get_multi_as_dict(
        c, keys_obj, [](const ValueRef& v) { return python_memcache_value(v.data, v.flags); });
}
/// get_pickled(key) -> the value as pymemcache's pickle serde reads it, or `default`.
py::object py_get_pickled(NativeClient& c, py::handle key, py::handle dflt) {
    c.check_open();
    std::string_view k = c.key(key);
    return c.sync<std::optional<Value>>([&](auto h) { c.client().get(k, std::move(h)); },
                                        [&](std::optional<Value>&& v) -> py::object {
                                            if (!v) return py::reinterpret_borrow<py::object>(dflt);
                                            return python_memcache_value(v->data, v->flags);
                                        });
}
/// a_get_multi(keys, cas) -> Waiter: AsyncClient.get_many.
py::object py_a_get_multi(NativeClient& c, py::handle keys, bool cas) {
    auto k = c.keys(keys);
    return run_async<MultiGetResult>(c, GetMultiOp{&k, cas, {}});
}
/// a_store(mode, key, value, exptime, flags, cas, noreply) -> Waiter: AsyncClient.set...
py::object py_a_store(NativeClient& c, int mode, py::handle key, py::handle value,
                      std::int64_t exptime, std::uint32_t flags, std::uint64_t cas, bool noreply) {
    return run_async<Status>(
        c, StoreOp{store_mode(mode), c.key(key), c.value(value), exptime, flags, cas, noreply});
}
/// a_delete(key, noreply) -> Waiter: AsyncClient.delete.
py::object py_a_delete(NativeClient& c, py::handle key, bool noreply) {
    return run_async<Status>(c, DeleteOp{c.key(key), noreply});
}
/// a_arith(incr, key, delta, noreply, initial, exptime) -> Waiter: AsyncClient.incr/decr.
py::object py_a_arith(NativeClient& c, bool incr, py::handle key, std::uint64_t delta, bool noreply,
                      std::optional<std::uint64_t> initial, std::int64_t exptime) {
    std::string_view k = c.key(key);
    if (noreply) return run_async<Status>(c, QuietArithOp{incr, k, delta});
    return run_async<std::optional<std::uint64_t>>(c, ArithOp{incr, k, delta, initial, exptime});
}

namespace {
PyMethodDef fast_defs[] = {
    {"get_value", fast_pointer<&py_get_value>(), METH_FASTCALL, "Client.get's request"},
    {"a_get_value", fast_pointer<&py_a_get_value>(), METH_FASTCALL, "AsyncClient.get's request"},
    {"get", fast_pointer<&py_get>(), METH_FASTCALL, "Client.get's request with a serde"},
    {"get_pickled", fast_pointer<&py_get_pickled>(), METH_FASTCALL,
     "Client.get's request with pymemcache's pickle serde"},
    {"get_multi_pickled", fast_pointer<&py_get_multi_pickled>(), METH_FASTCALL,
     "Client.get_many's request with pymemcache's pickle serde"},
    {"store", fast_pointer<&py_store>(), METH_FASTCALL, "Client.set's (add's, ...) request"},
    {"delete", fast_pointer<&py_delete>(), METH_FASTCALL, "Client.delete's request"},
    {"arith", fast_pointer<&py_arith>(), METH_FASTCALL, "Client.incr's and decr's request"},
    {"get_multi_dict", fast_pointer<&py_get_multi_dict>(), METH_FASTCALL,
     "Client.get_many's request"},
    {"a_get_multi", fast_pointer<&py_a_get_multi>(), METH_FASTCALL,
     "AsyncClient.get_many's request"},
    {"a_store", fast_pointer<&py_a_store>(), METH_FASTCALL, "AsyncClient.set's (...) request"},
    {"a_delete", fast_pointer<&py_a_delete>(), METH_FASTCALL, "AsyncClient.delete's request"},
    {"a_arith", fast_pointer<&py_a_arith>(), METH_FASTCALL,
     "AsyncClient.incr's and decr's request"},
};
}  // namespace

py::object fast_function(py::object owner, const std::string& name) {
    PyMethodDef* def = nullptr;
    for (auto& d : fast_defs)
        if (name == d.ml_name) def = &d;
    if (!def) throw py::value_error("no fast function named " + name);
    auto* e = new FastEntry{owner.inc_ref().ptr(), &owner.cast<NativeClient&>()};
    PyObject* capsule = PyCapsule_New(e, fast_entry_name, [](PyObject* c) {
        auto* entry = static_cast<FastEntry*>(PyCapsule_GetPointer(c, fast_entry_name));
        Py_DECREF(entry->owner);
        delete entry;
    });
    if (!capsule) {
        Py_DECREF(e->owner);
        delete e;
        throw py::error_already_set();
    }
    PyObject* f = PyCFunction_New(def, capsule);
    Py_DECREF(capsule);  // the function holds it now
    if (!f) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(f);
}

}  // namespace folsom::python
