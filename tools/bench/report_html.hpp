// The bench summary as a self-contained HTML page (`folsom bench --html FILE`): the numbers,
// the workload, and two inline SVG plots — the latency percentile curve (x on a "nines" scale,
// as HdrHistogram plots are drawn) and the latency distribution. No scripts, fonts or styles
// are fetched from anywhere: the file can be mailed or archived as is.
#pragma once

#include "bench/summary.hpp"

#include <string>

namespace folsom::bench {

std::string to_html(const Summary& s);

}  // namespace folsom::bench
