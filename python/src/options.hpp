// The options dict folsom/_common.py builds, as folsom::Options.
#pragma once

#include "folsom/options.hpp"

#include <optional>
#include <pybind11/pybind11.h>

namespace folsom::python {

namespace py = pybind11;

template <class T>
std::optional<T> opt(const py::dict& d, const char* name) {
    if (!d.contains(name)) return std::nullopt;
    py::object o = d[name];
    if (o.is_none()) return std::nullopt;
    return o.cast<T>();
}

/// Options from the dict folsom/_common.py's native_options() builds.
Options parse_options(const py::dict& d);

}  // namespace folsom::python
