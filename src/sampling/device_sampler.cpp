#include "sampling/device_sampler.h"

#include <algorithm>
#include <cstring>

#include "common/check.h"
#include "sampling/token_constraint.h"

#if IZWI_WITH_CUDA
#include "kernels/cuda/sampler_cuda.h"
#include "kernels/cuda_stream.h"
#endif

namespace izwi {

SamplingParamsCuda device_sampling_controls(const SamplingState& s) {
  SamplingParamsCuda p;
  p.temperature = s.temperature;
  p.top_k = s.top_k;
  p.top_p = s.top_p;
  p.repetition_penalty = s.repetition_penalty;
  // A complete document that nothing may follow ends here, min_tokens or not.
  p.min_tokens = s.constraint != nullptr && s.constraint->must_end() ? 0 : s.min_tokens;
  p.num_generated = s.num_generated;
  p.seed = s.seed;
  p.draw = s.draws;
  return p;
}

bool chain_controls_stage(const std::vector<SamplingState*>& states) {
  std::vector<const SamplingState*> distinct(states.begin(), states.end());
  std::sort(distinct.begin(), distinct.end());
  if (std::adjacent_find(distinct.begin(), distinct.end()) != distinct.end()) return false;
  return std::all_of(states.begin(), states.end(), [](const SamplingState* s) {
    const bool penalty = s->repetition_penalty != 1.0f && s->history != nullptr;
    return !penalty && s->suppressed.empty() && s->suppressed_below_min.empty() && s->constraint == nullptr &&
           s->logprobs < 0;
  });
}

std::vector<SamplingParamsCuda> chain_sampling_controls(const std::vector<SamplingState*>& states, int32_t steps,
                                                        int32_t bucket) {
  const int32_t rows = static_cast<int32_t>(states.size());
  IZWI_CHECK(rows <= bucket, "{} rows do not fit a bucket of {}", rows, bucket);
  std::vector<SamplingParamsCuda> params(static_cast<size_t>(steps) * static_cast<size_t>(bucket));
  for (int32_t r = 0; r < rows; ++r) {
    const SamplingParamsCuda first = device_sampling_controls(*states[static_cast<size_t>(r)]);
    for (int32_t j = 0; j < steps; ++j) {
      SamplingParamsCuda& p = params[static_cast<size_t>(j) * static_cast<size_t>(bucket) + static_cast<size_t>(r)];
      p = first;
      p.draw = first.draw + static_cast<uint64_t>(j);
    }
  }
  return params;
}

#if IZWI_WITH_CUDA

at::Tensor DeviceSampler::launch(const at::Tensor& logits, const SamplingParamsCuda* params, const int32_t* id_lists,
                                 uint32_t* workspace) {
  const at::Tensor rows_logits = logits.to(at::kFloat).contiguous();
  at::Tensor sampled = at::empty({rows_logits.size(0)}, at::TensorOptions().dtype(at::kInt).device(logits.device()));
  SamplerCudaArgs args{};
  args.logits = rows_logits.data_ptr<float>();
  args.rows = static_cast<int32_t>(rows_logits.size(0));
  args.vocab = static_cast<int32_t>(rows_logits.size(1));
  args.params = params;
  args.id_lists = id_lists;
  args.workspace = workspace;
  args.ids = sampled.data_ptr<int32_t>();
  sample_cuda(args, current_cuda_stream());
  return sampled.to(at::kLong);
}

at::Tensor DeviceSampler::sample_staged(const at::Tensor& logits, const SamplingParamsCuda* params,
                                        uint32_t* workspace) {
  return launch(logits, params, nullptr, workspace);
}

at::Tensor DeviceSampler::sample(const at::Tensor& logits, const std::vector<SamplingState*>& states) {
  const int32_t rows = static_cast<int32_t>(logits.size(0)), vocab = static_cast<int32_t>(logits.size(1));
  if (rows == 0) return at::empty({0}, at::TensorOptions().dtype(at::kLong).device(logits.device()));

  // Each row's controls, then the id lists they point into, in one staged buffer.
  std::vector<SamplingParamsCuda> params(static_cast<size_t>(rows));
  std::vector<int32_t> ids;
  for (int32_t r = 0; r < rows; ++r) {
    const SamplingState& s = *states[static_cast<size_t>(r)];
    SamplingParamsCuda& p = params[static_cast<size_t>(r)];
    p = device_sampling_controls(s);
    p.history_offset = static_cast<int64_t>(ids.size());
    if (s.repetition_penalty != 1.0f && s.history != nullptr) {
      ids.insert(ids.end(),
                 s.history->begin() + static_cast<std::ptrdiff_t>(std::min(s.history_begin, s.history->size())),
                 s.history->end());
    }
    p.history_length = static_cast<int64_t>(ids.size()) - p.history_offset;
    p.suppressed_offset = static_cast<int64_t>(ids.size());
    ids.insert(ids.end(), s.suppressed.begin(), s.suppressed.end());
    p.suppressed_length = static_cast<int64_t>(ids.size()) - p.suppressed_offset;
    p.below_min_offset = static_cast<int64_t>(ids.size());
    ids.insert(ids.end(), s.suppressed_below_min.begin(), s.suppressed_below_min.end());
    p.below_min_length = static_cast<int64_t>(ids.size()) - p.below_min_offset;
  }
  const size_t params_bytes = params.size() * sizeof(SamplingParamsCuda);
  const size_t ids_bytes = ids.size() * sizeof(int32_t);
  at::Tensor host = at::empty({static_cast<int64_t>(params_bytes + ids_bytes)},
                              at::TensorOptions().dtype(at::kByte).pinned_memory(true));
  std::memcpy(host.data_ptr<uint8_t>(), params.data(), params_bytes);
  if (ids_bytes > 0) std::memcpy(host.data_ptr<uint8_t>() + params_bytes, ids.data(), ids_bytes);
  const at::Tensor staged = host.to(logits.device(), at::kByte, /*non_blocking=*/true);

  const int64_t workspace_bytes = static_cast<int64_t>(sampler_workspace_bytes(rows, vocab));
  if (!workspace_.defined() || workspace_.numel() < workspace_bytes || workspace_.device() != logits.device()) {
    workspace_ = at::zeros({workspace_bytes}, at::TensorOptions().dtype(at::kByte).device(logits.device()));
  }
  const at::Tensor sampled = launch(logits, reinterpret_cast<const SamplingParamsCuda*>(staged.data_ptr<uint8_t>()),
                                    reinterpret_cast<const int32_t*>(staged.data_ptr<uint8_t>() + params_bytes),
                                    reinterpret_cast<uint32_t*>(workspace_.data_ptr<uint8_t>()));
  for (SamplingState* s : states) ++s->draws;
  return sampled;
}

#endif  // IZWI_WITH_CUDA

}  // namespace izwi
