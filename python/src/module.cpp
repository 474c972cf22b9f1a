// folsom._native, the pybind11 extension behind the folsom Python package (python/folsom): the
// module's definition. The client is native_client.hpp; its hot requests have plain C entry
// points (fast_path.hpp); the package gives the results pymemcache's meaning.
#include "folsom/config.hpp"
#include "folsom/protocol/key.hpp"
#include "folsom/routes.hpp"
#include "folsom/send_batch.hpp"

#include "errors.hpp"
#include "fast_path.hpp"
#include "native_client.hpp"
#include "operations.hpp"
#include "recipes_and_metrics.hpp"
#include "waiter.hpp"

#include <optional>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <string>
#include <vector>

namespace py = pybind11;

namespace folsom::python {
namespace {
/// The batch send_batch_begin() opened on this thread (at most one).
thread_local std::optional<SendBatch> thread_batch;
}  // namespace
}  // namespace folsom::python

PYBIND11_MODULE(_native, m) {
    using namespace folsom;
    using namespace folsom::python;
    m.doc() = "folsom-cpp's client, for the folsom Python package (use folsom.Client)";
    if (!add_waiter_type(m.ptr())) throw py::error_already_set();

    m.def(
        "_set_error_classes", [](py::list classes) { set_error_classes(classes); },
        "Registers the exception classes by folsom::errc value (slot 0: wrong type).");
    py::dict errcs;
    for (int i = 1; i < errc_count; ++i)
        errcs[py::str(errc_name(i))] = i;
    m.attr("ERRC") = errcs;
    m.attr("__version__") = FOLSOM_VERSION_STRING;  // folsom/config.hpp: the CMake project version
    m.attr("MAX_KEY_LENGTH") = protocol::max_key_length;
    // The version of the Python headers the extension was compiled against: an install check
    // (python/tools/check-pip-install) compares it with the interpreter that imports it, so that
    // a pyenv Python's build is known to have used its own headers, not Debian's.
    m.attr("PYTHON_HEADERS_VERSION") = PY_VERSION;
    // An AsyncClient opens a batch when it starts the first request of an event-loop turn and
    // ends it from a call_soon callback: the turn's requests go out in one write per
    // connection, with one wake-up of the I/O thread (folsom/send_batch.hpp).
    m.def(
        "send_batch_begin",
        [] {
            if (!thread_batch) thread_batch.emplace();
        },
        "Holds back this thread's requests until send_batch_end().");
    m.def(
        "send_batch_end", [] { thread_batch.reset(); },
        "Sends what this thread's batch holds and ends it.");

    py::class_<NativeClient>(m, "NativeClient")
        .def(py::init<const py::dict&, bool>(), py::arg("options"), py::arg("io_thread"))
        // ---- blocking ----
        .def("get",
             [](NativeClient& c, py::handle key, bool cas) {
                 return run_sync<std::optional<Value>>(c, GetOp{c.key(key), cas, {}});
             })
        .def("get_value", &py_get_value)  // Client.get's hot path without a serde
        .def("gat",
             [](NativeClient& c, py::handle key, std::int64_t exptime, bool cas) {
                 return run_sync<std::optional<Value>>(c, GetOp{c.key(key), cas, exptime});
             })
        .def("get_multi",
             [](NativeClient& c, py::handle keys, bool cas) {
                 auto k = c.keys(keys);
                 return run_sync<MultiGetResult>(c, GetMultiOp{&k, cas, {}});
             })
        .def("get_multi_dict", &py_get_multi_dict)
        .def("gat_multi",
             [](NativeClient& c, py::handle keys, std::int64_t exptime) {
                 auto k = c.keys(keys);
                 return run_sync<MultiGetResult>(c, GetMultiOp{&k, false, exptime});
             })
        .def("store", &py_store)
        .def("set_multi",
             [](NativeClient& c, py::handle items, std::int64_t exptime) {
                 auto it = items_of(c, items);
                 return run_sync<MultiWriteResult>(c, SetMultiOp{&it, exptime});
             })
        .def("delete", &py_delete)
        .def("delete_multi",
             [](NativeClient& c, py::handle keys) {
                 auto k = c.keys(keys);
                 return run_sync<MultiWriteResult>(c, KeysOp{&k, {}});
             })
        .def("touch",
             [](NativeClient& c, py::handle key, std::int64_t exptime, bool noreply) -> py::object {
                 return run_or_fire<Status>(c, TouchOp{c.key(key), exptime, noreply}, noreply);
             })
        .def("touch_multi",
             [](NativeClient& c, py::handle keys, std::int64_t exptime) {
                 auto k = c.keys(keys);
                 return run_sync<MultiWriteResult>(c, KeysOp{&k, exptime});
             })
        .def("arith", &py_arith)
        .def("flush_all",
             [](NativeClient& c, std::optional<std::int64_t> delay) {
                 return run_sync<std::vector<NodeResult<Status>>>(c, FlushOp{delay});
             })
        .def("stats",
             [](NativeClient& c, std::string group) {
                 return run_sync<std::vector<NodeResult<StatList>>>(c, StatsOp{std::move(group)});
             })
        .def("version",
             [](NativeClient& c) {
                 return run_sync<std::vector<NodeResult<std::string>>>(c, VersionOp{});
             })
        .def("get_or_fill", &py_get_or_fill)
        // ---- asynchronous: each returns a Waiter, which drain() resolves ----
        .def("a_get",
             [](NativeClient& c, py::handle key, bool cas) {
                 return run_async<std::optional<Value>>(c, GetOp{c.key(key), cas, {}});
             })
        .def("fast", &fast_function, py::arg("name"),
             "a hot request (get_value, a_get_value, store, ...) as a plain function bound to "
             "this client (no pybind11 dispatch)")
        .def("a_gat",
             [](NativeClient& c, py::handle key, std::int64_t exptime, bool cas) {
                 return run_async<std::optional<Value>>(c, GetOp{c.key(key), cas, exptime});
             })
        .def("a_get_multi", &py_a_get_multi)
        .def("a_store", &py_a_store)
        .def("a_set_multi",
             [](NativeClient& c, py::handle items, std::int64_t exptime) {
                 auto it = items_of(c, items);
                 return run_async<MultiWriteResult>(c, SetMultiOp{&it, exptime});
             })
        .def("a_delete", &py_a_delete)
        .def("a_delete_multi",
             [](NativeClient& c, py::handle keys) {
                 auto k = c.keys(keys);
                 return run_async<MultiWriteResult>(c, KeysOp{&k, {}});
             })
        .def("a_touch",
             [](NativeClient& c, py::handle key, std::int64_t exptime, bool noreply) {
                 return run_async<Status>(c, TouchOp{c.key(key), exptime, noreply});
             })
        .def("a_touch_multi",
             [](NativeClient& c, py::handle keys, std::int64_t exptime) {
                 auto k = c.keys(keys);
                 return run_async<MultiWriteResult>(c, KeysOp{&k, exptime});
             })
        .def("a_arith", &py_a_arith)
        .def("a_flush_all",
             [](NativeClient& c, std::optional<std::int64_t> delay) {
                 return run_async<std::vector<NodeResult<Status>>>(c, FlushOp{delay});
             })
        .def("a_stats",
             [](NativeClient& c, std::string group) {
                 return run_async<std::vector<NodeResult<StatList>>>(c, StatsOp{std::move(group)});
             })
        .def("a_version",
             [](NativeClient& c) {
                 return run_async<std::vector<NodeResult<std::string>>>(c, VersionOp{});
             })
        .def("event_fd", [](NativeClient& c) { return c.completions().fd(); })
        .def("drain", &NativeClient::drain, py::arg("from_reader") = false)
        .def("set_loop", &NativeClient::set_loop)
        .def("a_get_value", &py_a_get_value)  // AsyncClient.get's hot path without a serde
        .def("wakeups",
             [](NativeClient& c) {
                 return py::make_tuple(c.completions().wakeups(), c.completions().pushed());
             })
        // ---- lifecycle and introspection ----
        .def("close", &NativeClient::close)
        .def_property_readonly("closed", &NativeClient::closed)
        .def("outstanding", [](NativeClient& c) { return c.client().outstanding(); })
        .def("max_value_size", [](NativeClient& c) { return c.options().max_value_size; })
        .def("noreply_failures", &NativeClient::noreply_failures)
        .def("server_for",
             [](NativeClient& c, py::handle key) {
                 std::string_view k = c.key(key);
                 return c.client().server_name(c.client().server_for(k));
             })
        .def("servers",
             [](NativeClient& c) {
                 std::vector<std::string> s;
                 for (std::size_t i = 0; i < c.client().server_count(); ++i)
                     s.push_back(c.client().server_name(i));
                 return s;
             })
        .def("wait_connected",
             [](NativeClient& c, double timeout) {
                 c.check_open();
                 struct {
                     bool done = false;
                     std::error_code ec;
                 } st;
                 Loop& loop = c.loop();
                 c.client().wait_connected(ms_of(timeout), [&](std::error_code ec) {
                     loop.notify([&] {
                         st.ec = ec;
                         st.done = true;
                     });
                 });
                 {
                     py::gil_scoped_release nogil;
                     loop.wait([&] { return st.done; });
                 }
                 if (st.ec) raise_error(st.ec);
             })
        .def("route_stats",
             [](NativeClient& c) {
                 py::list out;
                 for (const RouteStats& r : c.client().route_stats()) {
                     py::dict d;
                     d["name"] = r.name;
                     d["type"] = std::string(route_type_name(r.type));
                     d["requests"] = r.requests;
                     d["failovers"] = r.failovers;
                     d["shadow_requests"] = r.shadow_requests;
                     d["shadow_errors"] = r.shadow_errors;
                     out.append(std::move(d));
                 }
                 return out;
             })
        .def("metrics", &metrics_dict)
        .def("prometheus", [](NativeClient& c) -> py::object {
            if (!c.metrics()) return py::none();
            return py::str(c.metrics()->prometheus_text());
        });
}
