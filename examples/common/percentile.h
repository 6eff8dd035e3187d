#pragma once
// Nearest-rank percentile, shared by the bench binaries' latency tables.

#include <algorithm>
#include <cmath>
#include <vector>

namespace izwi::cli {

/// The p-th (0 < p <= 1) nearest-rank percentile of `values`; 0 when empty.
inline double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
  return values[std::min(std::max<size_t>(rank, 1) - 1, values.size() - 1)];
}

}  // namespace izwi::cli
