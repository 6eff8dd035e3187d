#include "models/qwen3_tts/code_predictor.h"

#include <fmt/format.h>

#include "layers/step/step_batch.h"

namespace izwi {

Qwen3TtsCodePredictor::Qwen3TtsCodePredictor(WeightSource& source, const std::string& prefix, const LlamaConfig& c,
                                             int64_t talker_hidden, int32_t num_code_groups)
    : config_(c), num_code_groups_(num_code_groups) {
  for (int64_t i = 0; i < c.num_layers; ++i) {
    layers_.emplace_back(source, fmt::format("{}.model.layers.{}", prefix, i), c.layer_spec());
  }
  norm_ = RMSNorm::load(source, prefix + ".model.norm.weight", c.hidden_size, c.rms_norm_eps);
  for (int32_t k = 0; k + 1 < num_code_groups; ++k) {
    embeddings_.emplace_back(source, fmt::format("{}.model.codec_embedding.{}.weight", prefix, k), c.vocab_size,
                             talker_hidden);
    heads_.push_back(Linear::load(source, fmt::format("{}.lm_head.{}", prefix, k), c.vocab_size, c.hidden_size, false));
  }
  has_projection_ = talker_hidden != c.hidden_size;
  if (has_projection_) {
    projection_ = Linear::load(source, prefix + ".small_to_mtp_projection", c.hidden_size, talker_hidden, true);
  }
  rope_ =
      std::make_unique<RotaryEmbedding>(c.rope, c.head_dim, num_code_groups, source.device(), source.compute_dtype());
}

at::Tensor Qwen3TtsCodePredictor::project(const at::Tensor& x, const ForwardContext& ctx) const {
  return has_projection_ ? projection_(x, ctx) : x;
}

at::Tensor Qwen3TtsCodePredictor::embed(int32_t codebook, const at::Tensor& codes, at::ScalarType dtype) const {
  return embeddings_.at(static_cast<size_t>(codebook - 1))(codes, dtype);
}

int64_t Qwen3TtsCodePredictor::weight_bytes_per_frame() const {
  // Every sub-step reads all layers and one head.
  int64_t layers = has_projection_ ? projection_.weight_bytes() : 0;
  for (const DecoderLayer& layer : layers_) layers += layer.weight_bytes();
  return (num_code_groups_ - 1) * (layers + heads_[0].weight_bytes());
}

/// The chain's sub-steps' contexts for `rows` rows, the same every frame of that many rows:
/// sub-step 0 prefills two positions per row, sub-step j > 0 decodes position j + 1; row r's K/V in
/// block r of the dense scratch. Built in place: the contexts point into `tables`.
struct Qwen3TtsCodePredictor::ChainContexts {
  std::vector<std::vector<int32_t>> tables;
  std::vector<int32_t> unused_ids = std::vector<int32_t>(2, 0);  // inputs are embeddings; ids only size the batch
  std::vector<ForwardContext> steps;

  ChainContexts(int64_t rows, int32_t num_code_groups, const Backend& backend) : tables(static_cast<size_t>(rows)) {
    for (int64_t r = 0; r < rows; ++r) tables[static_cast<size_t>(r)] = {static_cast<int32_t>(r)};
    for (int32_t j = 0; j + 1 < num_code_groups; ++j) {
      StepBatch batch;
      for (int64_t r = 0; r < rows; ++r) {
        StepSequence s;
        s.seq_id = static_cast<uint64_t>(r);
        s.start_pos = j == 0 ? 0 : j + 1;
        s.num_tokens = j == 0 ? 2 : 1;
        s.token_ids = unused_ids.data();
        s.block_table = &tables[static_cast<size_t>(r)];
        batch.seqs.push_back(s);
      }
      steps.push_back(make_forward_context(batch, num_code_groups, backend));
    }
  }
  ChainContexts(const ChainContexts&) = delete;
  ChainContexts& operator=(const ChainContexts&) = delete;
};

std::vector<LayerCacheSpec> Qwen3TtsCodePredictor::cache_layout() const {
  std::vector<LayerCacheSpec> layout;
  for (const DecoderLayer& layer : layers_) layout.push_back(layer.cache_spec());
  return layout;
}

at::Tensor Qwen3TtsCodePredictor::chain(const at::Tensor& inputs, const ChainContexts& contexts,
                                        std::vector<LayerCache>& scratch, const ChainSample& sample) const {
  const int64_t rows = inputs.size(0);
  // Each sub-step's ids stay where they were drawn and feed the next embedding there: the frame's
  // codebooks come back to the host in one copy at the end, not one per codebook.
  std::vector<at::Tensor> sampled;
  at::Tensor x = inputs.reshape({2 * rows, inputs.size(2)});
  for (int32_t j = 0; j + 1 < num_code_groups_; ++j) {
    const ForwardContext& ctx = contexts.steps[static_cast<size_t>(j)];
    at::Tensor h = project(x, ctx);
    for (size_t i = 0; i < layers_.size(); ++i) layers_[i](h, *rope_, scratch[i], ctx);
    if (j == 0) h = h.view({rows, 2, -1}).select(1, 1);
    sampled.push_back(sample(j, heads_[static_cast<size_t>(j)](norm_(h.contiguous(), ctx), ctx)));
    if (j + 2 < num_code_groups_) x = embed(j + 1, sampled.back().to(inputs.device()), ctx.dtype);
  }
  return at::stack(sampled, 1);  // [rows, G - 1]
}

std::vector<std::vector<int32_t>> Qwen3TtsCodePredictor::predict(const at::Tensor& talker_hidden,
                                                                 const at::Tensor& code0_embedding,
                                                                 const std::vector<SamplingState*>& sampling,
                                                                 Sampler& sampler, CacheBuffers& cache,
                                                                 const ForwardContext& outer) const {
  const int64_t rows = talker_hidden.size(0);
  const Backend& backend = *outer.backend;
  const at::Tensor inputs = at::stack({talker_hidden, code0_embedding}, 1);  // [rows, 2, talker_hidden]
  // A bucket's graph owns its contexts and its own scratch K/V: the shared scratch is reallocated
  // when an eager frame brings more rows, which a graph's fixed addresses cannot follow.
  const auto make_chain = [&](int32_t bucket) -> FrameChain {
    auto contexts = std::make_shared<const ChainContexts>(bucket, num_code_groups_, backend);
    auto scratch = std::make_shared<std::vector<LayerCache>>();
    for (const LayerCache& shared : cache.scratch(cache_layout(), bucket, num_code_groups_)) {
      LayerCache own;
      own.key = at::zeros_like(shared.key.narrow(0, 0, bucket));
      own.value = at::zeros_like(shared.value.narrow(0, 0, bucket));
      scratch->push_back(own);
    }
    return [this, contexts, scratch](const at::Tensor& in, const ChainSample& sample) {
      return chain(in, *contexts, *scratch, sample);
    };
  };
  const auto eager = [&] {
    const ChainContexts contexts(rows, num_code_groups_, backend);
    std::vector<LayerCache>& scratch = cache.scratch(cache_layout(), rows, num_code_groups_);
    return chain(inputs, contexts, scratch, [&](int32_t, const at::Tensor& logits) {
      return sampler.sample_rows_on_device(logits, sampling, backend);
    });
  };
  return frame_codes(frame_chain_ids(
      graphs_, FrameChainSettings{&backend, num_code_groups_ - 1, config_.vocab_size, backend.max_graph_batch()},
      inputs, sampling, make_chain, eager));
}

}  // namespace izwi
