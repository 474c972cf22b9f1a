// The operations shared by the blocking and asynchronous forms: each is a callable
// (NativeClient&, handler) built from already-checked arguments.
#pragma once

#include "native_client.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <pybind11/pybind11.h>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace folsom::python {

namespace py = pybind11;

inline StoreMode store_mode(int mode) {
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
inline py::object run_sync(NativeClient& c, Op op) {
    return c.sync<T>([&](auto h) { op(c, std::move(h)); });
}
/// A write that may be noreply: fired and forgotten (None) when it is, else run_sync.
template <class T, class Op>
inline py::object run_or_fire(NativeClient& c, Op op, bool noreply) {
    if (noreply) {
        c.fire([&](auto h) { op(c, std::move(h)); });
        return py::none();
    }
    return run_sync<T>(c, op);
}
template <class T, class Op>
inline py::object run_async(NativeClient& c, Op op) {
    return c.async<T>([&](auto h) { op(c, std::move(h)); });
}

/// set_many's items: (key, value, flags) tuples, checked.
inline std::vector<KeyValue> items_of(NativeClient& c, py::handle seq) {
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

}  // namespace folsom::python
