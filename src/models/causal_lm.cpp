#include "models/causal_lm.h"

#include <limits>

#include "common/check.h"
#include "io/hf_config.h"

namespace izwi {

ModelSpec base_spec(const HfConfig& hf, const JsonFields& config, int64_t vocab_size, int64_t hidden_size,
                    int64_t max_positions, GenerationDefaultsRule rule) {
  ModelSpec spec;
  spec.model_type = hf.model_type();
  spec.vocab_size = static_cast<int32_t>(vocab_size);
  spec.hidden_size = static_cast<int32_t>(hidden_size);
  spec.max_positions = static_cast<int32_t>(std::min<int64_t>(max_positions, std::numeric_limits<int32_t>::max()));
  spec.eos_token_ids = read_token_ids(config, "eos_token_id");
  const std::vector<int32_t> bos = read_token_ids(config, "bos_token_id");
  if (!bos.empty()) spec.bos_token_id = bos.front();
  const GenerationDefaults defaults = read_generation_defaults(hf.model_dir(), rule);
  spec.default_sampling = defaults.sampling;
  spec.default_codebook_sampling = defaults.codebook_sampling;
  return spec;
}

std::vector<StepOutput> sample_tokens(const at::Tensor& logits, const std::vector<SampleRow>& rows,
                                      const Backend& backend, Sampler& sampler) {
  std::vector<SamplingState*> states;
  for (const SampleRow& row : rows) states.push_back(row.sampling);
  const std::vector<int32_t> ids = sampler.sample_rows(logits, states, backend);
  std::vector<StepOutput> outputs(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) outputs[i].token = ids[i];
  return outputs;
}

at::Tensor CausalLM::forward(const ForwardContext& ctx, CacheBuffers& cache) const {
  return forward_embeddings(input_embeddings(ctx), ctx, cache);
}

at::Tensor CausalLM::input_embeddings(const ForwardContext&) const {
  fail(ErrorCode::Internal, "{} does not split its forward pass: it has no input_embeddings", spec_.model_type);
}

at::Tensor CausalLM::forward_embeddings(at::Tensor, const ForwardContext&, CacheBuffers&) const {
  fail(ErrorCode::Internal, "{} does not split its forward pass: it has no forward_embeddings", spec_.model_type);
}

std::vector<StepOutput> CausalLM::sample(const at::Tensor& hidden, const std::vector<SampleRow>& rows,
                                         const ForwardContext& ctx, CacheBuffers&, Sampler& sampler) const {
  return sample_tokens(logits(hidden, ctx), rows, *ctx.backend, sampler);
}

}  // namespace izwi
