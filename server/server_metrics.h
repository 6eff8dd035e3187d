#pragma once
// GET /metrics: Prometheus text. The gauges and counters the Kubernetes inference gateway and
// llm-d scrape carry vLLM's names (vllm:num_requests_waiting, vllm:num_requests_running,
// vllm:kv_cache_usage_perc, ...); izwi's own carry the izwi_ prefix (docs/serving.md lists them).

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "izwi/output.h"
#include "server/histogram.h"
#include "server/served_models.h"

namespace izwi::server {

/// What the server saw of one finished request.
struct RequestRecord {
  double ttft_s = -1;  ///< < 0: no token came.
  double e2e_s = 0;
  FinishReason finish_reason = FinishReason::None;
  /// Audio endpoints: seconds of audio made or transcribed and the wall time it took (RTF).
  double audio_s = 0;
};

class ServerMetrics {
 public:
  explicit ServerMetrics(const ServedModels& models);
  void record(const std::string& model, const RequestRecord& record);
  /// The gap between two consecutive token chunks of a streamed answer.
  void record_inter_token(const std::string& model, double seconds);
  void record_http(int status);
  std::string render() const;

 private:
  struct PerModel {
    Histogram ttft, inter_token, e2e, audio_rtf;
    std::map<std::string, uint64_t> finished;  ///< By finish reason.
    PerModel();
  };
  const ServedModels& models_;
  std::map<std::string, std::unique_ptr<PerModel>> per_model_;
  mutable std::mutex mutex_;  ///< Guards `finished` and http_status_.
  std::map<int, uint64_t> http_status_;
};

}  // namespace izwi::server
