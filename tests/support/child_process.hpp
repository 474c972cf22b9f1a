// ChildProcess: a helper server program (dnsmasq, nutcracker) started for one test and stopped
// by its PID — never by name.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace folsom::test {

class ChildProcess {
  public:
    ChildProcess() = default;
    /// Starts argv[0] (looked up in PATH) with its output sent to `log_file` ("" keeps it).
    explicit ChildProcess(std::vector<std::string> argv, const std::string& log_file = "");
    ~ChildProcess();
    ChildProcess(ChildProcess&& o) noexcept : pid_(o.pid_) { o.pid_ = -1; }
    ChildProcess& operator=(ChildProcess&& o) noexcept;

    pid_t pid() const noexcept { return pid_; }
    /// True while the process has not exited.
    bool alive();
    /// SIGTERM, then SIGKILL after a grace period; reaps. No-op when not running.
    void stop();

  private:
    pid_t pid_ = -1;
};

/// True when `program` is found in PATH.
bool have_program(const std::string& program);

}  // namespace folsom::test
