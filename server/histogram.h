#pragma once
// A Prometheus histogram: cumulative bucket counts, sum and count, safe from any thread.

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace izwi::server {

class Histogram {
 public:
  /// `bounds`: the buckets' upper bounds, ascending (+Inf is implied).
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  /// Appends `name_bucket{labels,le="..."}`, `name_sum{labels}` and `name_count{labels}` lines.
  void render(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mutex_;
  std::vector<uint64_t> counts_;  ///< Per bucket, not cumulative; the last is +Inf.
  double sum_ = 0;
  uint64_t count_ = 0;
};

}  // namespace izwi::server
