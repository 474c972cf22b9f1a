// get_or_fill with a Python fill function (get_or_fill.cpp) and the metrics as dicts
// (metrics.cpp).
#pragma once

#include "native_client.hpp"

#include <cstdint>
#include <pybind11/pybind11.h>

namespace folsom::python {

namespace py = pybind11;

/// get_or_fill with a Python fill function, run on the thread that called.
py::object py_get_or_fill(NativeClient& c, py::handle key_obj, py::object fill, std::int64_t ttl,
                          std::uint32_t flags, std::int64_t stub_ttl, bool wait_for_fill,
                          double wait_timeout);
/// The client's metrics as a dict (None without metrics=True).
py::object metrics_dict(NativeClient& c);

}  // namespace folsom::python
