#include "common/progress_bar.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <utility>

namespace izwi::cli {

ProgressBar::ProgressBar(std::string label, bool enabled, std::string unit, double scale)
    : label_(std::move(label)), enabled_(enabled), unit_(std::move(unit)), scale_(scale) {}

ProgressBar::~ProgressBar() { finish(); }

bool ProgressBar::wanted(bool json) { return !json && isatty(STDERR_FILENO) == 1; }

void ProgressBar::update(int64_t done, int64_t total) {
  if (!enabled_ || finished_ || total <= 0) return;
  const int percent = static_cast<int>(done >= total ? 100 : done * 100 / total);
  if (percent == shown_) return;
  shown_ = percent;
  constexpr int kWidth = 30;
  const int filled = percent * kWidth / 100;
  std::fprintf(stderr, "\r%s [%s%s] %3d%% %.1f/%.1f %s", label_.c_str(), std::string(filled, '#').c_str(),
               std::string(kWidth - filled, ' ').c_str(), percent, done * scale_, total * scale_, unit_.c_str());
  if (done >= total) finish();
  std::fflush(stderr);
}

void ProgressBar::count(int64_t done) {
  if (!enabled_ || finished_) return;
  const auto tenths = static_cast<int64_t>(std::floor(done * scale_ * 10));
  if (tenths == shown_) return;
  shown_ = tenths;
  std::fprintf(stderr, "\r%s %.1f %s", label_.c_str(), tenths / 10.0, unit_.c_str());
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (enabled_ && shown_ >= 0 && !finished_) std::fputc('\n', stderr);
  finished_ = true;
}

}  // namespace izwi::cli
