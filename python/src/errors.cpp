// folsom._native's errors (errors.hpp).
#include "errors.hpp"

#include <vector>

namespace folsom::python {

// Exception classes by errc value, registered by folsom/exceptions.py at import. Module
// globals that live as long as the interpreter (released by the module's atexit hook).
namespace {
std::vector<py::object>* error_classes = nullptr;
}  // namespace

void set_error_classes(const py::list& classes) {
    if (!error_classes) error_classes = new std::vector<py::object>();
    error_classes->clear();
    for (py::handle c : classes)
        error_classes->push_back(py::reinterpret_borrow<py::object>(c));
}

py::object error_class(int index) {
    if (error_classes && index >= 0 && index < static_cast<int>(error_classes->size()) &&
        (*error_classes)[static_cast<std::size_t>(index)])
        return (*error_classes)[static_cast<std::size_t>(index)];
    return py::reinterpret_borrow<py::object>(PyExc_RuntimeError);
}

int errc_index(std::error_code ec) {
    if (ec.category() == folsom::category() && ec.value() > 0 && ec.value() < errc_count)
        return ec.value();
    return static_cast<int>(errc::server_error);
}

std::string errc_name(int value) {
    switch (static_cast<errc>(value)) {
#define FOLSOM_ERRC_NAME(n) \
    case errc::n:           \
        return #n;
        FOLSOM_ERRC_NAME(not_connected)
        FOLSOM_ERRC_NAME(closed)
        FOLSOM_ERRC_NAME(overloaded)
        FOLSOM_ERRC_NAME(timeout)
        FOLSOM_ERRC_NAME(protocol_error)
        FOLSOM_ERRC_NAME(invalid_key)
        FOLSOM_ERRC_NAME(value_too_large)
        FOLSOM_ERRC_NAME(auth_failed)
        FOLSOM_ERRC_NAME(server_error)
        FOLSOM_ERRC_NAME(client_error)
        FOLSOM_ERRC_NAME(invalid_argument)
        FOLSOM_ERRC_NAME(resolve_failed)
        FOLSOM_ERRC_NAME(connect_failed)
        FOLSOM_ERRC_NAME(tls_error)
        FOLSOM_ERRC_NAME(unsupported)
        FOLSOM_ERRC_NAME(cancelled)
        FOLSOM_ERRC_NAME(connection_lost)
        FOLSOM_ERRC_NAME(decode_failed)
        FOLSOM_ERRC_NAME(fill_failed)
        FOLSOM_ERRC_NAME(no_sasl_mechanism)
        FOLSOM_ERRC_NAME(built_without_c_ares)
        FOLSOM_ERRC_NAME(built_without_zstd)
        FOLSOM_ERRC_NAME(built_without_lz4)
        FOLSOM_ERRC_NAME(built_without_zlib)
        FOLSOM_ERRC_NAME(built_without_nlohmann_json)
#undef FOLSOM_ERRC_NAME
    }
    return "unknown";
}

py::object make_exception(std::error_code ec, std::string_view context) {
    const int i = errc_index(ec);
    std::string msg = ec.message();
    if (!context.empty()) {
        msg += ": ";
        msg += context;
    }
    py::object e = error_class(i)(msg);
    try {
        e.attr("errc") = errc_name(i);
    } catch (py::error_already_set&) {  // a class that refuses attributes: keep the message
    }
    return e;
}

[[noreturn]] void raise_error(std::error_code ec, std::string_view context) {
    py::object e = make_exception(ec, context);
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(e.ptr())), e.ptr());
    throw py::error_already_set();
}

[[noreturn]] void raise_class(int index, const std::string& msg, const char* code) {
    py::object e = error_class(index)(msg);
    try {
        e.attr("errc") = code;
    } catch (py::error_already_set&) {
    }
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(e.ptr())), e.ptr());
    throw py::error_already_set();
}

std::string repr_of(py::handle h) {
    std::string r = py::repr(h).cast<std::string>();
    if (r.size() > 80) r = r.substr(0, 77) + "...";
    return r;
}

}  // namespace folsom::python
