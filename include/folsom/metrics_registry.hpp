/// @file
/// folsom::MetricsRegistry — the built-in Metrics: lock-free counters and latency histograms
/// per server and operation, read as a snapshot or as Prometheus text.
///
///     auto registry = std::make_shared<folsom::MetricsRegistry>();
///     auto client = folsom::Client::connect(io, {.servers = {...}, .metrics = registry});
///     ...
///     folsom::MetricsSnapshot s = registry->snapshot();   // s.servers[i].requests, .hits, ...
///     std::string text = registry->prometheus_text();    // serve it from your /metrics
///
/// Recording (the Metrics hooks) is wait-free: relaxed atomic increments, no lock, no
/// allocation. add_server() takes a mutex and allocates the server's counters once.
/// Latency is kept in a log-linear histogram (8 buckets per power of two: a quantile is
/// reported as the upper bound of its bucket, at most 12.5% above the true value, from 1 ns
/// up to about 18 minutes; longer latencies count in the last bucket).
///
/// Thread-safety: every member may be called from any thread, concurrently. A snapshot reads
/// each counter atomically but not all of them at one instant: taken while requests run, it
/// may show a request in one counter and not yet in another. Lifetime: a snapshot owns its
/// strings. Errors: none are reported; servers beyond `max_servers` distinct names share one
/// series named "other".
#pragma once

#include "folsom/export.hpp"
#include "folsom/metrics.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace folsom {

/// Latency quantiles of a set of requests (seconds). All zero when count is 0.
struct FOLSOM_EXPORT LatencySummary {
    std::uint64_t count = 0;  ///< requests measured (sent ones; refused ones have no latency)
    double sum = 0;           ///< total seconds
    double p50 = 0;           ///< median, seconds
    double p99 = 0;           ///< 99th percentile, seconds
    double p999 = 0;          ///< 99.9th percentile, seconds
};

/// What one server (or the totals) saw of one operation.
struct FOLSOM_EXPORT OpSnapshot {
    MetricOp op = MetricOp::get;  ///< the operation
    /// Completed requests by outcome; outcomes[Outcome::error] counts every error.
    std::array<std::uint64_t, outcome_count> outcomes{};
    /// Errors by folsom::errc value (index 0: errors of another category).
    std::array<std::uint64_t, max_error_label + 1> errors{};
    std::uint64_t keys = 0;  ///< retrievals: keys asked for
    std::uint64_t hits = 0;  ///< retrievals: keys that returned a value
    /// Retrievals: keys that returned nothing (of requests that did not fail).
    std::uint64_t misses = 0;
    std::uint64_t retries = 0;  ///< requests lost with their connection and retried
    LatencySummary latency;     ///< of the requests sent

    /// Completed requests (every outcome, errors included; retries not).
    std::uint64_t requests() const noexcept;
    /// The count for one outcome.
    std::uint64_t count(Outcome o) const noexcept { return outcomes[static_cast<std::size_t>(o)]; }
};

/// Everything recorded about one server (or, merged, about every server: the totals).
struct FOLSOM_EXPORT ServerSnapshot {
    std::string name;             ///< "host:port" ("" for the totals and for unrouted requests)
    std::vector<OpSnapshot> ops;  ///< one per operation that saw any request, in MetricOp order

    // Over every operation:
    std::uint64_t requests = 0;  ///< completed requests
    std::uint64_t hits = 0;      ///< retrieval keys that returned a value
    std::uint64_t misses = 0;    ///< retrieval keys that returned nothing
    std::uint64_t errors = 0;    ///< requests that failed
    std::uint64_t retries = 0;   ///< requests lost with their connection and retried
    LatencySummary latency;      ///< every sent request

    std::int64_t outstanding = 0;          ///< requests queued and not yet completed
    std::uint64_t bytes_sent = 0;          ///< written to the server's connections
    std::uint64_t bytes_received = 0;      ///< read from them
    std::uint64_t connects = 0;            ///< successful connects (first ones included)
    std::uint64_t disconnects = 0;         ///< connected connections lost
    std::uint64_t reconnect_attempts = 0;  ///< connect attempts after a failure
    std::uint64_t connect_failures = 0;    ///< connect attempts that failed

    /// The operation's entry, or nullptr when it saw no request.
    const OpSnapshot* find(MetricOp op) const noexcept;
};

/// A copy of a registry's counters.
struct FOLSOM_EXPORT MetricsSnapshot {
    std::vector<ServerSnapshot> servers;  ///< in the order servers were added
    /// Requests that never reached a server (overloaded, nothing to route to).
    ServerSnapshot unrouted;
    /// Every server and the unrouted requests, merged (latency quantiles over all of them).
    ServerSnapshot totals;

    /// The server named `name` ("host:port"), or nullptr.
    const ServerSnapshot* find(std::string_view name) const noexcept;
};

/// Renders a snapshot in the Prometheus text exposition format (version 0.0.4): # HELP and
/// # TYPE lines, counters folsom_*_total, the folsom_outstanding_requests gauge and the
/// folsom_request_duration_seconds summary. docs/observability.md lists every series.
FOLSOM_EXPORT std::string to_prometheus(const MetricsSnapshot& snapshot);

/// The built-in Metrics (see metrics_registry.hpp).
class FOLSOM_EXPORT MetricsRegistry final : public Metrics {
  public:
    /// Keeps up to `max_servers` servers apart (each costs ~50 KiB once added).
    explicit MetricsRegistry(std::size_t max_servers = 1024);
    ~MetricsRegistry() override;
    MetricsRegistry(const MetricsRegistry&) = delete;
    MetricsRegistry& operator=(const MetricsRegistry&) = delete;

    /// Returns the id of `name`, adding it the first time (one id per distinct name).
    std::uint32_t add_server(std::string_view name) override;
    /// Counts a request as outstanding on `server`.
    void request_sent(std::uint32_t server, MetricOp op) noexcept override;
    /// Counts a completed, refused or retried request (see RequestRecord).
    void request_completed(const RequestRecord& record) noexcept override;
    /// Adds to the server's bytes written.
    void bytes_sent(std::uint32_t server, std::size_t bytes) noexcept override;
    /// Adds to the server's bytes read.
    void bytes_received(std::uint32_t server, std::size_t bytes) noexcept override;
    /// Counts a connection event of `server`.
    void connection_event(std::uint32_t server, ConnectionEvent event) noexcept override;

    /// A copy of every counter (see the thread-safety note in metrics_registry.hpp).
    MetricsSnapshot snapshot() const;
    /// Sets every counter and histogram back to zero (servers stay known; the outstanding
    /// gauge is kept), e.g. between a warm-up and a measured phase. Exact when no request
    /// completes meanwhile; otherwise such a request may be counted in part. Prometheus reads
    /// the drop as a counter reset.
    void reset() noexcept;
    /// to_prometheus(snapshot()).
    std::string prometheus_text() const;

  private:
    struct Slot;
    Slot* slot(std::uint32_t server) const noexcept;

    const std::size_t capacity_;
    // Slots are published once (release) and never move or die before the registry; readers
    // on the request path only load the pointer.
    std::unique_ptr<std::atomic<Slot*>[]> slots_;
    std::unique_ptr<Slot> unrouted_;
    std::atomic<std::uint32_t> count_{0};
    mutable std::mutex mu_;  // add_server only
    std::map<std::string, std::uint32_t, std::less<>> ids_;
    std::vector<std::unique_ptr<Slot>> owned_;
};

}  // namespace folsom
