#include "models/voxtral_realtime.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "common/check.h"
#include "kernels/ops/activation_op.h"
#include "models/voxtral_streaming_input.h"

namespace izwi {

VoxtralRealtimeForConditionalGeneration::VoxtralRealtimeForConditionalGeneration(const HfConfig& hf,
                                                                                 WeightSource& source) {
  const JsonFields top = hf.fields();
  const std::optional<JsonFields> text = top.object("text_config");
  const std::optional<JsonFields> audio = top.object("audio_config");
  if (!text || !audio) fail(ErrorCode::InvalidFormat, "{}: text_config and audio_config are required", hf.path());
  const int64_t vocab = text->get<int64_t>("vocab_size"), hidden = text->get<int64_t>("hidden_size");
  const int64_t intermediate = text->get<int64_t>("intermediate_size"),
                num_layers = text->get<int64_t>("num_hidden_layers");
  const int64_t heads = text->get<int64_t>("num_attention_heads");
  const int64_t kv_heads = text->get_or<int64_t>("num_key_value_heads", heads);
  const int64_t head_dim = text->get_or<int64_t>("head_dim", heads > 0 ? hidden / heads : 0);
  const int64_t max_positions = text->get<int64_t>("max_position_embeddings");
  const double eps = text->get_or<double>("rms_norm_eps", 1e-5);
  const int64_t sliding_window = text->get_or<int64_t>("sliding_window", 0);
  require_in_range(text->origin(), {{"vocab_size", vocab, 1, kMaxVocabSize},
                                    {"hidden_size", hidden, 1, kMaxHiddenSize},
                                    {"intermediate_size", intermediate, 1, kMaxIntermediateSize},
                                    {"num_hidden_layers", num_layers, 1, kMaxLayers},
                                    {"num_attention_heads", heads, 1, kMaxHeads},
                                    {"num_key_value_heads", kv_heads, 1, kMaxHeads},
                                    {"head_dim", head_dim, 1, kMaxHeadDim},
                                    {"max_position_embeddings", max_positions, 1, kMaxPositions},
                                    {"sliding_window", sliding_window, 0, kMaxPositions}});
  require_real_in_range(text->origin(), {{"rms_norm_eps", eps, 0, kMaxNormEps}});
  if (heads % kv_heads != 0 || hidden % 2 != 0) {
    fail(ErrorCode::InvalidFormat, "{}: text_config head counts or hidden_size do not divide", hf.path());
  }
  const int64_t downsample = top.get_or<int64_t>("downsample_factor", 4);
  const int64_t per_token = top.get_or<int64_t>("audio_length_per_tok", 8);
  const int64_t delay_tokens = top.get_or<int64_t>("default_num_delay_tokens", 6);
  require_in_range(hf.path(), {{"downsample_factor", downsample, 1, 64},
                               {"default_num_delay_tokens", delay_tokens, 0, max_positions}});
  if (per_token != 2 * downsample) {
    fail(ErrorCode::Unsupported, "{}: audio_length_per_tok {} != 2 x downsample_factor {}", hf.path(), per_token,
         downsample);
  }
  hidden_size_ = hidden;

  spec_ = base_spec(hf, *text, vocab, hidden, max_positions, GenerationDefaultsRule::HfGenerate);
  spec_.audio_sample_rate = 16000;
  spec_.default_delay_tokens = static_cast<int32_t>(delay_tokens);

  // transformers 5.17 saves the decoder under language_model.model.model; older files under language_model.model.
  const std::string p = source.contains("language_model.model.model.embed_tokens.weight")
                            ? "language_model.model.model."
                            : "language_model.model.";
  embed_tokens_ = Embedding(source, p + "embed_tokens.weight", vocab, hidden);
  SelfAttentionSpec attn;
  attn.hidden_size = hidden;
  attn.num_heads = heads;
  attn.num_kv_heads = kv_heads;
  attn.head_dim = head_dim;
  attn.sliding_window = sliding_window;
  constexpr int64_t kAdaWidth = 32;
  for (int64_t i = 0; i < num_layers; ++i) {
    const std::string l = fmt::format("{}layers.{}.", p, i);
    layers_.push_back(Layer{RMSNorm::load(source, l + "input_layernorm.weight", hidden, eps),
                            SelfAttention(source, l + "self_attn", attn),
                            RMSNorm::load(source, l + "post_attention_layernorm.weight", hidden, eps),
                            Linear::load(source, l + "ada_rms_norm.linear1", kAdaWidth, hidden, false),
                            Linear::load(source, l + "ada_rms_norm.linear2", hidden, kAdaWidth, false),
                            GatedMlp(source, l + "mlp", hidden, intermediate, false, false)});
  }
  norm_ = RMSNorm::load(source, p + "norm.weight", hidden, eps);
  const bool tied = top.get_or<bool>("tie_word_embeddings", text->get_or<bool>("tie_word_embeddings", true));
  lm_head_ = load_output_head(source, embed_tokens_, tied, "language_model.lm_head", vocab, hidden);
  rope_ =
      std::make_unique<RotaryEmbedding>(read_rope_config(*text), head_dim, std::min<int64_t>(max_positions, 1 << 17),
                                        source.device(), source.compute_dtype());
  encoder_ = std::make_unique<VoxtralAudioEncoder>(source, VoxtralEncoderConfig::parse(*audio, downsample, hidden));
  // Sinusoidal time embedding: inv_freq = exp(-ln(10000) * i / (hidden / 2)).
  activations_ = at::TensorOptions().dtype(source.compute_dtype()).device(source.device());
  time_inv_freq_ = at::exp(-std::log(10000.0) * at::arange(hidden / 2, at::kFloat) / static_cast<double>(hidden / 2))
                       .to(source.device());
  spec_.decode_weight_bytes = lm_head_.weight_bytes();
  for (const Layer& layer : layers_)
    spec_.decode_weight_bytes += layer.attention.weight_bytes() + layer.mlp.weight_bytes();
}

std::vector<LayerCacheSpec> VoxtralRealtimeForConditionalGeneration::cache_layout() const {
  std::vector<LayerCacheSpec> layout;
  for (const Layer& layer : layers_) layout.push_back(layer.attention.cache_spec());
  return layout;
}

at::Tensor VoxtralRealtimeForConditionalGeneration::ffn_scales(int64_t delay, const ForwardContext& ctx) const {
  {
    std::lock_guard<std::mutex> lock(ffn_scales_mutex_);
    if (const auto it = ffn_scales_.find(delay); it != ffn_scales_.end()) return it->second;
  }
  const at::Tensor angles = time_inv_freq_ * static_cast<double>(delay);
  const at::Tensor t_cond = at::cat({angles.cos(), angles.sin()}).unsqueeze(0).to(ctx.dtype);
  std::vector<at::Tensor> scales;
  for (const Layer& layer : layers_)
    scales.push_back(
        1 + layer.ada_out(ops::activation(*ctx.backend, layer.ada_in(t_cond, ctx), ops::Activation::Gelu), ctx));
  const at::Tensor all = at::cat(scales, 0);
  std::lock_guard<std::mutex> lock(ffn_scales_mutex_);
  if (ffn_scales_.size() < kCachedDelays) ffn_scales_.emplace(delay, all);
  return all;
}

void VoxtralRealtimeForConditionalGeneration::encode_new_audio(const ForwardContext& ctx) const {
  std::vector<VoxtralAudioEncoder::Job> jobs;
  std::vector<VoxtralStreamingInput*> streams;
  for (size_t i = 0; i < ctx.seqs.size(); ++i) {
    const SeqSlice& s = ctx.seqs[i];
    auto* audio = dynamic_cast<VoxtralStreamingInput*>(ctx.states[i]);
    if (audio == nullptr) continue;
    if (std::optional<VoxtralAudioEncoder::Job> job = audio->encoding_job(s.start_pos + s.length)) {
      jobs.push_back(*job);
      streams.push_back(audio);
    }
  }
  if (jobs.empty()) return;
  const std::vector<at::Tensor> embeddings = encoder_->encode_batch(jobs, ctx);
  for (size_t i = 0; i < jobs.size(); ++i) streams[i]->complete_encoding(embeddings[i]);
}

at::Tensor VoxtralRealtimeForConditionalGeneration::forward(const ForwardContext& ctx, CacheBuffers& cache) const {
  at::Tensor h = embed_tokens_(ctx.input_ids, ctx.dtype);
  encode_new_audio(ctx);
  // Audio embeddings are added position by position; each row's FFN scale follows its delay.
  std::map<int64_t, at::Tensor> scales_by_delay;
  std::vector<int64_t> row_delay(static_cast<size_t>(ctx.num_tokens), spec_.default_delay_tokens);
  for (size_t i = 0; i < ctx.seqs.size(); ++i) {
    const SeqSlice& s = ctx.seqs[i];
    auto* audio = dynamic_cast<VoxtralStreamingInput*>(ctx.states[i]);
    const int64_t delay = audio != nullptr ? audio->delay_tokens() : spec_.default_delay_tokens;
    if (audio != nullptr) h.narrow(0, s.offset, s.length).add_(audio->embeddings(s.start_pos, s.length, ctx));
    std::fill(row_delay.begin() + s.offset, row_delay.begin() + s.offset + s.length, delay);
    if (scales_by_delay.count(delay) == 0) scales_by_delay[delay] = ffn_scales(delay, ctx);
  }
  at::Tensor row_scales;  // [layers, T, hidden], or [layers, 1, hidden] when every row shares a delay
  if (scales_by_delay.size() == 1) {
    row_scales = scales_by_delay.begin()->second.unsqueeze(1);
  } else {
    std::vector<at::Tensor> rows;
    for (int64_t d : row_delay) rows.push_back(scales_by_delay.at(d).unsqueeze(1));
    row_scales = at::cat(rows, 1);
  }
  for (size_t i = 0; i < layers_.size(); ++i) {
    const Layer& layer = layers_[i];
    h.add_(layer.attention(layer.input_norm(h, ctx), *rope_, cache.layer(i), ctx));
    h.add_(layer.mlp(layer.post_attention_norm(h, ctx) * row_scales[static_cast<int64_t>(i)], ctx));
  }
  return norm_(h, ctx);
}

at::Tensor VoxtralRealtimeForConditionalGeneration::logits(const at::Tensor& hidden, const ForwardContext& ctx) const {
  return lm_head_(hidden, ctx);
}

std::unique_ptr<RequestState> VoxtralRealtimeForConditionalGeneration::make_transcription_state(
    const TranscriptionSettings& settings) const {
  return std::make_unique<VoxtralStreamingInput>(*encoder_, settings, hidden_size_, activations_);
}

ModelCapabilities VoxtralRealtimeForConditionalGeneration::capabilities() const {
  ModelCapabilities caps;
  caps.transcriber = this;
  return caps;
}

std::vector<int32_t> VoxtralRealtimeForConditionalGeneration::transcription_prompt(
    const TranscriptionSettings& settings) const {
  if (!spec_.bos_token_id) fail(ErrorCode::InvalidFormat, "voxtral_realtime config has no bos_token_id");
  std::vector<int32_t> prompt{*spec_.bos_token_id};
  prompt.insert(prompt.end(), static_cast<size_t>(settings.delay_tokens), settings.pad_token_id);
  return prompt;
}

}  // namespace izwi
