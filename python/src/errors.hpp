// folsom._native's errors: folsom::errc values raised as the exception classes the package
// registers (folsom/exceptions.py), indexed by errc value; slot 0 is a key or value of the
// wrong type.
#pragma once

#include "folsom/error.hpp"

#include <pybind11/pybind11.h>
#include <string>
#include <string_view>
#include <system_error>

namespace folsom::python {

namespace py = pybind11;

constexpr int errc_count = static_cast<int>(errc::built_without_nlohmann_json) + 1;
constexpr int error_class_invalid_type = 0;  // slot 0: a key or value of the wrong type

/// Registers the exception classes by errc value (folsom/exceptions.py, at import).
void set_error_classes(const py::list& classes);
/// The registered class of errc value `index` (RuntimeError before registration).
py::object error_class(int index);
/// The errc value of `ec`: its own in folsom's category, server_error for any other.
int errc_index(std::error_code ec);
/// folsom's name of an errc value ("timeout", "connection_lost", ...).
std::string errc_name(int value);
/// The exception object for `ec` (an instance of the registered class, with .errc set).
py::object make_exception(std::error_code ec, std::string_view context = {});
/// Raises make_exception(ec, context) as the Python error in flight.
[[noreturn]] void raise_error(std::error_code ec, std::string_view context = {});
/// Raises the class registered at `index` with `msg`, its .errc set to `code`.
[[noreturn]] void raise_class(int index, const std::string& msg, const char* code);
/// repr(h), cut to 80 characters (for error messages).
std::string repr_of(py::handle h);

}  // namespace folsom::python
