#include "common/progress_bar.h"

#include <unistd.h>

#include <cstdio>
#include <utility>

namespace izwi::cli {

ProgressBar::ProgressBar(std::string label, bool enabled) : label_(std::move(label)), enabled_(enabled) {}

ProgressBar::~ProgressBar() {
  if (enabled_ && shown_percent_ >= 0 && !finished_) std::fputc('\n', stderr);
}

bool ProgressBar::wanted(bool json) { return !json && isatty(STDERR_FILENO) == 1; }

void ProgressBar::update(int64_t done, int64_t total) {
  if (!enabled_ || finished_ || total <= 0) return;
  const int percent = static_cast<int>(done >= total ? 100 : done * 100 / total);
  if (percent == shown_percent_) return;
  shown_percent_ = percent;
  constexpr int kWidth = 30;
  const int filled = percent * kWidth / 100;
  std::fprintf(stderr, "\r%s [%s%s] %3d%% %.1f/%.1f MB", label_.c_str(), std::string(filled, '#').c_str(),
               std::string(kWidth - filled, ' ').c_str(), percent, done / 1e6, total / 1e6);
  if (done >= total) {
    std::fputc('\n', stderr);
    finished_ = true;
  }
  std::fflush(stderr);
}

}  // namespace izwi::cli
