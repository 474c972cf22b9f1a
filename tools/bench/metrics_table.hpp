// The per-server table `folsom bench --metrics` prints after a run, from the client's own
// metrics (folsom::MetricsRegistry): one row per server, and a total row when there are
// several.
#pragma once

#include "folsom/metrics_registry.hpp"

#include <string>

namespace folsom::bench {

/// The table as text, one line per server plus a header (and a total line for 2+ servers).
/// Latency columns are in microseconds.
std::string format_metrics_table(const MetricsSnapshot& snapshot);

}  // namespace folsom::bench
