// NativeClient: the Python binding's thin layer over folsom::Client.

// Every operation exists twice: blocking (the GIL released while the request is in flight) and
// asynchronous (a_* methods return a Waiter, waiter.hpp: an object asyncio awaits as a future,
// which cancels the request when cancelled). Asynchronous completions arrive on the I/O thread,
// which queues them (completions.hpp); the asyncio loop's reader then calls drain(), which
// resolves every queued Waiter and wakes its task: one wake-up per batch.
// Bad input (key type, key content, value size, a closed client) raises before anything is sent.
#pragma once

#include "folsom/client.hpp"
#include "folsom/detail/blocking_loop.hpp"
#include "folsom/metrics_registry.hpp"
#include "folsom/protocol/key.hpp"
#include "folsom/quiet_client.hpp"

#include "completions.hpp"
#include "conversions.hpp"
#include "errors.hpp"
#include "options.hpp"

#include <asio/bind_cancellation_slot.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <pybind11/pybind11.h>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

namespace folsom::python {

namespace py = pybind11;

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
        allow_unicode_keys_ = opt<bool>(options, "allow_unicode_keys").value_or(true);
        ascii_str_values_ = opt<bool>(options, "ascii_str_values").value_or(false);
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

    /// A closed client (close(), pymemcache's disconnect_all()) connects again at its next
    /// request, as pymemcache's does: Django closes its caches' connections after every request.
    void check_open() {
        if (closed_) reopen();
    }

    void reopen() {
        try {
            client_ = Client::connect(loop_.io().get_executor(), options_);
        } catch (const std::system_error& e) {
            raise_error(e.code(), e.what());
        }
        quiet_.emplace(client_);
        closed_ = false;
    }

    std::string_view key(py::handle h) const {
        if (options_.binary_keys) {  // any bytes (a str: its UTF-8); prefix and key 1..186
            std::string_view k = key_bytes(h);
            if (k.empty() ||
                options_.key_prefix.size() + k.size() > protocol::max_binary_key_length)
                raise_error(make_error_code(errc::invalid_key),
                            std::string(k.empty() ? "empty key" : "binary key over 186 bytes") +
                                ": " + repr_of(h));
            return k;
        }
        if (!allow_unicode_keys_ && PyUnicode_Check(h.ptr()) && !PyUnicode_IS_ASCII(h.ptr()))
            raise_error(make_error_code(errc::invalid_key),
                        "non-ASCII key (allow_unicode_keys=False): " + repr_of(h));
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
        if (ascii_str_values_ && PyUnicode_Check(h.ptr()) && !PyUnicode_IS_ASCII(h.ptr()))
            raise_class(error_class_invalid_type,
                        "non-ASCII str value with encoding='ascii': " + repr_of(h),
                        "invalid_argument");
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

    /// Runs a blocking request, `start(handler)`, with the GIL released while it is in flight;
    /// raises its error, or returns its result as `to_python(T&&)` makes it.
    template <class T, class Start, class ToPython>
    py::object sync(Start&& start, ToPython&& to_python) {
        check_open();
        Slot<T> slot;
        const bool lead = loop_.start([&] { start(SyncHandler<T>{&slot, &loop_}); });
        {
            py::gil_scoped_release nogil;
            loop_.wait([&] { return slot.done; }, lead);
        }
        if (slot.error) raise_error(slot.error);
        return to_python(std::move(slot.value));
    }
    /// As above, the result made by convert() (conversions.hpp).
    template <class T, class Start>
    py::object sync(Start&& start) {
        return sync<T>(std::forward<Start>(start), [](T&& v) { return convert(std::move(v)); });
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
        return sync<std::optional<Value>>([&](auto h) { client_.get(k, std::move(h)); },
                                          bytes_or_none);
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
        // A caller-driven loop runs the shutdown's closes now: nothing runs between calls.
        if (!loop_.threaded()) loop_.poll();
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
    bool allow_unicode_keys_ = true;    // false: a str key must be ASCII (pymemcache's default)
    bool ascii_str_values_ = false;     // true: a str value must be ASCII (encoding='ascii')
    std::size_t noreply_failures_ = 0;  // under the loop's mutex
};

}  // namespace folsom::python
