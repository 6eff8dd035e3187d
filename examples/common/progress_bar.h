#pragma once
// A one-line progress bar on stderr for long work (loading weights, creating a voice, speaking,
// transcribing a file), drawn only when stderr is a terminal and the tool's output is not --json,
// so piped and machine-read output stays unchanged.

#include <cstdint>
#include <string>

namespace izwi::cli {

class ProgressBar {
 public:
  /// `label` leads the line, e.g. "loading llama-tiny". Draws nothing unless `enabled`. Amounts
  /// are counted in items and shown as items * `scale` `unit`: bytes as MB (the default), audio
  /// positions (80 ms each) as seconds with scale 0.08 and unit "s".
  ProgressBar(std::string label, bool enabled, std::string unit = "MB", double scale = 1e-6);
  /// Ends a line left unfinished (the work failed), so an error message starts on its own line.
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  /// Redraws when the shown percentage changes; ends the line once done >= total.
  void update(int64_t done, int64_t total);
  /// For work of unknown length (speech runs until the model ends it): redraws "label 7.7 s"
  /// when the shown amount changes; finish() ends the line.
  void count(int64_t done);
  /// Ends the line (once; nothing when nothing was drawn).
  void finish();
  /// True when stderr is a terminal and `json` is false: when a tool should show one.
  static bool wanted(bool json);

 private:
  std::string label_;
  bool enabled_;
  std::string unit_;
  double scale_;
  int64_t shown_ = -1;  ///< The percentage (update) or the amount in tenths (count) last drawn.
  bool finished_ = false;
};

}  // namespace izwi::cli
