#pragma once
// A helper program the test talks to while it runs (e.g. the KV-events subscriber): its stdout
// read line by line with a timeout, its exit waited for. A child still running at destruction is
// killed, so a failed test leaves nothing behind.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace izwi::testing {

class ChildProcess {
 public:
  /// Where the child's stderr goes: the test's own, or the same pipe as stdout (to read a log).
  enum class Stderr { Inherit, IntoStdout };

  /// Starts `argv[0]` (a path, not searched) with `argv`; stdout goes to a pipe. Throws
  /// std::runtime_error when it cannot be started.
  explicit ChildProcess(const std::vector<std::string>& argv, Stderr stderr_to = Stderr::Inherit);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// The next line of stdout without its newline; nullopt at end of file or after `timeout`.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  /// The exit code, or -1 when the child died of a signal or was killed after `timeout`.
  int wait(std::chrono::milliseconds timeout);
  /// Sends `sig` to the child while it runs.
  void send_signal(int sig);
  /// The child's process id (for /proc/<pid>/status).
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string buffered_;
  bool eof_ = false;
};

}  // namespace izwi::testing
