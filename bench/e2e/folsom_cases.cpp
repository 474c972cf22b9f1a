#include "e2e/folsom_cases.hpp"

#include "bench/keys.hpp"

#include <asio/post.hpp>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

namespace folsom::bench {
namespace {

/// Keeps up to `window` requests in flight until `ops` have completed, then stops the
/// io_context. `issue(window, i)` starts request i; its completion calls complete(ok).
template <class Issue>
class Window {
  public:
    /// batch = false: refill the window from every completion (a steady pipeline).
    /// batch = true: issue `window` requests, wait for all of them, repeat (the shape of
    /// libmemcached's mget + fetch loop).
    Window(asio::io_context& io, std::uint64_t ops, Issue& issue, bool batch)
        : io_(io), ops_(ops), issue_(issue), batch_(batch) {}

    void start(std::size_t window) {
        window_ = window;
        issue_up_to(window);
    }
    void complete(bool ok) {
        failed_ += ok ? 0 : 1;
        ++completed_;
        if (completed_ == ops_) {
            io_.stop();
        } else if (!batch_) {
            issue_up_to(1);
        } else if (completed_ == issued_) {
            issue_up_to(window_);
        }
    }
    std::uint64_t failed() const noexcept { return failed_; }
    std::uint64_t completed() const noexcept { return completed_; }

  private:
    void issue_up_to(std::uint64_t n) {
        for (std::uint64_t k = 0; k < n && issued_ < ops_; ++k)
            issue_(*this, issued_++);
    }

    asio::io_context& io_;
    const std::uint64_t ops_;
    Issue& issue_;
    const bool batch_;
    std::size_t window_ = 1;
    std::uint64_t issued_ = 0;
    std::uint64_t completed_ = 0;
    std::uint64_t failed_ = 0;
};

Options with_server(Options o, std::string server) {
    o.servers = {std::move(server)};
    return o;
}

Options with_routes(Options o, RouteConfig routes) {
    o.routes = std::move(routes);
    return o;
}

}  // namespace

FolsomCases::FolsomCases(std::uint16_t port, const KeySet& keys, Protocol protocol)
    : FolsomCases("127.0.0.1:" + std::to_string(port), keys, protocol) {}

Options FolsomCases::base_options(Protocol protocol) {
    Options o;
    o.protocol = protocol;
    o.max_outstanding_requests = 4096;
    return o;
}

FolsomCases::FolsomCases(std::string server, const KeySet& keys, Protocol protocol)
    : FolsomCases(with_server(base_options(protocol), std::move(server)), keys) {}

FolsomCases::FolsomCases(RouteConfig routes, const KeySet& keys, Protocol protocol)
    : FolsomCases(with_routes(base_options(protocol), std::move(routes)), keys) {}

FolsomCases::FolsomCases(const Options& options, const KeySet& keys)
    : keys_(keys), client_(Client::connect(io_, options)) {
    if (get(1, 1) != 1) throw std::runtime_error("folsom: first get failed");
}

FolsomCases::~FolsomCases() {
    client_.shutdown();
    io_.restart();
    io_.run_for(std::chrono::seconds(1));
}

template <class Issue>
std::uint64_t FolsomCases::run(std::uint64_t ops, std::size_t window, Issue issue, bool batch) {
    Window<Issue> w(io_, ops, issue, batch);
    asio::post(io_, [&w, window] { w.start(window); });
    io_.restart();
    io_.run();
    if (w.completed() != ops) throw std::runtime_error("folsom: the io_context stopped early");
    if (w.failed() != 0)
        throw std::runtime_error("folsom: " + std::to_string(w.failed()) + " requests failed");
    next_ += ops;
    return ops;
}

std::uint64_t FolsomCases::get(std::uint64_t ops, std::size_t window, bool batch) {
    const std::size_t expect = keys_.value.size();
    auto issue = [this, expect](auto& w, std::uint64_t i) {
        client_.get(keys_.views[(next_ + i) % keys_.size()],
                    [w = &w, expect](std::error_code ec, std::optional<Value> v) {
                        w->complete(!ec && v && v->data.size() == expect);
                    });
    };
    return run(ops, window, issue, batch);
}

std::uint64_t FolsomCases::get_view(std::uint64_t ops, std::size_t window, bool batch) {
    const std::size_t expect = keys_.value.size();
    auto issue = [this, expect](auto& w, std::uint64_t i) {
        client_.get_view(keys_.views[(next_ + i) % keys_.size()],
                         [w = &w, expect](std::error_code ec, const ValueView* v) {
                             w->complete(!ec && v != nullptr && v->data.size() == expect);
                         });
    };
    return run(ops, window, issue, batch);
}

std::uint64_t FolsomCases::get_view_random(std::uint64_t ops, std::size_t window) {
    const std::size_t expect = keys_.value.size();
    const std::uint64_t count = keys_.size();
    auto issue = [this, expect, count](auto& w, std::uint64_t) {
        // The key choice of `folsom bench` (tools/bench/keys.hpp).
        client_.get_view(keys_.views[pick_key(splitmix64(random_), count)],
                         [w = &w, expect](std::error_code ec, const ValueView* v) {
                             w->complete(!ec && v != nullptr && v->data.size() == expect);
                         });
    };
    return run(ops, window, issue, false);
}

std::uint64_t FolsomCases::get_multi(std::uint64_t ops, std::size_t keys_per_op) {
    auto issue = [this, keys_per_op](auto& w, std::uint64_t i) {
        const std::size_t start = keys_.run_start(next_ + i, keys_per_op);
        client_.get_multi(
            std::span<const std::string_view>(keys_.views.data() + start, keys_per_op),
            [w = &w, keys_per_op](std::error_code ec, MultiGetResult r) {
                bool ok = !ec && r.complete() && r.values.size() == keys_per_op;
                for (const auto& v : r.values)
                    ok = ok && v.has_value();
                w->complete(ok);
            });
    };
    return run(ops, 1, issue);
}

std::uint64_t FolsomCases::get_multi_view(std::uint64_t ops, std::size_t keys_per_op) {
    const std::size_t expect = keys_.value.size();
    // One multi-get at a time, on this (the only I/O) thread: one counter serves them all.
    std::size_t good = 0;
    auto issue = [this, keys_per_op, expect, &good](auto& w, std::uint64_t i) {
        const std::size_t start = keys_.run_start(next_ + i, keys_per_op);
        good = 0;
        client_.get_multi_view(
            std::span<const std::string_view>(keys_.views.data() + start, keys_per_op),
            [&good, expect](std::size_t, const ValueView& v) {
                good += v.data.size() == expect ? 1 : 0;
            },
            [w = &w, keys_per_op, &good](std::error_code ec, MultiGetViewResult r) {
                w->complete(!ec && r.complete() && r.hits == keys_per_op && good == keys_per_op);
            });
    };
    return run(ops, 1, issue);
}

std::uint64_t FolsomCases::set(std::uint64_t ops, std::size_t window) {
    const std::string_view value = keys_.value;
    auto issue = [this, value](auto& w, std::uint64_t i) {
        client_.set(
            keys_.views[(next_ + i) % keys_.size()], Bytes(value), Ttl(0),
            [w = &w](std::error_code ec, Status s) { w->complete(!ec && s == Status::stored); });
    };
    return run(ops, window, issue);
}

std::uint64_t FolsomCases::set_quiet(std::uint64_t ops, std::size_t window) {
    const std::string_view value = keys_.value;
    auto issue = [this, value](auto& w, std::uint64_t i) {
        quiet_.set(keys_.views[(next_ + i) % keys_.size()], Bytes(value), Ttl(0),
                   [w = &w](std::error_code ec, Status s) {
                       w->complete(!ec && (s == Status::stored || s == Status::sent));
                   });
    };
    return run(ops, window, issue);
}

std::uint64_t FolsomCases::set_multi(std::uint64_t ops, std::size_t keys_per_op) {
    items_.resize(keys_per_op);
    auto issue = [this, keys_per_op](auto& w, std::uint64_t i) {
        for (std::size_t k = 0; k < keys_per_op; ++k)
            items_[k] =
                KeyValue{keys_.views[(next_ + i * keys_per_op + k) % keys_.size()], keys_.value};
        client_.set_multi(items_, Ttl(0),
                          [w = &w, keys_per_op](std::error_code ec, MultiWriteResult r) {
                              bool ok = !ec && r.results.size() == keys_per_op;
                              for (const auto& one : r.results)
                                  ok = ok && one.status == Status::stored && !one.error;
                              w->complete(ok);
                          });
    };
    return run(ops, 1, issue);
}

}  // namespace folsom::bench
