#pragma once
// A one-line progress bar on stderr for long work (loading weights), drawn only when stderr is a
// terminal and the tool's output is not --json, so piped and machine-read output stays unchanged.

#include <cstdint>
#include <string>

namespace izwi::cli {

class ProgressBar {
 public:
  /// `label` leads the line, e.g. "loading llama-tiny". Draws nothing unless `enabled`.
  ProgressBar(std::string label, bool enabled);
  /// Ends a line left unfinished (the work failed), so an error message starts on its own line.
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  /// Redraws when the shown percentage changes; ends the line once done >= total.
  void update(int64_t done, int64_t total);
  /// True when stderr is a terminal and `json` is false: when a tool should show one.
  static bool wanted(bool json);

 private:
  std::string label_;
  bool enabled_;
  int shown_percent_ = -1;
  bool finished_ = false;
};

}  // namespace izwi::cli
