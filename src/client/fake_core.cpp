// The fake client's core: an in-memory memcached behind the ClientCore interface, so that the
// ordinary Client templates (and everything users build on them) run unchanged on top of it.
//
// Each request is applied to the store inside submit(), under the store's mutex, so requests
// take effect in the order they were made, as on one pipelined connection. What the request
// produced is copied out and delivered by a handler posted to the executor: completions never
// run inside the initiating call, and never under the mutex (a handler may start the next
// request from inside its completion).
//
// The semantics follow memcached 1.6 over the text protocol; tests/integration/
// fake_vs_real_test.cpp holds the fake to it case by case.
#include "folsom/detail/client_core.hpp"
#include "folsom/error.hpp"
#include "folsom/fake_client.hpp"
#include "folsom/protocol/key.hpp"

#include <asio/post.hpp>
#include <asio/steady_timer.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace folsom::detail {
namespace {

using WallClock = std::chrono::system_clock;
using TimePoint = WallClock::time_point;

// memcached reads an exptime (or flush delay) up to 30 days as relative, beyond as a Unix time.
constexpr std::uint32_t thirty_days = 60 * 60 * 24 * 30;

const std::string fake_server_name = "fake:0";

struct Item {
    std::string data;
    std::uint32_t flags = 0;
    std::uint64_t cas = 0;
    std::optional<TimePoint> expires;  // empty: never
    TimePoint updated;                 // what a delayed flush_all compares against
};

/// A hit to hand to on_value after the lock is released (the key and data are copies).
struct Hit {
    std::uint32_t position = 0;
    std::string key;
    Value value;
};

/// Everything one request produced.
struct Outcome {
    std::vector<Hit> hits;
    StatList stats;
    std::error_code ec;
    Status status = Status::ok;
    std::uint64_t number = 0;
    std::string text;

    static Outcome error(std::error_code e, std::string t = {}) {
        Outcome o;
        o.ec = e;
        o.text = std::move(t);
        return o;
    }
};

/// memcached's safe_strtoull over an item's bytes as memcached sees them: a C string (so it
/// ends at the first NUL) followed by "\r\n". strtoull skips leading blanks and takes a sign;
/// after the digits must come a blank or the end; a negative number is refused (only "-0"
/// survives, as 0); a number over 2^64 - 1 is refused.
std::optional<std::uint64_t> parse_counter(std::string_view data) {
    if (data.empty()) return std::nullopt;  // memcached: "can't delta zero byte values"
    const std::size_t nul = data.find('\0');
    const bool cut = nul != std::string_view::npos;
    if (cut) data = data.substr(0, nul);
    // Past the data memcached has "\r\n" (a blank) unless a NUL ended the string first.
    auto at = [&](std::size_t i) -> int {
        if (i < data.size()) return static_cast<unsigned char>(data[i]);
        if (i == data.size() && !cut) return '\r';
        return 0;
    };
    std::size_t i = 0;
    while (at(i) != 0 && std::isspace(at(i)))
        ++i;
    bool negative = false;
    if (at(i) == '+' || at(i) == '-') {
        negative = at(i) == '-';
        ++i;
    }
    if (!std::isdigit(at(i))) return std::nullopt;  // no digits: strtoull consumed nothing
    std::uint64_t v = 0;
    bool overflow = false;
    for (; std::isdigit(at(i)); ++i) {
        const auto d = static_cast<std::uint64_t>(at(i) - '0');
        if (v > (~std::uint64_t{0} - d) / 10) overflow = true;
        v = v * 10 + d;
    }
    if (overflow) return std::nullopt;  // ERANGE
    if (at(i) != 0 && !std::isspace(at(i))) return std::nullopt;
    if (negative) {
        // strtoull negates; memcached refuses a result that is negative as a signed number and
        // came with a minus sign, which leaves only zero.
        v = ~v + 1;
        if (static_cast<std::int64_t>(v) < 0) return std::nullopt;
    }
    return v;
}

/// The in-memory server: items and counters, all guarded by one mutex.
class Store {
  public:
    explicit Store(const FakeOptions& o)
        : clock_(o.clock ? o.clock : [] { return WallClock::now(); }),
          max_value_size_(o.max_value_size),
          version_(o.version),
          started_(clock_()) {}

    std::size_t max_value_size() const noexcept { return max_value_size_; }

    Outcome execute(const Request& r) {
        std::lock_guard lock(mutex_);
        const TimePoint now = clock_();
        apply_due_flush(now);
        switch (r.code) {
            case OpCode::get:
            case OpCode::gets:
            case OpCode::gat:
            case OpCode::gats:
                return retrieve(r, now);
            case OpCode::set:
            case OpCode::add:
            case OpCode::replace:
            case OpCode::append:
            case OpCode::prepend:
            case OpCode::cas:
                return store(r, now);
            case OpCode::del:
                return remove(r, now);
            case OpCode::incr:
            case OpCode::decr:
                return arithmetic(r, now);
            case OpCode::touch:
                return touch(r, now);
            case OpCode::flush_all:
                return flush_all(r, now);
            case OpCode::stats:
                return stats(r, now);
            case OpCode::version: {
                Outcome o;
                o.text = version_;
                return o;
            }
            case OpCode::verbosity:
                return Outcome{};
            case OpCode::noop:
            case OpCode::meta_get:
            case OpCode::meta_set:
            case OpCode::meta_delete:
                break;
        }
        // As the text protocol: no noop, and no meta commands.
        return Outcome::error(errc::unsupported);
    }

  private:
    struct Counters {
        std::uint64_t cmd_get = 0, cmd_set = 0, cmd_touch = 0, cmd_flush = 0;
        std::uint64_t get_hits = 0, get_misses = 0, get_expired = 0;
        std::uint64_t delete_hits = 0, delete_misses = 0;
        std::uint64_t incr_hits = 0, incr_misses = 0, decr_hits = 0, decr_misses = 0;
        std::uint64_t cas_hits = 0, cas_misses = 0, cas_badval = 0;
        std::uint64_t touch_hits = 0, touch_misses = 0;
        std::uint64_t total_items = 0;
    };

    /// memcached's realtime(): 0 never, up to 30 days from now, beyond an absolute Unix time.
    static std::optional<TimePoint> deadline(std::uint32_t exptime, TimePoint now) {
        if (exptime == 0) return std::nullopt;
        if (exptime <= thirty_days) return now + std::chrono::seconds(exptime);
        return TimePoint(std::chrono::seconds(exptime));
    }

    static bool expired(const Item& it, TimePoint now) { return it.expires && *it.expires <= now; }

    /// A flush_all whose delay has passed invalidates everything updated up to its deadline.
    void apply_due_flush(TimePoint now) {
        if (!pending_flush_ || *pending_flush_ > now) return;
        const TimePoint at = *pending_flush_;
        pending_flush_.reset();
        std::erase_if(items_, [&](const auto& kv) { return kv.second.updated <= at; });
    }

    /// The live item under `key`, or nullptr; an expired one is dropped (memcached reclaims
    /// lazily too). `was_expired` says whether it was there but expired.
    Item* find(std::string_view key, TimePoint now, bool* was_expired = nullptr) {
        auto it = items_.find(std::string(key));
        if (it == items_.end()) return nullptr;
        if (expired(it->second, now)) {
            items_.erase(it);
            if (was_expired) *was_expired = true;
            return nullptr;
        }
        return &it->second;
    }

    void link(std::string_view key, Item item) {
        ++counters_.total_items;
        items_.insert_or_assign(std::string(key), std::move(item));
    }

    Outcome retrieve(const Request& r, TimePoint now) {
        if (r.keys.empty()) return Outcome::error(errc::invalid_argument);
        for (auto k : r.keys)
            if (auto ec = protocol::validate_key(k)) return Outcome::error(ec);
        const bool touching = r.code == OpCode::gat || r.code == OpCode::gats;
        const bool with_cas = r.code == OpCode::gets || r.code == OpCode::gats;
        Outcome o;
        for (std::uint32_t i = 0; i < r.keys.size(); ++i) {
            bool was_expired = false;
            Item* item = find(r.keys[i], now, &was_expired);
            // memcached counts gat/gats as touches, not gets.
            if (touching) {
                ++counters_.cmd_touch;
                ++(item ? counters_.touch_hits : counters_.touch_misses);
            } else {
                ++counters_.cmd_get;
                ++(item ? counters_.get_hits : counters_.get_misses);
                if (was_expired) ++counters_.get_expired;
            }
            if (!item) continue;
            o.hits.push_back(Hit{i, std::string(r.keys[i]),
                                 Value{item->data, item->flags, with_cas ? item->cas : 0}});
            // The value goes out as it was; the new ttl applies from now on.
            if (touching) item->expires = deadline(r.exptime, now);
        }
        return o;
    }

    Outcome store(const Request& r, TimePoint now) {
        if (auto ec = protocol::validate_key(r.key)) return Outcome::error(ec);
        if (r.value.size() > max_value_size_) return Outcome::error(errc::value_too_large);
        ++counters_.cmd_set;
        Outcome o;
        Item* existing = find(r.key, now);
        Item fresh{std::string(r.value), r.flags, 0, deadline(r.exptime, now), now};
        switch (r.code) {
            case OpCode::add:
                if (existing) {
                    o.status = Status::not_stored;
                    return o;
                }
                break;
            case OpCode::replace:
                if (!existing) {
                    o.status = Status::not_stored;
                    return o;
                }
                break;
            case OpCode::append:
            case OpCode::prepend:
                if (!existing || existing->data.size() + r.value.size() > max_value_size_) {
                    o.status = Status::not_stored;
                    return o;
                }
                // The item keeps its flags and ttl; the request's are ignored.
                fresh.flags = existing->flags;
                fresh.expires = existing->expires;
                fresh.data = r.code == OpCode::append ? existing->data + fresh.data
                                                      : fresh.data + existing->data;
                break;
            case OpCode::cas:
                if (!existing) {
                    ++counters_.cas_misses;
                    o.status = Status::not_found;
                    return o;
                }
                if (existing->cas != r.cas) {
                    ++counters_.cas_badval;
                    o.status = Status::exists;
                    return o;
                }
                ++counters_.cas_hits;
                break;
            default:  // set
                break;
        }
        fresh.cas = ++last_cas_;
        link(r.key, std::move(fresh));
        o.status = Status::stored;
        return o;
    }

    Outcome remove(const Request& r, TimePoint now) {
        if (auto ec = protocol::validate_key(r.key)) return Outcome::error(ec);
        if (r.cas != 0) return Outcome::error(errc::unsupported);  // no delete-with-cas in ASCII
        Outcome o;
        if (find(r.key, now)) {
            items_.erase(std::string(r.key));
            ++counters_.delete_hits;
            o.status = Status::deleted;
        } else {
            ++counters_.delete_misses;
            o.status = Status::not_found;
        }
        return o;
    }

    Outcome arithmetic(const Request& r, TimePoint now) {
        if (auto ec = protocol::validate_key(r.key)) return Outcome::error(ec);
        if (r.initial) return Outcome::error(errc::unsupported);  // no initial value in ASCII
        const bool incr = r.code == OpCode::incr;
        Outcome o;
        Item* item = find(r.key, now);
        if (!item) {
            ++(incr ? counters_.incr_misses : counters_.decr_misses);
            o.status = Status::not_found;
            return o;
        }
        const auto current = parse_counter(item->data);
        if (!current)
            return Outcome::error(errc::client_error,
                                  "cannot increment or decrement non-numeric value");
        ++(incr ? counters_.incr_hits : counters_.decr_hits);
        // incr wraps at 2^64; decr stops at zero.
        const std::uint64_t v =
            incr ? *current + r.delta : (r.delta > *current ? 0 : *current - r.delta);
        std::string text = std::to_string(v);
        // memcached rewrites a value in place when the number fits, padding with spaces.
        if (text.size() <= item->data.size()) text.resize(item->data.size(), ' ');
        item->data = std::move(text);
        item->cas = ++last_cas_;
        item->updated = now;
        o.number = v;
        return o;
    }

    Outcome touch(const Request& r, TimePoint now) {
        if (auto ec = protocol::validate_key(r.key)) return Outcome::error(ec);
        ++counters_.cmd_touch;
        Outcome o;
        if (Item* item = find(r.key, now)) {
            item->expires = deadline(r.exptime, now);  // the cas stays: touch is no modification
            ++counters_.touch_hits;
            o.status = Status::touched;
        } else {
            ++counters_.touch_misses;
            o.status = Status::not_found;
        }
        return o;
    }

    Outcome flush_all(const Request& r, TimePoint now) {
        ++counters_.cmd_flush;
        const std::uint32_t delay = r.delay.value_or(0);
        if (delay == 0) {
            items_.clear();
            pending_flush_.reset();
        } else {
            // The delay is read like an exptime (absolute past 30 days), as memcached does.
            pending_flush_ = deadline(delay, now);
        }
        return Outcome{};
    }

    Outcome stats(const Request& r, TimePoint now) {
        if (protocol::validate_stats_group(r.group)) return Outcome::error(errc::invalid_argument);
        Outcome o;
        auto add = [&](const char* name, auto value) {
            if constexpr (std::is_convertible_v<decltype(value), std::string>)
                o.stats.emplace_back(name, std::string(value));
            else
                o.stats.emplace_back(name, std::to_string(value));
        };
        if (r.group == "settings") {
            add("item_size_max", max_value_size_);
            add("cas_enabled", "yes");
            add("evictions", "off");
            return o;
        }
        // Groups a real server knows; the fake has nothing to say about slabs or connections.
        if (r.group == "items" || r.group == "slabs" || r.group == "sizes" || r.group == "conns")
            return o;
        if (!r.group.empty()) return Outcome::error(errc::unsupported);  // memcached: ERROR

        std::uint64_t live = 0;
        for (const auto& [key, item] : items_)
            live += expired(item, now) ? 0 : 1;
        const auto seconds = [](auto d) {
            return std::chrono::duration_cast<std::chrono::seconds>(d).count();
        };
        const Counters& c = counters_;
        add("uptime", seconds(now - started_));
        add("time", seconds(now.time_since_epoch()));
        add("version", version_);
        add("curr_items", live);
        add("total_items", c.total_items);
        add("cmd_get", c.cmd_get);
        add("cmd_set", c.cmd_set);
        add("cmd_flush", c.cmd_flush);
        add("cmd_touch", c.cmd_touch);
        add("get_hits", c.get_hits);
        add("get_misses", c.get_misses);
        add("get_expired", c.get_expired);
        add("delete_misses", c.delete_misses);
        add("delete_hits", c.delete_hits);
        add("incr_misses", c.incr_misses);
        add("incr_hits", c.incr_hits);
        add("decr_misses", c.decr_misses);
        add("decr_hits", c.decr_hits);
        add("cas_misses", c.cas_misses);
        add("cas_hits", c.cas_hits);
        add("cas_badval", c.cas_badval);
        add("touch_hits", c.touch_hits);
        add("touch_misses", c.touch_misses);
        return o;
    }

    std::mutex mutex_;
    std::function<TimePoint()> clock_;
    const std::size_t max_value_size_;
    const std::string version_;
    const TimePoint started_;
    std::unordered_map<std::string, Item> items_;
    std::optional<TimePoint> pending_flush_;
    std::uint64_t last_cas_ = 0;
    Counters counters_;
};

class FakeCore final : public ClientCore, public std::enable_shared_from_this<FakeCore> {
  public:
    FakeCore(asio::any_io_executor ex, const FakeOptions& options)
        : ClientCore(options.max_outstanding_requests),
          ex_(std::move(ex)),
          store_(options),
          ready_at_(std::chrono::steady_clock::now() + options.connect_delay) {}

    asio::any_io_executor executor() const noexcept override { return ex_; }
    std::size_t server_count() const noexcept override { return 1; }
    std::size_t server_for(std::string_view) const noexcept override { return 0; }
    const std::string& server_name(std::size_t) const noexcept override { return fake_server_name; }
    std::size_t max_value_size() const noexcept override { return store_.max_value_size(); }

    /// One store: every key is its.
    void send(Operation& op, std::uint32_t part, const Request& request) override {
        execute(op, part, request);
    }
    void submit(std::size_t server, Operation& op, std::uint32_t part,
                const Request& request) override {
        if (server != 0 && !closed_.load(std::memory_order_acquire))
            post_result(op, part, Outcome::error(errc::invalid_argument));
        else
            execute(op, part, request);
    }

    void shutdown() override { closed_.store(true, std::memory_order_release); }

    void notify_when_ready(std::chrono::milliseconds timeout,
                           std::function<void(std::error_code)> done) override {
        const auto now = std::chrono::steady_clock::now();
        if (closed_.load(std::memory_order_acquire) || now >= ready_at_) {
            asio::post(ex_, [self = shared_from_this(), d = std::move(done)] {
                d(self->closed_.load(std::memory_order_acquire) ? make_error_code(errc::closed)
                                                                : std::error_code{});
            });
            return;
        }
        const bool in_time = ready_at_ - now <= timeout;
        auto timer = std::make_shared<asio::steady_timer>(ex_);
        timer->expires_at(in_time ? ready_at_ : now + timeout);
        timer->async_wait(
            [self = shared_from_this(), timer, in_time, d = std::move(done)](std::error_code) {
                if (self->closed_.load(std::memory_order_acquire))
                    d(make_error_code(errc::closed));
                else
                    d(in_time ? std::error_code{} : make_error_code(errc::timeout));
            });
    }

  private:
    void execute(Operation& op, std::uint32_t part, const Request& request) {
        post_result(op, part,
                    closed_.load(std::memory_order_acquire) ? Outcome::error(errc::closed)
                                                            : store_.execute(request));
    }
    void post_result(Operation& op, std::uint32_t part, Outcome o) {
        asio::post(ex_, [self = shared_from_this(), &op, part, o = std::move(o)]() mutable {
            self->deliver(op, part, o);
        });
    }
    void deliver(Operation& op, std::uint32_t part, const Outcome& o) {
        // Shut down after the request was made: it fails like one still on the wire would.
        if (closed_.load(std::memory_order_acquire)) {
            op.on_complete(part, failure(make_error_code(errc::closed)));
            return;
        }
        for (const Hit& h : o.hits)
            op.on_value(part, h.position,
                        ValueView{h.key, h.value.data, h.value.flags, h.value.cas});
        for (const auto& [name, value] : o.stats)
            op.on_stat(part, name, value);
        Completion c;
        c.ec = o.ec;
        c.status = o.status;
        c.number = o.number;
        c.text = o.text;
        op.on_complete(part, c);
    }

    asio::any_io_executor ex_;
    Store store_;
    std::chrono::steady_clock::time_point ready_at_;
    std::atomic<bool> closed_{false};
};

}  // namespace
}  // namespace folsom::detail

namespace folsom {

Client make_fake_client(asio::any_io_executor ex, FakeOptions options) {
    return Client(std::make_shared<detail::FakeCore>(std::move(ex), options));
}

}  // namespace folsom
