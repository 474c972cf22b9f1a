#include "folsom/metrics_registry.hpp"

#include "observe/latency_histogram.hpp"

#include <algorithm>

namespace folsom {
namespace {

using detail::LatencyHistogram;

std::size_t error_index(std::error_code ec) noexcept {
    if (ec.category() != category()) return 0;
    const auto v = static_cast<std::size_t>(ec.value());
    return v <= max_error_label ? v : 0;
}

LatencySummary summarize(const LatencyHistogram::Counts& c) noexcept {
    LatencySummary s;
    s.count = c.count;
    s.sum = static_cast<double>(c.sum_ns) * 1e-9;
    s.p50 = static_cast<double>(c.quantile(0.5)) * 1e-9;
    s.p99 = static_cast<double>(c.quantile(0.99)) * 1e-9;
    s.p999 = static_cast<double>(c.quantile(0.999)) * 1e-9;
    return s;
}

}  // namespace

// ---- the counters of one server --------------------------------------------------------------

struct MetricsRegistry::Slot {
    struct Op {
        std::array<std::atomic<std::uint64_t>, outcome_count> outcomes{};
        std::array<std::atomic<std::uint64_t>, max_error_label + 1> errors{};
        std::atomic<std::uint64_t> keys{0}, hits{0}, misses{0}, retries{0};
        LatencyHistogram latency;
    };

    explicit Slot(std::string n) : name(std::move(n)) {}

    const std::string name;
    std::array<Op, metric_op_count> ops;
    std::atomic<std::int64_t> outstanding{0};
    std::atomic<std::uint64_t> bytes_sent{0}, bytes_received{0};
    std::array<std::atomic<std::uint64_t>, connection_event_count> events{};

    void record(const RequestRecord& r) noexcept {
        if (r.sent) outstanding.fetch_sub(1, std::memory_order_relaxed);
        const auto op_index = static_cast<std::size_t>(r.op);
        if (op_index >= ops.size()) return;
        Op& o = ops[op_index];
        if (r.retried) {
            o.retries.fetch_add(1, std::memory_order_relaxed);
            return;
        }
        const auto outcome = static_cast<std::size_t>(r.outcome);
        if (outcome < outcome_count) o.outcomes[outcome].fetch_add(1, std::memory_order_relaxed);
        if (r.outcome == Outcome::error) {
            o.errors[error_index(r.error)].fetch_add(1, std::memory_order_relaxed);
        } else if (r.keys) {
            o.keys.fetch_add(r.keys, std::memory_order_relaxed);
            o.hits.fetch_add(r.hits, std::memory_order_relaxed);
            o.misses.fetch_add(r.keys > r.hits ? r.keys - r.hits : 0, std::memory_order_relaxed);
        }
        if (r.sent)
            o.latency.record(
                static_cast<std::uint64_t>(std::max<std::int64_t>(r.latency.count(), 0)));
    }

    void reset() noexcept {
        auto zero = [](auto& counters) {
            for (auto& c : counters)
                c.store(0, std::memory_order_relaxed);
        };
        for (Op& o : ops) {
            zero(o.outcomes);
            zero(o.errors);
            for (auto* c : {&o.keys, &o.hits, &o.misses, &o.retries})
                c->store(0, std::memory_order_relaxed);
            o.latency.reset();
        }
        bytes_sent.store(0, std::memory_order_relaxed);
        bytes_received.store(0, std::memory_order_relaxed);
        zero(events);
    }

    /// Copies the counters; `latency` receives the merged histogram of every operation.
    ServerSnapshot read(LatencyHistogram::Counts& latency) const {
        ServerSnapshot s;
        s.name = name;
        for (std::size_t i = 0; i < ops.size(); ++i) {
            const Op& o = ops[i];
            OpSnapshot os;
            os.op = static_cast<MetricOp>(i);
            for (std::size_t k = 0; k < outcome_count; ++k)
                os.outcomes[k] = o.outcomes[k].load(std::memory_order_relaxed);
            for (std::size_t k = 0; k <= max_error_label; ++k)
                os.errors[k] = o.errors[k].load(std::memory_order_relaxed);
            os.keys = o.keys.load(std::memory_order_relaxed);
            os.hits = o.hits.load(std::memory_order_relaxed);
            os.misses = o.misses.load(std::memory_order_relaxed);
            os.retries = o.retries.load(std::memory_order_relaxed);
            const LatencyHistogram::Counts c = o.latency.read();
            os.latency = summarize(c);
            if (os.requests() == 0 && os.retries == 0 && os.latency.count == 0) continue;
            latency.merge(c);
            s.requests += os.requests();
            s.hits += os.hits;
            s.misses += os.misses;
            s.errors += os.count(Outcome::error);
            s.retries += os.retries;
            s.ops.push_back(os);
        }
        s.latency = summarize(latency);
        s.outstanding = outstanding.load(std::memory_order_relaxed);
        s.bytes_sent = bytes_sent.load(std::memory_order_relaxed);
        s.bytes_received = bytes_received.load(std::memory_order_relaxed);
        auto event = [this](ConnectionEvent e) {
            return events[static_cast<std::size_t>(e)].load(std::memory_order_relaxed);
        };
        s.connects = event(ConnectionEvent::connected);
        s.disconnects = event(ConnectionEvent::disconnected);
        s.reconnect_attempts = event(ConnectionEvent::reconnect_attempt);
        s.connect_failures = event(ConnectionEvent::connect_failed);
        return s;
    }
};

// ---- snapshots -------------------------------------------------------------------------------

std::uint64_t OpSnapshot::requests() const noexcept {
    std::uint64_t n = 0;
    for (auto v : outcomes)
        n += v;
    return n;
}

const OpSnapshot* ServerSnapshot::find(MetricOp op) const noexcept {
    for (const auto& o : ops)
        if (o.op == op) return &o;
    return nullptr;
}

const ServerSnapshot* MetricsSnapshot::find(std::string_view name) const noexcept {
    for (const auto& s : servers)
        if (s.name == name) return &s;
    return nullptr;
}

// ---- the registry ----------------------------------------------------------------------------

MetricsRegistry::MetricsRegistry(std::size_t max_servers)
    : capacity_(std::max<std::size_t>(max_servers, 1)),
      slots_(std::make_unique<std::atomic<Slot*>[]>(capacity_ + 1)),
      unrouted_(std::make_unique<Slot>(std::string())) {
    for (std::size_t i = 0; i <= capacity_; ++i)
        slots_[i].store(nullptr, std::memory_order_relaxed);
}

MetricsRegistry::~MetricsRegistry() = default;

std::uint32_t MetricsRegistry::add_server(std::string_view name) {
    std::lock_guard lk(mu_);
    if (auto it = ids_.find(name); it != ids_.end()) return it->second;
    std::size_t id = count_.load(std::memory_order_relaxed);
    std::string key(name);
    if (id >= capacity_) {
        // Past the limit every new server shares one series, so memory stays bounded.
        id = capacity_;
        if (!slots_[id].load(std::memory_order_relaxed)) {
            owned_.push_back(std::make_unique<Slot>("other"));
            slots_[id].store(owned_.back().get(), std::memory_order_release);
        }
    } else {
        owned_.push_back(std::make_unique<Slot>(key));
        slots_[id].store(owned_.back().get(), std::memory_order_release);
        count_.store(static_cast<std::uint32_t>(id + 1), std::memory_order_release);
    }
    ids_.emplace(std::move(key), static_cast<std::uint32_t>(id));
    return static_cast<std::uint32_t>(id);
}

MetricsRegistry::Slot* MetricsRegistry::slot(std::uint32_t server) const noexcept {
    if (server == no_server) return unrouted_.get();
    if (server > capacity_) return nullptr;
    return slots_[server].load(std::memory_order_acquire);
}

void MetricsRegistry::request_sent(std::uint32_t server, MetricOp) noexcept {
    if (Slot* s = slot(server)) s->outstanding.fetch_add(1, std::memory_order_relaxed);
}

void MetricsRegistry::request_completed(const RequestRecord& record) noexcept {
    if (Slot* s = slot(record.server)) s->record(record);
}

void MetricsRegistry::bytes_sent(std::uint32_t server, std::size_t bytes) noexcept {
    if (Slot* s = slot(server)) s->bytes_sent.fetch_add(bytes, std::memory_order_relaxed);
}

void MetricsRegistry::bytes_received(std::uint32_t server, std::size_t bytes) noexcept {
    if (Slot* s = slot(server)) s->bytes_received.fetch_add(bytes, std::memory_order_relaxed);
}

void MetricsRegistry::connection_event(std::uint32_t server, ConnectionEvent event) noexcept {
    const auto i = static_cast<std::size_t>(event);
    if (i >= connection_event_count) return;
    if (Slot* s = slot(server)) s->events[i].fetch_add(1, std::memory_order_relaxed);
}

MetricsSnapshot MetricsRegistry::snapshot() const {
    MetricsSnapshot out;
    LatencyHistogram::Counts all;
    std::vector<LatencyHistogram::Counts> per_op(metric_op_count);  // ~2.5 KiB each: heap
    auto merge_ops = [&per_op](const Slot& slot) {
        for (std::size_t i = 0; i < metric_op_count; ++i)
            per_op[i].merge(slot.ops[i].latency.read());
    };
    const std::uint32_t n = count_.load(std::memory_order_acquire);
    std::vector<const Slot*> slots;
    for (std::uint32_t i = 0; i < n; ++i)
        slots.push_back(slots_[i].load(std::memory_order_acquire));
    if (const Slot* other = slots_[capacity_].load(std::memory_order_acquire))
        slots.push_back(other);
    for (const Slot* slot : slots) {
        LatencyHistogram::Counts lat;
        out.servers.push_back(slot->read(lat));
        all.merge(lat);
        merge_ops(*slot);
    }
    {
        LatencyHistogram::Counts lat;
        out.unrouted = unrouted_->read(lat);
        all.merge(lat);
        merge_ops(*unrouted_);
    }

    // Totals: every server and the unrouted requests, operation by operation.
    ServerSnapshot& t = out.totals;
    std::vector<const ServerSnapshot*> parts;
    for (const auto& s : out.servers)
        parts.push_back(&s);
    parts.push_back(&out.unrouted);
    for (std::size_t i = 0; i < metric_op_count; ++i) {
        OpSnapshot sum;
        sum.op = static_cast<MetricOp>(i);
        bool any = false;
        for (const ServerSnapshot* s : parts) {
            const OpSnapshot* o = s->find(sum.op);
            if (!o) continue;
            any = true;
            for (std::size_t k = 0; k < outcome_count; ++k)
                sum.outcomes[k] += o->outcomes[k];
            for (std::size_t k = 0; k <= max_error_label; ++k)
                sum.errors[k] += o->errors[k];
            sum.keys += o->keys;
            sum.hits += o->hits;
            sum.misses += o->misses;
            sum.retries += o->retries;
        }
        if (!any) continue;
        sum.latency = summarize(per_op[i]);
        t.ops.push_back(sum);
    }
    for (const ServerSnapshot* s : parts) {
        t.requests += s->requests;
        t.hits += s->hits;
        t.misses += s->misses;
        t.errors += s->errors;
        t.retries += s->retries;
        t.outstanding += s->outstanding;
        t.bytes_sent += s->bytes_sent;
        t.bytes_received += s->bytes_received;
        t.connects += s->connects;
        t.disconnects += s->disconnects;
        t.reconnect_attempts += s->reconnect_attempts;
        t.connect_failures += s->connect_failures;
    }
    t.latency = summarize(all);
    return out;
}

void MetricsRegistry::reset() noexcept {
    const std::uint32_t n = count_.load(std::memory_order_acquire);
    for (std::uint32_t i = 0; i < n; ++i)
        slots_[i].load(std::memory_order_acquire)->reset();
    if (Slot* other = slots_[capacity_].load(std::memory_order_acquire)) other->reset();
    unrouted_->reset();
}

std::string MetricsRegistry::prometheus_text() const {
    return to_prometheus(snapshot());
}

}  // namespace folsom
