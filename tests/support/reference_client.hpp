// Asking another memcached client, installed from Debian, where keys go: the placement tests
// run a short program of that client's language (python3, go, ruby, perl, php) that reads
// keys on stdin and prints one line per key naming the server the client picked. No server
// runs: each client is asked through its own placement code. Debian's interpreters are named
// by path (/usr/bin/python3): a python3 earlier in PATH (pyenv, a venv) lacks Debian's packages.
#pragma once

#include "folsom/server_address.hpp"

#include <gtest/gtest.h>

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

/// Compares, key by key, the server a reference program named for keys[i] (lines[i]) with
/// names[our_index(keys[i])]; reports the first three differences as test failures and returns
/// how many keys differ. Also fails when a server gets no key at all (a vacuous comparison).
template <typename Index>
std::size_t count_mismatches(const std::vector<std::string>& keys,
                             const std::vector<std::string>& lines,
                             const std::vector<std::string>& names, Index our_index);

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

template <typename Index>
std::size_t count_mismatches(const std::vector<std::string>& keys,
                             const std::vector<std::string>& lines,
                             const std::vector<std::string>& names, Index our_index) {
    std::size_t mismatches = 0;
    std::vector<std::size_t> per_server(names.size());
    for (std::size_t i = 0; i < keys.size() && i < lines.size(); ++i) {
        const std::size_t ours = our_index(keys[i]);
        if (ours >= names.size()) {
            ADD_FAILURE() << "server index " << ours << " out of range";
            return keys.size();
        }
        ++per_server[ours];
        if (names[ours] != lines[i] && ++mismatches <= 3)
            ADD_FAILURE() << "key \"" << keys[i] << "\": theirs " << lines[i] << ", ours "
                          << names[ours];
    }
    for (std::size_t s = 0; s < names.size(); ++s)
        EXPECT_GT(per_server[s], 0u) << names[s] << " got no key";
    return mismatches;
}

}  // namespace folsom::test
