#include "server/server_metrics.h"

#include <fmt/format.h>

namespace izwi::server {

namespace {

std::vector<double> latency_buckets() {
  return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
}

void gauge(std::string& out, const std::string& name, const std::string& help, const std::string& type) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

}  // namespace

ServerMetrics::PerModel::PerModel()
    : ttft(latency_buckets()),
      inter_token(latency_buckets()),
      e2e(latency_buckets()),
      audio_rtf({0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 5.0}) {}

ServerMetrics::ServerMetrics(const ServedModels& models) : models_(models) {
  for (const auto& model : models.all()) per_model_[model->name] = std::make_unique<PerModel>();
}

void ServerMetrics::record(const std::string& model, const RequestRecord& record) {
  PerModel& m = *per_model_.at(model);
  if (record.ttft_s >= 0) m.ttft.observe(record.ttft_s);
  m.e2e.observe(record.e2e_s);
  if (record.audio_s > 0) m.audio_rtf.observe(record.e2e_s / record.audio_s);
  std::lock_guard<std::mutex> lock(mutex_);
  ++m.finished[to_string(record.finish_reason)];
}

void ServerMetrics::record_inter_token(const std::string& model, double seconds) {
  per_model_.at(model)->inter_token.observe(seconds);
}

void ServerMetrics::record_http(int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++http_status_[status];
}

std::string ServerMetrics::render() const {
  std::string out;
  struct Row {
    std::string labels;
    MetricsSnapshot snapshot;
    const PerModel* histograms;
  };
  std::vector<Row> rows;
  for (const auto& model : models_.all()) {
    rows.push_back(
        {fmt::format("model_name=\"{}\"", model->name), model->engine->metrics(), per_model_.at(model->name).get()});
  }
  const auto each = [&](const std::string& name, const std::string& help, const std::string& type, auto value) {
    gauge(out, name, help, type);
    for (const Row& row : rows) out += fmt::format("{}{{{}}} {}\n", name, row.labels, value(row.snapshot));
  };
  // The model-server protocol's metrics, named as vLLM names them.
  each("vllm:num_requests_running", "Requests holding KV blocks.", "gauge",
       [](const MetricsSnapshot& s) { return s.running_requests; });
  each("vllm:num_requests_waiting", "Requests waiting to be scheduled (preempted ones included).", "gauge",
       [](const MetricsSnapshot& s) { return s.waiting_requests; });
  each("vllm:kv_cache_usage_perc", "Fraction of KV blocks held by requests (1 = full); cached blocks are free.",
       "gauge", [](const MetricsSnapshot& s) {
         const int32_t used = s.kv_blocks_total - s.kv_blocks_free - s.kv_blocks_cached;
         return s.kv_blocks_total > 0 ? static_cast<double>(used) / s.kv_blocks_total : 0.0;
       });
  each("vllm:prompt_tokens_total", "Prompt positions admitted.", "counter",
       [](const MetricsSnapshot& s) { return s.prompt_tokens; });
  each("vllm:generation_tokens_total", "Tokens (and audio frames) generated.", "counter",
       [](const MetricsSnapshot& s) { return s.generated_tokens; });
  each("vllm:prefix_cache_queries_total", "Prompt positions looked up in the prefix cache.", "counter",
       [](const MetricsSnapshot& s) { return s.prompt_tokens; });
  each("vllm:prefix_cache_hits_total", "Prompt positions served from the prefix cache.", "counter",
       [](const MetricsSnapshot& s) { return s.prefix_cache_hit_tokens; });
  each("vllm:num_preemptions_total", "Requests preempted.", "counter",
       [](const MetricsSnapshot& s) { return s.preemptions; });
  // izwi's own.
  each("izwi_prefix_cache_hit_rate", "Prompt positions served from the prefix cache / admitted.", "gauge",
       [](const MetricsSnapshot& s) { return s.prefix_cache_hit_rate; });
  each("izwi_kv_blocks_total", "KV blocks in the pool.", "gauge",
       [](const MetricsSnapshot& s) { return s.kv_blocks_total; });
  each("izwi_kv_blocks_free", "KV blocks neither held nor cached.", "gauge",
       [](const MetricsSnapshot& s) { return s.kv_blocks_free; });
  each("izwi_kv_blocks_cached", "KV blocks held only by the prefix cache (evictable).", "gauge",
       [](const MetricsSnapshot& s) { return s.kv_blocks_cached; });
  each("izwi_engine_steps_total", "Engine steps run.", "counter", [](const MetricsSnapshot& s) { return s.steps; });

  const auto histogram = [&](const std::string& name, const std::string& help, Histogram PerModel::*member) {
    gauge(out, name, help, "histogram");
    for (const Row& row : rows) (row.histograms->*member).render(out, name, row.labels);
  };
  histogram("vllm:time_to_first_token_seconds", "Submission to first token.", &PerModel::ttft);
  histogram("vllm:inter_token_latency_seconds", "Gap between consecutive streamed tokens.", &PerModel::inter_token);
  histogram("vllm:e2e_request_latency_seconds", "Submission to finish.", &PerModel::e2e);
  histogram("izwi_audio_real_time_factor", "Wall time / seconds of audio, per speech or transcription request.",
            &PerModel::audio_rtf);

  std::lock_guard<std::mutex> lock(mutex_);
  gauge(out, "vllm:request_success_total", "Finished requests by finish reason.", "counter");
  for (const Row& row : rows) {
    for (const auto& [reason, count] : row.histograms->finished) {
      out += fmt::format("vllm:request_success_total{{{},finished_reason=\"{}\"}} {}\n", row.labels, reason, count);
    }
  }
  gauge(out, "izwi_http_responses_total", "HTTP responses by status.", "counter");
  for (const auto& [status, count] : http_status_) {
    out += fmt::format("izwi_http_responses_total{{status=\"{}\"}} {}\n", status, count);
  }
  return out;
}

}  // namespace izwi::server
