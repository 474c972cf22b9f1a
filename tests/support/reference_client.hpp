// Asking another memcached client, installed from Debian, where keys go: the placement tests
// run a short program of that client's language (python3, go, ruby, perl, php) that reads
// keys on stdin and prints one line per key naming the server the client picked. No server
// runs: each client is asked through its own placement code. Debian's interpreters are named
// by path (/usr/bin/python3): a python3 earlier in PATH (pyenv, a venv) lacks Debian's packages.
#pragma once

#include "folsom/server_address.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace folsom::test {

/// The keys every placement test uses: 5,000 "key:<i>" and 5,000 random printable keys of 1 to
/// 250 bytes (no whitespace), the same every run.
std::vector<std::string> placement_keys();

/// What running a reference program gave.
struct ReferenceRun {
    bool ran = false;  ///< it started, exited 0 and printed one line per key
    /// It cannot run here: the interpreter is missing, or the program exited with status 77
    /// (unavailable_status), which the reference programs use for a missing client package.
    /// The test is skipped with why_not; any other failure fails the test.
    bool unavailable = false;
    std::string why_not;             ///< unless it ran: why, for GTEST_SKIP or a failure message
    std::vector<std::string> lines;  ///< its stdout, split at '\n'
};

/// The exit status of a reference program whose client package is not installed.
inline constexpr int unavailable_status = 77;

/// Runs argv (argv[0] looked up in PATH unless it holds a '/') with `input` on stdin, in at most
/// `limit` (then it is killed by its PID), and returns its stdout lines. `expected_lines`: how many
/// it must print.
ReferenceRun run_reference(const std::vector<std::string>& argv, const std::string& input,
                           std::size_t expected_lines,
                           std::chrono::seconds limit = std::chrono::seconds(60));

/// The keys, one per line, for a reference program's stdin.
std::string lines_of(const std::vector<std::string>& keys);

/// A directory of its own under the temporary directory, removed with the object.
class ScratchDir {
  public:
    ScratchDir();
    ~ScratchDir();
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    const std::string& path() const noexcept { return path_; }
    /// Writes `text` to path()/name and returns the file's path.
    std::string write(const std::string& name, const std::string& text) const;

  private:
    std::string path_;
};

}  // namespace folsom::test
