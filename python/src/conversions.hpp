// Conversions between Python objects and folsom's values: keys and values in (checked, as
// views), results out (a value is (bytes, flags, cas), a Status its integer, a multi-key
// result a list), durations. Inline: the hot requests convert through them.
#pragma once

#include "folsom/cache_recipes.hpp"
#include "folsom/client.hpp"
#include "folsom/expiry.hpp"

#include "errors.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <pybind11/pybind11.h>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace folsom::python {

namespace py = pybind11;

/// The bytes of a str (UTF-8, cached by the str) or bytes key; anything else raises.
inline std::string_view key_bytes(py::handle h) {
    if (PyUnicode_Check(h.ptr())) {
        Py_ssize_t n = 0;
        const char* p = PyUnicode_AsUTF8AndSize(h.ptr(), &n);
        if (!p) throw py::error_already_set();
        return {p, static_cast<std::size_t>(n)};
    }
    if (PyBytes_Check(h.ptr()))
        return {PyBytes_AS_STRING(h.ptr()), static_cast<std::size_t>(PyBytes_GET_SIZE(h.ptr()))};
    raise_class(error_class_invalid_type,
                std::string("key must be str or bytes, not ") + Py_TYPE(h.ptr())->tp_name,
                "invalid_key");
}

/// The bytes of a value: bytes, bytearray, memoryview (any contiguous buffer) or str (UTF-8).
/// The view is valid while `h` lives; requests copy it before their initiation returns.
inline std::string_view value_bytes(py::handle h) {
    PyObject* o = h.ptr();
    if (PyBytes_Check(o))
        return {PyBytes_AS_STRING(o), static_cast<std::size_t>(PyBytes_GET_SIZE(o))};
    if (PyUnicode_Check(o)) {
        Py_ssize_t n = 0;
        const char* p = PyUnicode_AsUTF8AndSize(o, &n);
        if (!p) throw py::error_already_set();
        return {p, static_cast<std::size_t>(n)};
    }
    if (PyByteArray_Check(o))
        return {PyByteArray_AS_STRING(o), static_cast<std::size_t>(PyByteArray_GET_SIZE(o))};
    if (PyMemoryView_Check(o)) {
        Py_buffer* b = PyMemoryView_GET_BUFFER(o);
        if (PyBuffer_IsContiguous(b, 'C'))
            return {static_cast<const char*>(b->buf), static_cast<std::size_t>(b->len)};
    }
    raise_class(error_class_invalid_type,
                std::string("value must be bytes, bytearray, memoryview or str, not ") +
                    Py_TYPE(o)->tp_name + " (give the client a serde for other types)",
                "invalid_argument");
}

inline py::object value_tuple(Value&& v) {
    py::bytes data(v.data.data(), v.data.size());
    return py::make_tuple(std::move(data), v.flags, v.cas);
}

inline py::object to_py(std::optional<Value>&& v) {
    if (!v) return py::none();
    return value_tuple(std::move(*v));
}
/// A multi-get's value (a view into its result's buffer): copied into the bytes object.
inline py::object to_py(const std::optional<ValueRef>& v) {
    if (!v) return py::none();
    return py::make_tuple(py::bytes(v->data.data(), v->data.size()), v->flags, v->cas);
}

/// An expire as pymemcache and memcached read it: 0 never, negative already expired, up to 30
/// days a duration, beyond an absolute Unix time (Expiry::from_exptime passes memcached's
/// convention through; over 2^31-1 the request fails with invalid_argument, nothing sent).
inline Expiry ttl_of(std::int64_t seconds) {
    return Expiry::from_exptime(seconds);
}

inline std::chrono::milliseconds ms_of(double seconds) {
    if (seconds < 0) throw py::value_error("durations must not be negative");
    return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000.0 + 0.5));
}

inline py::object convert(std::optional<Value>&& v) {
    return to_py(std::move(v));
}
inline py::object convert(Status&& s) {
    return py::int_(static_cast<int>(s));
}
inline py::object convert(std::optional<std::uint64_t>&& v) {
    if (!v) return py::none();
    return py::int_(*v);
}
/// The errc of a multi-get's first unanswered key, or 0 when every key was answered.
inline int first_error_index(const MultiGetResult& r) {
    for (const auto& e : r.errors)
        if (e) return errc_index(e);
    return 0;
}
/// (values aligned with the keys: None or (bytes, flags, cas); errc of the first unanswered
/// key or 0).
inline py::object convert(MultiGetResult&& r) {
    py::list values(r.values.size());
    for (std::size_t i = 0; i < r.values.size(); ++i)
        PyList_SET_ITEM(values.ptr(), static_cast<Py_ssize_t>(i),
                        to_py(r.values[i]).release().ptr());
    return py::make_tuple(std::move(values), first_error_index(r));
}
/// [(errc or 0, status)] aligned with the keys.
inline py::object convert(MultiWriteResult&& r) {
    py::list out(r.results.size());
    for (std::size_t i = 0; i < r.results.size(); ++i) {
        const auto& w = r.results[i];
        PyList_SET_ITEM(
            out.ptr(), static_cast<Py_ssize_t>(i),
            py::make_tuple(w.error ? errc_index(w.error) : 0, static_cast<int>(w.status))
                .release()
                .ptr());
    }
    return out;
}
inline py::object node_value(Status s) {
    return py::int_(static_cast<int>(s));
}
inline py::object node_value(const std::string& s) {
    return py::bytes(s);
}
inline py::object node_value(const StatList& stats) {
    py::list l;
    for (const auto& [name, value] : stats)
        l.append(py::make_tuple(py::bytes(name), py::bytes(value)));
    return l;
}
/// [(server, errc or 0, value)]
template <class T>
inline py::object convert(std::vector<NodeResult<T>>&& nodes) {
    py::list l;
    for (const auto& n : nodes)
        l.append(py::make_tuple(n.server, n.error ? errc_index(n.error) : 0,
                                n.error ? py::none() : node_value(n.value)));
    return l;
}
/// (value or None, source, stored)
inline py::object convert(CacheResult&& r) {
    return py::make_tuple(to_py(std::move(r.value)), static_cast<int>(r.source), r.stored);
}

/// A get's value as the bytes alone (None on a miss): AsyncClient.get without a serde.
struct BytesOnly {
    std::optional<Value> v;
    BytesOnly& operator=(std::optional<Value>&& x) noexcept {
        v = std::move(x);
        return *this;
    }
};
/// A get's value as the bytes alone, or None on a miss.
inline py::object bytes_or_none(const std::optional<Value>& v) {
    if (!v) return py::none();
    return py::bytes(v->data.data(), v->data.size());
}
inline py::object convert(BytesOnly&& b) {
    return bytes_or_none(b.v);
}

}  // namespace folsom::python
