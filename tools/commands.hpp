// The key/value and server commands of `folsom`: get, gets, set, add, replace, append,
// prepend, cas, delete, delete-all, incr, decr, touch, stats, flush, version. Each runs one
// request through a BlockingClient and turns the outcome into output and an exit status:
//   0  the outcome asked for (a hit, stored, deleted, touched, ...)
//   1  the other expected outcome (a miss, not stored, exists, not found)
//   2  an error (thrown as CliError: one line on stderr)
// Commands that return data print only the data; the others print the status word.
#pragma once

#include "global_options.hpp"

#include <CLI/App.hpp>

#include <cstdint>
#include <functional>
#include <string>

namespace folsom::cli {

class Commands {
  public:
    explicit Commands(const GlobalOptions& g) : g_(g) {}

    /// Registers the commands; the one the user picks stores its runner in `action`.
    void add_to(CLI::App& app, std::function<int()>& action);

    /// After parsing (and GlobalOptions::finish): with --binary-keys, reads KEY's \xHH escapes
    /// (unescape_key). Throws CliError for a bad escape.
    void finish();

  private:
    const GlobalOptions& g_;
    // Parsed arguments (one command runs per process, so they can share fields).
    std::string key_;
    std::string value_;
    bool has_value_ = false;
    std::int64_t ttl_ = 0;
    std::uint32_t flags_ = 0;
    std::uint64_t cas_ = 0;
    bool noreply_ = false;  // store commands: --noreply (QuietClient)
    std::uint64_t delta_ = 0;
    std::string group_;
    std::int64_t delay_ = -1;
};

}  // namespace folsom::cli
