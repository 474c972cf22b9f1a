// get_or_fill with a Python fill function (recipes_and_metrics.hpp).
#include "folsom/cache_recipes.hpp"

#include "recipes_and_metrics.hpp"

#include <memory>
#include <optional>
#include <string>

namespace folsom::python {

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
    o.stub_ttl = Ttl(stub_ttl);
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

}  // namespace folsom::python
