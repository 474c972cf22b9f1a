// The hot requests without pybind11's dispatch (fast_path.cpp), also bound as NativeClient's
// pybind11 methods.
#pragma once

#include "native_client.hpp"

#include <cstdint>
#include <optional>
#include <pybind11/pybind11.h>
#include <string>

namespace folsom::python {

namespace py = pybind11;

py::object py_get_value(NativeClient& c, py::handle key);
py::object py_a_get_value(NativeClient& c, py::handle key);
py::object py_get(NativeClient& c, py::handle key);
py::object py_get_pickled(NativeClient& c, py::handle key, py::handle dflt);
py::object py_get_multi_pickled(NativeClient& c, py::handle keys_obj);
py::object py_store(NativeClient& c, int mode, py::handle key, py::handle value,
                    std::int64_t exptime, std::uint32_t flags, std::uint64_t cas, bool noreply);
py::object py_delete(NativeClient& c, py::handle key, bool noreply);
py::object py_arith(NativeClient& c, bool incr, py::handle key, std::uint64_t delta, bool noreply,
                    std::optional<std::uint64_t> initial, std::int64_t exptime);
py::object py_get_multi_dict(NativeClient& c, py::handle keys_obj);
py::object py_a_get_multi(NativeClient& c, py::handle keys, bool cas);
py::object py_a_store(NativeClient& c, int mode, py::handle key, py::handle value,
                      std::int64_t exptime, std::uint32_t flags, std::uint64_t cas, bool noreply);
py::object py_a_delete(NativeClient& c, py::handle key, bool noreply);
py::object py_a_arith(NativeClient& c, bool incr, py::handle key, std::uint64_t delta, bool noreply,
                      std::optional<std::uint64_t> initial, std::int64_t exptime);

/// The fast function `name` (get_value, a_get_value, store, ...) as a plain METH_FASTCALL
/// function bound to the client `owner` holds.
py::object fast_function(py::object owner, const std::string& name);

}  // namespace folsom::python
