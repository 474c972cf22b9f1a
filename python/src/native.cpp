// folsom._native: the Python binding's thin layer over folsom::Client.
//
// Every operation exists twice: blocking (the GIL released while the request is in flight) and
// asynchronous (a_* methods return a Waiter, waiter.hpp: an object asyncio awaits as a future,
// which cancels the request when cancelled). Asynchronous completions arrive on the I/O thread,
// which queues them and writes the client's eventfd only when the queue goes from empty to
// non-empty; the asyncio loop's reader then calls drain(), which resolves every queued Waiter
// and wakes its task: one wake-up per batch.
//
// Results are handed to Python as plain values (the pure-Python package gives them pymemcache's
// meaning): a value is (bytes, flags, cas), a Status its integer, a multi-key result a list.
// Errors are raised as the exception classes the package registers, indexed by folsom::errc.
// Bad input (key type, key content, value size, a closed client) raises before anything is sent.
#include "folsom/cache_recipes.hpp"
#include "folsom/client.hpp"
#include "folsom/detail/blocking_loop.hpp"
#include "folsom/error.hpp"
#include "folsom/metrics_registry.hpp"
#include "folsom/protocol/key.hpp"
#include "folsom/quiet_client.hpp"
#include "folsom/send_batch.hpp"

#include "waiter.hpp"

#include <asio/bind_cancellation_slot.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/post.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <string>
#include <string_view>
#include <sys/eventfd.h>
#include <system_error>
#include <type_traits>
#include <unistd.h>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace folsom::python {
namespace {

// ---- errors ------------------------------------------------------------------------------

constexpr int errc_count = static_cast<int>(errc::no_sasl_mechanism) + 1;
constexpr int error_class_invalid_type = 0;  // slot 0: a key or value of the wrong type

// Exception classes by errc value, registered by folsom/exceptions.py at import. Module
// globals that live as long as the interpreter (released by the module's atexit hook).
std::vector<py::object>* error_classes = nullptr;

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
#undef FOLSOM_ERRC_NAME
    }
    return "unknown";
}

/// The exception object for `ec` (an instance of the registered class, with .errc set).
py::object make_exception(std::error_code ec, std::string_view context = {}) {
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

[[noreturn]] void raise_error(std::error_code ec, std::string_view context = {}) {
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

// ---- keys and values ---------------------------------------------------------------------

/// The bytes of a str (UTF-8, cached by the str) or bytes key; anything else raises.
std::string_view key_bytes(py::handle h) {
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
std::string_view value_bytes(py::handle h) {
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

py::object value_tuple(Value&& v) {
    py::bytes data(v.data.data(), v.data.size());
    return py::make_tuple(std::move(data), v.flags, v.cas);
}

py::object to_py(std::optional<Value>&& v) {
    if (!v) return py::none();
    return value_tuple(std::move(*v));
}
/// A multi-get's value (a view into its result's buffer): copied into the bytes object.
py::object to_py(const std::optional<ValueRef>& v) {
    if (!v) return py::none();
    return py::make_tuple(py::bytes(v->data.data(), v->data.size()), v->flags, v->cas);
}

Ttl ttl_of(std::int64_t seconds) {
    return Ttl(seconds);
}

std::chrono::milliseconds ms_of(double seconds) {
    if (seconds < 0) throw py::value_error("durations must not be negative");
    return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000.0 + 0.5));
}

// ---- options -----------------------------------------------------------------------------

template <class T>
std::optional<T> opt(const py::dict& d, const char* name) {
    if (!d.contains(name)) return std::nullopt;
    py::object o = d[name];
    if (o.is_none()) return std::nullopt;
    return o.cast<T>();
}

std::string bytes_or_str(py::handle h) {
    if (PyBytes_Check(h.ptr())) return h.cast<std::string>();
    return py::str(h).cast<std::string>();
}

Options parse_options(const py::dict& d) {
    Options o;
    if (auto s = opt<std::vector<std::string>>(d, "servers"))
        o.servers = *s;  // assign, never append
    if (auto p = opt<std::string>(d, "protocol")) {
        if (*p == "ascii")
            o.protocol = Protocol::ascii;
        else if (*p == "binary")
            o.protocol = Protocol::binary;
        else if (*p == "meta")
            o.protocol = Protocol::meta;
        else
            throw py::value_error("protocol must be 'meta', 'binary' or 'ascii', not '" + *p + "'");
    }
    if (auto dist = opt<std::string>(d, "distribution")) {
        std::string why;
        const auto parsed = cluster::parse_distribution(*dist, &why);
        if (!parsed) throw py::value_error(why);
        o.distribution = *parsed;
    }
    if (auto v = opt<std::size_t>(d, "max_outstanding_requests")) o.max_outstanding_requests = *v;
    if (auto v = opt<std::size_t>(d, "max_value_size")) o.max_value_size = *v;
    if (auto v = opt<std::size_t>(d, "connections_per_server")) o.connections_per_server = *v;
    if (auto v = opt<double>(d, "connect_timeout")) o.connect_timeout = ms_of(*v);
    if (auto v = opt<double>(d, "request_timeout")) o.request_timeout = ms_of(*v);
    if (auto v = opt<double>(d, "reconnect_initial_delay")) o.reconnect_initial_delay = ms_of(*v);
    if (auto v = opt<double>(d, "reconnect_max_delay")) o.reconnect_max_delay = ms_of(*v);
    if (auto v = opt<std::size_t>(d, "scatter_threshold")) o.scatter_threshold = *v;
    if (auto v = opt<bool>(d, "tcp_nodelay")) o.tcp_nodelay = *v;
    if (d.contains("key_prefix") && !d["key_prefix"].is_none())
        o.key_prefix = bytes_or_str(d["key_prefix"]);
    if (auto v = opt<bool>(d, "hash_with_key_prefix")) o.hash_with_key_prefix = *v;
    if (auto v = opt<bool>(d, "retry_idempotent")) o.retry_idempotent = *v;
    if (auto v = opt<bool>(d, "failover")) o.failover.enabled = *v;
    if (auto v = opt<double>(d, "dead_timeout")) o.failover.dead_timeout = ms_of(*v);
    if (opt<bool>(d, "tls").value_or(false)) {
        TlsOptions t;
        if (auto v = opt<std::string>(d, "tls_ca_file")) t.ca_file = *v;
        if (auto v = opt<std::string>(d, "tls_cert_file")) t.cert_file = *v;
        if (auto v = opt<std::string>(d, "tls_key_file")) t.key_file = *v;
        if (auto v = opt<std::string>(d, "tls_server_name")) t.server_name = *v;
        if (auto v = opt<bool>(d, "tls_verify")) t.verify = *v;
        o.tls = std::move(t);
    }
    // mcrouter-shaped routes (docs/routing.md), as JSON text: the pools then name the servers.
    if (auto v = opt<std::string>(d, "routes")) {
        try {
            o.routes = RouteConfig::parse(*v);
        } catch (const RouteConfigError& e) {
            raise_error(e.code(), e.message());
        }
    }
    auto user = opt<std::string>(d, "sasl_username");
    auto password = opt<std::string>(d, "sasl_password");
    if (user || password) o.sasl = SaslCredentials{user.value_or(""), password.value_or("")};
    return o;
}

// ---- asynchronous completions ------------------------------------------------------------

/// The batch send_batch_begin() opened on this thread (at most one).
thread_local std::optional<SendBatch> thread_batch;

class NativeClient;

/// One asynchronous request: its Waiter (a strong reference taken with the GIL, released by
/// drain() with the GIL), its cancellation signal, and its result once complete. Shared by the
/// handler (then the completion queue) and the Waiter, through an intrusive count: one
/// allocation per request, where a shared_ptr in a capsule took two.
struct AsyncOpBase : python::WaitedRequest {
    virtual ~AsyncOpBase() = default;
    /// The result as the Python value the Waiter is resolved with (GIL held).
    virtual py::object result() = 0;

    void add_ref() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
    void release() noexcept {
        if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }

    /// The Waiter's cancel(): the signal is emitted on the I/O thread, where the request
    /// installs and clears its slot.
    void cancel_request() noexcept override;
    void drop_waiter_reference() noexcept override { release(); }

    PyObject* waiter = nullptr;  // the Waiter its completion resolves (a strong reference)
    std::error_code error;
    asio::cancellation_signal signal;
    asio::io_context* io = nullptr;  // where the request runs (cancel_request()); set by async()
    std::atomic<int> refs{1};
};

/// An owning reference to an op (move-only; ref() takes another).
class OpRef {
  public:
    OpRef() = default;
    explicit OpRef(AsyncOpBase* op) noexcept : op_(op) {}  // adopts one reference
    OpRef(OpRef&& o) noexcept : op_(std::exchange(o.op_, nullptr)) {}
    OpRef& operator=(OpRef&& o) noexcept {
        if (this != &o) {
            reset();
            op_ = std::exchange(o.op_, nullptr);
        }
        return *this;
    }
    OpRef(const OpRef&) = delete;
    OpRef& operator=(const OpRef&) = delete;
    ~OpRef() { reset(); }

    OpRef ref() const noexcept {
        op_->add_ref();
        return OpRef(op_);
    }
    AsyncOpBase* get() const noexcept { return op_; }
    AsyncOpBase* operator->() const noexcept { return op_; }
    AsyncOpBase& operator*() const noexcept { return *op_; }
    AsyncOpBase* release() noexcept { return std::exchange(op_, nullptr); }
    void reset() noexcept {
        if (op_) std::exchange(op_, nullptr)->release();
    }

  private:
    AsyncOpBase* op_ = nullptr;
};

void AsyncOpBase::cancel_request() noexcept {
    add_ref();
    try {
        asio::post(*io, [op = OpRef(this)] { op->signal.emit(asio::cancellation_type::terminal); });
    } catch (...) {  // (out of memory: the request is left to complete on its own)
    }
}

/// The completion queue between the I/O thread and the asyncio loop.
class Completions {
  public:
    Completions() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
        if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
    }
    ~Completions() { ::close(fd_); }
    Completions(const Completions&) = delete;
    Completions& operator=(const Completions&) = delete;

    int fd() const noexcept { return fd_; }

    /// I/O thread: queues a finished op; wakes the loop only for the first of a batch. The
    /// counters move before the op is published (under the mutex take() also holds), so a
    /// completion the loop has delivered is always counted.
    void push(OpRef op) {
        bool first;
        {
            std::lock_guard lk(m_);
            pushed_.fetch_add(1, std::memory_order_relaxed);
            first = queue_.empty();
            if (first) wakeups_.fetch_add(1, std::memory_order_relaxed);
            queue_.push_back(std::move(op));
        }
        if (first) {
            const std::uint64_t one = 1;
            ssize_t n;
            do {
                n = ::write(fd_, &one, sizeof one);
            } while (n < 0 && errno == EINTR);
        }
    }

    /// Loop thread: clears the eventfd, then takes the whole queue into `out` (emptied first).
    /// The caller keeps `out` from one drain to the next and the queue keeps its own capacity,
    /// so a steady stream of batches allocates nothing: a fresh vector per batch grew through
    /// ten reallocations per thousand completions and freed them at once.
    void take(std::vector<OpRef>& out) {
        std::uint64_t count;
        while (::read(fd_, &count, sizeof count) < 0 && errno == EINTR) {
        }
        out.clear();
        std::lock_guard lk(m_);
        out.swap(queue_);
    }

    std::uint64_t wakeups() const noexcept { return wakeups_.load(std::memory_order_relaxed); }
    std::uint64_t pushed() const noexcept { return pushed_.load(std::memory_order_relaxed); }

  private:
    int fd_;
    std::mutex m_;
    std::vector<OpRef> queue_;
    std::atomic<std::uint64_t> wakeups_{0};
    std::atomic<std::uint64_t> pushed_{0};
};

// ---- result conversions ------------------------------------------------------------------

py::object convert(std::optional<Value>&& v) {
    return to_py(std::move(v));
}
py::object convert(Status&& s) {
    return py::int_(static_cast<int>(s));
}
py::object convert(std::optional<std::uint64_t>&& v) {
    if (!v) return py::none();
    return py::int_(*v);
}
/// (values aligned with the keys: None or (bytes, flags, cas); errc of the first unanswered
/// key or 0).
py::object convert(MultiGetResult&& r) {
    py::list values(r.values.size());
    for (std::size_t i = 0; i < r.values.size(); ++i)
        PyList_SET_ITEM(values.ptr(), static_cast<Py_ssize_t>(i),
                        to_py(r.values[i]).release().ptr());
    int first_error = 0;
    for (const auto& e : r.errors)
        if (e) {
            first_error = errc_index(e);
            break;
        }
    return py::make_tuple(std::move(values), first_error);
}
/// [(errc or 0, status)] aligned with the keys.
py::object convert(MultiWriteResult&& r) {
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
py::object node_value(Status s) {
    return py::int_(static_cast<int>(s));
}
py::object node_value(const std::string& s) {
    return py::bytes(s);
}
py::object node_value(const StatList& stats) {
    py::list l;
    for (const auto& [name, value] : stats)
        l.append(py::make_tuple(py::bytes(name), py::bytes(value)));
    return l;
}
/// [(server, errc or 0, value)]
template <class T>
py::object convert(std::vector<NodeResult<T>>&& nodes) {
    py::list l;
    for (const auto& n : nodes)
        l.append(py::make_tuple(n.server, n.error ? errc_index(n.error) : 0,
                                n.error ? py::none() : node_value(n.value)));
    return l;
}
/// (value or None, source, stored)
py::object convert(CacheResult&& r) {
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
py::object convert(BytesOnly&& b) {
    if (!b.v) return py::none();
    return py::bytes(b.v->data.data(), b.v->data.size());
}

template <class T>
struct AsyncOp final : AsyncOpBase {
    py::object result() override { return convert(std::move(value)); }
    T value{};
};

/// The completion handler of an asynchronous request (runs on the I/O thread, no GIL).
template <class T>
struct AsyncHandler {
    OpRef op;
    Completions* queue;
    template <class U>
    void operator()(std::error_code ec, U&& v) {
        op->error = ec;
        static_cast<AsyncOp<T>*>(op.get())->value = std::forward<U>(v);
        queue->push(std::move(op));
    }
};

// The blocking requests' loop (caller-driven by default, or an I/O thread of its own), the
// result slot a waiting thread's frame owns, and the handler that fills it.
using Loop = folsom::detail::BlockingLoop;
template <class T>
using Slot = folsom::detail::WaitSlot<T>;
template <class T>
using SyncHandler = folsom::detail::WaitHandler<T>;

// ---- the client --------------------------------------------------------------------------

class NativeClient {
  public:
    NativeClient(const py::dict& options, bool io_thread)
        : options_(parse_options(options)), loop_(io_thread) {
        if (opt<bool>(options, "metrics").value_or(false)) {
            metrics_ = std::make_shared<MetricsRegistry>();
            options_.metrics = metrics_;
        }
        try {
            client_ = Client::connect(loop_.io().get_executor(), options_);
        } catch (const std::system_error& e) {
            raise_error(e.code(), e.what());
        }
        quiet_.emplace(client_);
    }
    ~NativeClient() {
        if (!closed_) {
            closed_ = true;
            client_.shutdown();
        }
        quiet_.reset();
        client_ = Client();
        {
            py::gil_scoped_release nogil;
            loop_.stop();
        }
        // Waiters still queued (their loop never drained them): release them now, GIL held.
        if (completions_) {
            completions_->take(drained_);
            for (auto& op : drained_)
                release_waiter(*op);
            drained_.clear();
        }
    }
    NativeClient(const NativeClient&) = delete;
    NativeClient& operator=(const NativeClient&) = delete;

    // ---- input checks: raise before anything is sent ----

    void check_open() const {
        if (closed_) raise_error(make_error_code(errc::closed), "the client is closed");
    }

    std::string_view key(py::handle h) const {
        std::string_view k = key_bytes(h);
        if (protocol::validate_key(k) ||
            options_.key_prefix.size() + k.size() > protocol::max_key_length) {
            const char* why = k.empty() ? "empty key"
                              : options_.key_prefix.size() + k.size() > protocol::max_key_length
                                  ? "key too long"
                                  : "key holds a space or control character";
            raise_error(make_error_code(errc::invalid_key), std::string(why) + ": " + repr_of(h));
        }
        return k;
    }

    std::string_view value(py::handle h) const {
        std::string_view v = value_bytes(h);
        if (v.size() > options_.max_value_size)
            raise_error(make_error_code(errc::value_too_large),
                        std::to_string(v.size()) + " bytes, over max_value_size " +
                            std::to_string(options_.max_value_size));
        return v;
    }

    std::vector<std::string_view> keys(py::handle seq) const {
        std::vector<std::string_view> out;
        py::sequence s = py::reinterpret_borrow<py::sequence>(seq);
        out.reserve(s.size());
        for (py::handle k : s)
            out.push_back(key(k));
        return out;
    }

    // ---- blocking and asynchronous forms ----

    template <class T, class Start>
    py::object sync(Start&& start) {
        check_open();
        Slot<T> slot;
        const bool lead = loop_.start([&] { start(SyncHandler<T>{&slot, &loop_}); });
        {
            py::gil_scoped_release nogil;
            loop_.wait([&] { return slot.done; }, lead);
        }
        if (slot.error) raise_error(slot.error);
        return convert(std::move(slot.value));
    }

    /// Starts an asynchronous request and returns the Waiter (waiter.hpp) of the bound loop
    /// (set_loop()) that its completion resolves; cancelling the Waiter cancels the request.
    template <class T, class Start>
    py::object async(Start&& start) {
        check_open();
        if (!loop_.threaded())
            throw std::logic_error("asynchronous requests need a client with an I/O thread");
        if (!event_loop_ || !self_) throw std::logic_error("no event loop bound (set_loop)");
        Completions& q = completions();
        OpRef op(new AsyncOp<T>());
        op->io = &loop_.io();
        auto slot = op->signal.slot();
        PyObject* w = python::new_waiter(event_loop_.ptr(), op.ref().release(), self_);
        if (!w) throw py::error_already_set();
        py::object waiter = py::reinterpret_steal<py::object>(w);
        op->waiter = Py_NewRef(w);
        start(asio::bind_cancellation_slot(slot, AsyncHandler<T>{std::move(op), &q}));
        return waiter;
    }

    /// The event loop Waiters belong to, and the client's own Python object (which a Waiter
    /// keeps alive while it may cancel its request).
    void set_loop(py::object loop, py::handle self) {
        event_loop_ = std::move(loop);
        self_ = self.ptr();
    }

    /// The value of `key` as bytes (None on a miss): Client.get without a serde.
    py::object get_value(py::handle key) {
        check_open();
        std::string_view k = this->key(key);
        Slot<std::optional<Value>> slot;
        const bool lead = loop_.start([&] {
            client_.get(k, SyncHandler<std::optional<Value>>{&slot, &loop_});
        });
        {
            py::gil_scoped_release nogil;
            loop_.wait([&] { return slot.done; }, lead);
        }
        if (slot.error) raise_error(slot.error);
        if (!slot.value) return py::none();
        return py::bytes(slot.value->data.data(), slot.value->data.size());
    }

    /// Fire and forget (noreply): a failure the server reports is counted, not raised.
    template <class Start>
    void fire(Start&& start) {
        check_open();
        start(Discard{this});
        // A caller-driven loop sends what is queued now; every so often it also waits for the
        // replies of earlier quiet writes, so that a long run of them stays under
        // max_outstanding_requests instead of failing with overloaded.
        if (!loop_.threaded()) {
            loop_.poll();
            const std::size_t limit = options_.max_outstanding_requests / 2;
            if (client_.outstanding() > limit) {
                py::gil_scoped_release nogil;
                loop_.wait([&] { return client_.outstanding() <= limit; });
            }
        }
    }

    // ---- lifecycle ----

    void close() {
        if (closed_) return;
        closed_ = true;
        client_.shutdown();
        py::gil_scoped_release nogil;
        // Every request completes (with errc::closed at worst); wait for them, bounded.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (client_.outstanding() > 0 && std::chrono::steady_clock::now() < deadline) {
            if (loop_.threaded())
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            else
                loop_.poll();
        }
    }
    bool closed() const noexcept { return closed_; }

    Completions& completions() {
        if (!completions_) completions_ = std::make_unique<Completions>();
        return *completions_;
    }

    /// Resolves every queued Waiter (GIL held, on the asyncio loop's thread). Returns how
    /// many completions it handled. `from_reader`: called as the loop's reader callback, not
    /// from a task, so that the awaiting tasks are woken at once instead of on a later turn.
    std::size_t drain(bool from_reader = false) {
        if (!completions_) return 0;
        // The batch vector is borrowed from the member (its capacity reused from batch to
        // batch), so that a drain() reentered from Python code finds its own.
        std::vector<OpRef> ops;
        ops.swap(drained_);
        completions_->take(ops);
        PyObject* fatal[3] = {nullptr, nullptr, nullptr};  // a callback's KeyboardInterrupt
        for (auto& op : ops) {
            if (complete(op->waiter, *op, from_reader) < 0) {
                if (!fatal[0])
                    PyErr_Fetch(&fatal[0], &fatal[1], &fatal[2]);
                else
                    PyErr_WriteUnraisable(op->waiter);
            }
            release_waiter(*op);
        }
        const std::size_t n = ops.size();
        ops.clear();  // the ops go; the vector's capacity stays for the next batch
        if (ops.capacity() > drained_.capacity()) drained_.swap(ops);
        if (fatal[0]) {  // every completion was delivered: now the interrupt goes on
            PyErr_Restore(fatal[0], fatal[1], fatal[2]);
            throw py::error_already_set();
        }
        return n;
    }

    /// Completes a Waiter with its op's outcome: 1 done, 0 it was cancelled, -1 a callback
    /// raised KeyboardInterrupt or SystemExit (set).
    static int complete(PyObject* waiter, AsyncOpBase& op, bool run_now) {
        try {
            if (op.error) {
                py::object e = make_exception(op.error);
                return python::complete_waiter(waiter, nullptr, e.ptr(), run_now);
            }
            py::object r = op.result();
            return python::complete_waiter(waiter, r.ptr(), nullptr, run_now);
        } catch (py::error_already_set& e) {  // a conversion failure: the Waiter raises it
            return python::complete_waiter(waiter, nullptr, e.value().ptr(), run_now);
        }
    }

    static void release_waiter(AsyncOpBase& op) {
        if (op.waiter) {
            Py_DECREF(op.waiter);
            op.waiter = nullptr;
        }
    }

    // ---- operations: each starts its request with any handler ----

    Client& client() noexcept { return client_; }
    QuietClient& quiet() noexcept { return *quiet_; }
    const Options& options() const noexcept { return options_; }
    Loop& loop() noexcept { return loop_; }
    std::size_t noreply_failures() {
        std::size_t n = 0;
        loop_.notify([&] { n = noreply_failures_; });
        return n;
    }
    MetricsRegistry* metrics() const noexcept { return metrics_.get(); }

  private:
    /// The handler of a noreply write: counts an error or a refusal (not_stored, exists,
    /// not_found: what meta and binary report of a quiet write), wakes waiters on outstanding().
    struct Discard {
        NativeClient* c;
        template <class U>
        void operator()(std::error_code ec, U&& v) {
            bool failed = static_cast<bool>(ec);
            if constexpr (std::is_same_v<std::decay_t<U>, Status>)
                failed = failed || !(v == Status::stored || v == Status::deleted ||
                                     v == Status::touched || v == Status::ok || v == Status::sent);
            c->loop_.notify([&] {
                if (failed) ++c->noreply_failures_;
            });
        }
    };

    Options options_;
    Loop loop_;
    std::shared_ptr<MetricsRegistry> metrics_;
    Client client_;
    std::optional<QuietClient> quiet_;
    std::unique_ptr<Completions> completions_;
    std::vector<OpRef> drained_;  // drain()'s batch (loop thread, GIL held)
    py::object event_loop_;       // the loop Waiters belong to (set_loop)
    PyObject* self_ = nullptr;    // this client's Python object (borrowed: it owns this)
    bool closed_ = false;
    std::size_t noreply_failures_ = 0;  // under the loop's mutex
};

// ---- operations shared by the blocking and asynchronous forms ----------------------------

StoreMode store_mode(int mode) {
    if (mode < 0 || mode > static_cast<int>(StoreMode::cas))
        throw py::value_error("store mode out of range");
    return static_cast<StoreMode>(mode);
}

// Each op is a callable (NativeClient&, handler) built from already-checked arguments.
struct GetOp {
    std::string_view key;
    bool cas;
    std::optional<std::int64_t> touch;
    template <class H>
    void operator()(NativeClient& c, H&& h) const {
        if (touch) {
            if (cas)
                c.client().gats(key, ttl_of(*touch), std::forward<H>(h));
            else
                c.client().gat(key, ttl_of(*touch), std::forward<H>(h));
        } else if (cas) {
            c.client().gets(key, std::forward<H>(h));
        } else {
            c.client().get(key, std::forward<H>(h));
        }
    }
};

struct GetMultiOp {
    const std::vector<std::string_view>* keys;
    bool cas;
    std::optional<std::int64_t> touch;
    template <class H>
    void operator()(NativeClient& c, H&& h) const {
        std::span<const std::string_view> k(*keys);
        if (touch)
            c.client().gat_multi(k, ttl_of(*touch), std::forward<H>(h));
        else if (cas)
            c.client().gets_multi(k, std::forward<H>(h));
        else
            c.client().get_multi(k, std::forward<H>(h));
    }
};

struct StoreOp {
    StoreMode mode;
    std::string_view key;
    std::string_view value;
    std::int64_t exptime;
    std::uint32_t flags;
    std::uint64_t cas;
    bool quiet;
    template <class H>
    void operator()(NativeClient& c, H&& h) const {
        if (quiet)
            c.quiet().store(mode, key, Bytes(value), ttl_of(exptime), {flags, cas},
                            std::forward<H>(h));
        else
            c.client().store(mode, key, Bytes(value), ttl_of(exptime), {flags, cas},
                             std::forward<H>(h));
    }
};

struct SetMultiOp {
    const std::vector<KeyValue>* items;
    std::int64_t exptime;
    template <class H>
    void operator()(NativeClient& c, H&& h) const {
        c.client().set_multi(std::span<const KeyValue>(*items), ttl_of(exptime),
                             std::forward<H>(h));
    }
};

struct DeleteOp {
    std::string_view key;
    bool quiet;
    template <class H>
    void operator()(NativeClient& c, H&& h) const {
        if (quiet)
            c.quiet().del(key, std::forward<H>(h));
        else
            c.client().del(key, std::forward<H>(h));
    }
};

struct KeysOp {  // delete_multi, touch_multi
    const std::vector<std::string_view>* keys;
    std::optional<std::int64_t> touch;
    template <class H>
    void operator()(NativeClient& c, H&& h) const {
        std::span<const std::string_view> k(*keys);
        if (touch)
            c.client().touch_multi(k, ttl_of(*touch), std::forward<H>(h));
        else
            c.client().delete_multi(k, std::forward<H>(h));
    }
};

struct TouchOp {
    std::string_view key;
    std::int64_t exptime;
    bool quiet;
    template <class H>
    void operator()(NativeClient& c, H&& h) const {
        if (quiet)
            c.quiet().touch(key, ttl_of(exptime), std::forward<H>(h));
        else
            c.client().touch(key, ttl_of(exptime), std::forward<H>(h));
    }
};

struct ArithOp {
    bool incr;
    std::string_view key;
    std::uint64_t delta;
    std::optional<std::uint64_t> initial;
    std::int64_t exptime;
    template <class H>
    void operator()(NativeClient& c, H&& h) const {
        if (initial) {
            if (incr)
                c.client().incr(key, delta, *initial, ttl_of(exptime), std::forward<H>(h));
            else
                c.client().decr(key, delta, *initial, ttl_of(exptime), std::forward<H>(h));
        } else if (incr) {
            c.client().incr(key, delta, std::forward<H>(h));
        } else {
            c.client().decr(key, delta, std::forward<H>(h));
        }
    }
};

struct QuietArithOp {
    bool incr;
    std::string_view key;
    std::uint64_t delta;
    template <class H>
    void operator()(NativeClient& c, H&& h) const {
        if (incr)
            c.quiet().incr(key, delta, std::forward<H>(h));
        else
            c.quiet().decr(key, delta, std::forward<H>(h));
    }
};

struct FlushOp {
    std::optional<std::int64_t> delay;
    template <class H>
    void operator()(NativeClient& c, H&& h) const {
        std::optional<std::chrono::seconds> d;
        if (delay) d = std::chrono::seconds(*delay);
        c.client().flush_all(d, std::forward<H>(h));
    }
};

struct StatsOp {
    std::string group;
    template <class H>
    void operator()(NativeClient& c, H&& h) const {
        c.client().stats(group, std::forward<H>(h));
    }
};

struct VersionOp {
    template <class H>
    void operator()(NativeClient& c, H&& h) const {
        c.client().version(std::forward<H>(h));
    }
};

template <class T, class Op>
py::object run_sync(NativeClient& c, Op op) {
    return c.sync<T>([&](auto h) { op(c, std::move(h)); });
}
template <class T, class Op>
py::object run_async(NativeClient& c, Op op) {
    return c.async<T>([&](auto h) { op(c, std::move(h)); });
}

// ---- the hot paths without pybind11's dispatch --------------------------------------------
//
// Client.get and AsyncClient.get (without a serde) make one native call per request. Through
// pybind11 the call costs ~1,200 instructions before the request starts (argument tuple,
// overload dispatch, type lookups, a bound method object per call); a plain METH_FASTCALL
// function whose self is a capsule naming the client costs ~100. The capsule keeps the
// client's Python object alive, so the function may outlive the Python client that made it.

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

// The operations with a fast form. Each is also a pybind11 method of NativeClient.

/// get_value(key) -> bytes or None (blocking): Client.get without a serde.
py::object py_get_value(NativeClient& c, py::handle key) {
    return c.get_value(key);
}
/// a_get_value(key) -> Waiter of bytes or None: AsyncClient.get without a serde.
py::object py_a_get_value(NativeClient& c, py::handle key) {
    return run_async<BytesOnly>(c, GetOp{c.key(key), false, {}});
}
/// store(mode, key, value, exptime, flags, cas, noreply) -> Status (None when noreply).
py::object py_store(NativeClient& c, int mode, py::handle key, py::handle value,
                    std::int64_t exptime, std::uint32_t flags, std::uint64_t cas, bool noreply) {
    StoreOp op{store_mode(mode), c.key(key), c.value(value), exptime, flags, cas, noreply};
    if (noreply) {
        c.fire([&](auto h) { op(c, std::move(h)); });
        return py::none();
    }
    return run_sync<Status>(c, op);
}
/// delete(key, noreply) -> Status (None when noreply).
py::object py_delete(NativeClient& c, py::handle key, bool noreply) {
    DeleteOp op{c.key(key), noreply};
    if (noreply) {
        c.fire([&](auto h) { op(c, std::move(h)); });
        return py::none();
    }
    return run_sync<Status>(c, op);
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

/// get_multi_dict(keys) -> ({key: bytes} of the hits, errc of the first unanswered key or 0):
/// Client.get_many without a serde.
py::object py_get_multi_dict(NativeClient& c, py::handle keys_obj) {
    py::list keys = py::reinterpret_borrow<py::object>(keys_obj).cast<py::list>();
    auto k = c.keys(keys);
    c.check_open();
    Slot<MultiGetResult> slot;
    const bool lead = c.loop().start([&] {
        GetMultiOp{&k, false, {}}(c, SyncHandler<MultiGetResult>{&slot, &c.loop()});
    });
    {
        py::gil_scoped_release nogil;
        c.loop().wait([&] { return slot.done; }, lead);
    }
    if (slot.error) raise_error(slot.error);
    py::dict out;
    auto& values = slot.value.values;
    for (std::size_t i = 0; i < values.size() && i < k.size(); ++i) {
        if (!values[i]) continue;
        py::bytes b(values[i]->data.data(), values[i]->data.size());
        if (PyDict_SetItem(out.ptr(), PyList_GET_ITEM(keys.ptr(), static_cast<Py_ssize_t>(i)),
                           b.ptr()) != 0)
            throw py::error_already_set();
    }
    int first_error = 0;
    for (const auto& e : slot.value.errors)
        if (e) {
            first_error = errc_index(e);
            break;
        }
    return py::make_tuple(std::move(out), first_error);
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

PyMethodDef fast_defs[] = {
    {"get_value", fast_pointer<&py_get_value>(), METH_FASTCALL, "Client.get's request"},
    {"a_get_value", fast_pointer<&py_a_get_value>(), METH_FASTCALL, "AsyncClient.get's request"},
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

/// The fast function `name` (a fast_defs entry) bound to the client `owner` holds.
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

std::vector<KeyValue> items_of(NativeClient& c, py::handle seq) {
    std::vector<KeyValue> items;
    py::sequence s = py::reinterpret_borrow<py::sequence>(seq);
    items.reserve(s.size());
    for (py::handle item : s) {
        py::tuple t = py::reinterpret_borrow<py::tuple>(item);
        if (t.size() != 3) throw py::value_error("set_many items are (key, value, flags)");
        items.push_back(KeyValue{c.key(t[0]), c.value(t[1]), t[2].cast<std::uint32_t>()});
    }
    return items;
}

// ---- get_or_fill (blocking) --------------------------------------------------------------

/// get_or_fill with a Python fill function, run on the thread that called (never on the I/O
/// thread, which would stall every connection while Python runs).
py::object py_get_or_fill(NativeClient& c, py::handle key_obj, py::object fill, std::int64_t ttl,
                          std::uint32_t flags, std::int64_t stub_ttl, bool wait_for_fill,
                          double wait_timeout) {
    c.check_open();
    std::string_view key = c.key(key_obj);
    FillOptions o;
    o.ttl = ttl_of(ttl);
    o.flags = flags;
    o.stub_ttl = ttl_of(stub_ttl);
    o.wait_for_fill = wait_for_fill;
    o.wait_timeout = ms_of(wait_timeout);

    struct State {
        bool done = false;
        bool fill_wanted = false;
        FillDone fill_done;
        std::error_code error;
        CacheResult result;
    };
    auto st = std::make_shared<State>();
    Loop& loop = c.loop();
    folsom::get_or_fill(
        c.client(), key, o,
        [st, &loop](FillDone done) {
            loop.notify([&] {
                st->fill_done = std::move(done);
                st->fill_wanted = true;
            });
        },
        [st, &loop](std::error_code ec, CacheResult r) {
            loop.notify([&] {
                st->error = ec;
                st->result = std::move(r);
                st->done = true;
            });
        });
    std::optional<py::error_already_set> fill_error;
    for (;;) {
        {
            py::gil_scoped_release nogil;
            loop.wait([&] { return st->done || st->fill_wanted; });
        }
        FillDone done;
        bool finished = false;
        loop.notify([&] {
            finished = st->done;
            if (st->fill_wanted) {
                st->fill_wanted = false;
                done = std::move(st->fill_done);
            }
        });
        if (done) {
            try {
                py::object v = fill();
                done({}, std::string(c.value(v)));
            } catch (py::error_already_set& e) {
                fill_error.emplace(std::move(e));
                done(make_error_code(errc::fill_failed), {});
            }
            continue;
        }
        if (finished) break;
    }
    if (st->error) {
        if (fill_error && st->error == errc::fill_failed) throw std::move(*fill_error);
        raise_error(st->error);
    }
    return convert(std::move(st->result));
}

// ---- metrics -----------------------------------------------------------------------------

py::dict latency_dict(const LatencySummary& l) {
    py::dict d;
    d["count"] = l.count;
    d["sum"] = l.sum;
    d["p50"] = l.p50;
    d["p99"] = l.p99;
    d["p999"] = l.p999;
    return d;
}

py::dict server_dict(const ServerSnapshot& s) {
    py::dict d;
    d["requests"] = s.requests;
    d["hits"] = s.hits;
    d["misses"] = s.misses;
    d["errors"] = s.errors;
    d["retries"] = s.retries;
    d["outstanding"] = s.outstanding;
    d["bytes_sent"] = s.bytes_sent;
    d["bytes_received"] = s.bytes_received;
    d["connects"] = s.connects;
    d["disconnects"] = s.disconnects;
    d["reconnect_attempts"] = s.reconnect_attempts;
    d["connect_failures"] = s.connect_failures;
    d["latency"] = latency_dict(s.latency);
    py::dict ops;
    for (const auto& op : s.ops) {
        py::dict o;
        o["requests"] = op.requests();
        py::dict outcomes;
        for (std::size_t i = 0; i < outcome_count; ++i)
            if (op.outcomes[i])
                outcomes[py::str(std::string(to_string(static_cast<Outcome>(i))))] = op.outcomes[i];
        o["outcomes"] = outcomes;
        py::dict errors;
        for (std::size_t i = 1; i < op.errors.size(); ++i)
            if (op.errors[i]) errors[py::str(errc_name(static_cast<int>(i)))] = op.errors[i];
        o["errors"] = errors;
        o["keys"] = op.keys;
        o["hits"] = op.hits;
        o["misses"] = op.misses;
        o["retries"] = op.retries;
        o["latency"] = latency_dict(op.latency);
        ops[py::str(std::string(to_string(op.op)))] = o;
    }
    d["ops"] = ops;
    return d;
}

py::object metrics_dict(NativeClient& c) {
    MetricsRegistry* m = c.metrics();
    if (!m) return py::none();
    MetricsSnapshot snap = m->snapshot();
    py::dict d;
    py::dict servers;
    for (const auto& s : snap.servers)
        servers[py::str(s.name)] = server_dict(s);
    d["servers"] = servers;
    d["unrouted"] = server_dict(snap.unrouted);
    d["totals"] = server_dict(snap.totals);
    return d;
}

}  // namespace
}  // namespace folsom::python

PYBIND11_MODULE(_native, m) {
    using namespace folsom;
    using namespace folsom::python;
    m.doc() = "folsom-cpp's client, for the folsom Python package (use folsom.Client)";
    if (!add_waiter_type(m.ptr())) throw py::error_already_set();

    m.def(
        "_set_error_classes",
        [](py::list classes) {
            if (!error_classes) error_classes = new std::vector<py::object>();
            error_classes->clear();
            for (py::handle c : classes)
                error_classes->push_back(py::reinterpret_borrow<py::object>(c));
        },
        "Registers the exception classes by folsom::errc value (slot 0: wrong type).");
    py::dict errcs;
    for (int i = 1; i < errc_count; ++i)
        errcs[py::str(errc_name(i))] = i;
    m.attr("ERRC") = errcs;
    m.attr("MAX_KEY_LENGTH") = protocol::max_key_length;
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
                 TouchOp op{c.key(key), exptime, noreply};
                 if (noreply) {
                     c.fire([&](auto h) { op(c, std::move(h)); });
                     return py::none();
                 }
                 return run_sync<Status>(c, op);
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
