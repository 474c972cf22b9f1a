// 10 — metrics: per-server counters and latencies, printed in Prometheus' text format.
//
//     ./10_metrics_export [host:port ...]    (default 127.0.0.1:11211)
//
// Set Options::metrics to a folsom::MetricsRegistry and every request is counted on the server
// that answered it: operation, outcome (hit, miss, stored, ..., or the error's name), latency
// quantiles, bytes, connects and reconnects. Serve prometheus_text() from your own /metrics
// endpoint (with Content-Type "text/plain; version=0.0.4"), or read snapshot() directly.
#include <chrono>
#include <folsom/blocking_client.hpp>
#include <folsom/metrics_registry.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    auto registry = std::make_shared<folsom::MetricsRegistry>();
    folsom::Options options;  // no server pushed: the default, 127.0.0.1:11211
    for (int i = 1; i < argc; ++i)
        options.servers.push_back(argv[i]);
    options.metrics = registry;
    try {
        folsom::BlockingClient client(options);
        // A small workload: 100 stores, 150 gets (100 hits, 50 misses), one 20-key multi-get,
        // and 10 deletes of keys that are not there.
        for (int i = 0; i < 100; ++i)
            client.set("item:" + std::to_string(i), "value-" + std::to_string(i));
        for (int i = 0; i < 150; ++i)
            client.get("item:" + std::to_string(i));
        std::vector<std::string> keys;
        for (int i = 90; i < 110; ++i)
            keys.push_back("item:" + std::to_string(i));
        const std::vector<std::string_view> views(keys.begin(), keys.end());
        client.get_multi(views);
        for (int i = 0; i < 10; ++i)
            client.del("absent:" + std::to_string(i));

        // The registry as a user's dashboard would read it...
        const folsom::MetricsSnapshot s = registry->snapshot();
        std::cerr << "requests: " << s.totals.requests << ", hits: " << s.totals.hits
                  << ", misses: " << s.totals.misses << ", errors: " << s.totals.errors
                  << ", p99: " << s.totals.latency.p99 * 1e6 << " us\n";
        // ...and as Prometheus scrapes it.
        std::cout << registry->prometheus_text();
    } catch (const std::exception& e) {
        std::cerr << "failed: " << e.what() << '\n';
        return 1;
    }
    return 0;
}
