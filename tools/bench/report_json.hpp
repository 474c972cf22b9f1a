// The bench summary as JSON (`folsom bench --json FILE`), for scripts and dashboards.
#pragma once

#include "bench/summary.hpp"

#include <string>

namespace folsom::bench {

/// The summary as one JSON object (keys as in the printed summary; latencies in µs).
std::string to_json(const Summary& s);

/// Escapes `text` as the body of a JSON string (quotes, backslashes, control characters).
std::string json_escape(std::string_view text);

}  // namespace folsom::bench
