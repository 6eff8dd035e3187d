#include "models/qwen3_tts/qwen3_tts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "audio/sample_checks.h"
#include "common/check.h"
#include "kernels/ops/activation_op.h"
#include "layers/index_tensor.h"

namespace izwi {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Text given as a string (tokenized inside the released chat framing) or as complete ids.
std::vector<int32_t> resolve_text(const std::string& text, const std::vector<int32_t>& ids, const char* field,
                                  const std::string& prefix, const std::string& suffix, const Tokenizer* tokenizer) {
  if (!text.empty() && !ids.empty()) {
    fail(ErrorCode::InvalidArgument, "give {} one way: {} or {}_ids", field, field, field);
  }
  if (text.empty()) return ids;
  if (tokenizer == nullptr) {
    fail(ErrorCode::InvalidArgument,
         "{} needs a tokenizer and the model folder has none (tokenizer.json, or vocab.json + merges.txt); pass "
         "{}_ids",
         field, field);
  }
  return tokenizer->encode(prefix + text + suffix, false);
}

Qwen3TtsRequestState& tts_state(RequestState* state) {
  auto* tts = dynamic_cast<Qwen3TtsRequestState*>(state);
  IZWI_CHECK(tts != nullptr, "a qwen3_tts sequence has no Qwen3-TTS request state");
  return *tts;
}

}  // namespace

Qwen3TtsForConditionalGeneration::Qwen3TtsForConditionalGeneration(const HfConfig& hf, WeightSource& source)
    : config_(Qwen3TtsConfig::parse(hf)) {
  const Qwen3TtsConfig& c = config_;
  const LlamaConfig& t = c.talker;
  spec_ = base_spec(hf, hf.fields(), t.vocab_size, t.hidden_size, t.max_positions, GenerationDefaultsRule::Qwen3Tts);
  spec_.eos_token_ids = {c.codec_eos};
  spec_.bos_token_id.reset();
  spec_.graph_safe_decode_from_embeddings = true;  // the talker's layers; the frame's head is sample()

  codec_embedding_ = Embedding(source, "talker.model.codec_embedding.weight", t.vocab_size, t.hidden_size);
  text_embedding_ = Embedding(source, "talker.model.text_embedding.weight", c.text_vocab_size, c.text_hidden_size);
  text_fc1_ = Linear::load(source, "talker.text_projection.linear_fc1", c.text_hidden_size, c.text_hidden_size, true);
  text_fc2_ = Linear::load(source, "talker.text_projection.linear_fc2", t.hidden_size, c.text_hidden_size, true);
  for (int64_t i = 0; i < t.num_layers; ++i) {
    layers_.emplace_back(source, fmt::format("talker.model.layers.{}", i), t.layer_spec());
  }
  norm_ = RMSNorm::load(source, "talker.model.norm.weight", t.hidden_size, t.rms_norm_eps);
  codec_head_ = Linear::load(source, "talker.codec_head", t.vocab_size, t.hidden_size, false);
  // M-RoPE with three equal position rows (as speech prompts have) is plain RoPE.
  rope_ = std::make_unique<RotaryEmbedding>(t.rope, t.head_dim, std::min<int64_t>(t.max_positions, 1 << 17),
                                            source.device(), source.compute_dtype());
  code_predictor_ = std::make_unique<Qwen3TtsCodePredictor>(source, "talker.code_predictor", c.code_predictor,
                                                            t.hidden_size, c.num_code_groups);

  if (c.tts_model_type == "base") {
    const SpeakerEncoderConfig encoder = speaker_encoder_config(hf);
    // The x-vector is summed with the talker's codec embeddings, so it must be as wide.
    if (encoder.enc_dim != t.hidden_size) {
      fail(ErrorCode::InvalidFormat, "{}: speaker_encoder_config.enc_dim = {} must equal the talker's hidden_size {}",
           hf.path(), encoder.enc_dim, t.hidden_size);
    }
    speaker_encoder_ = std::make_unique<SpeakerEncoder>(source, "speaker_encoder.", encoder);
  }
  warm_codecs_ = std::make_unique<WarmCodecStates>(kWarmCodecVoices);
  voice_keys_ = std::make_unique<EmbeddingKeys>(tts_first_vector_key(c.text_vocab_size, t.vocab_size));

  const std::string codec_dir = hf.model_dir() + "/speech_tokenizer";
  codec_ = load_codec_decoder(codec_dir, source.backend(), source.check_finite());
  if (codec_->num_codebooks() != c.num_code_groups || codec_->codebook_size() != c.code_predictor.vocab_size) {
    fail(ErrorCode::InvalidFormat, "{}: the codec has {} codebooks of {} codes, but {} has {} of {}", codec_dir,
         codec_->num_codebooks(), codec_->codebook_size(), hf.path(), c.num_code_groups, c.code_predictor.vocab_size);
  }

  if (speaker_encoder_ && holds_codec_encoder(codec_dir)) {
    codec_encoder_ = load_codec_encoder(codec_dir, source.backend(), source.check_finite());
    if (codec_encoder_->default_codebooks() != c.num_code_groups ||
        codec_encoder_->codebook_size() != c.code_predictor.vocab_size) {
      fail(ErrorCode::InvalidFormat, "{}: the codec's encoder gives {} codebooks of {} codes, but {} has {} of {}",
           codec_dir, codec_encoder_->default_codebooks(), codec_encoder_->codebook_size(), hf.path(),
           c.num_code_groups, c.code_predictor.vocab_size);
    }
  }

  spec_.output_sample_rate = codec_->sample_rate();
  spec_.num_codebooks = c.num_code_groups;
  // Codebook 0 never takes a control id, except the end of speech.
  for (int64_t id = std::max<int64_t>(0, t.vocab_size - 1024); id < t.vocab_size; ++id) {
    if (id != c.codec_eos) spec_.suppressed_token_ids.push_back(static_cast<int32_t>(id));
  }
  for (const auto& [name, id] : c.speakers) spec_.speakers.push_back(name);
  for (const auto& [name, id] : c.languages) spec_.languages.push_back(name);
  spec_.decode_weight_bytes = codec_head_.weight_bytes() + code_predictor_->weight_bytes_per_frame();
  for (const DecoderLayer& layer : layers_) spec_.decode_weight_bytes += layer.weight_bytes();
}

std::vector<LayerCacheSpec> Qwen3TtsForConditionalGeneration::cache_layout() const {
  std::vector<LayerCacheSpec> layout;
  for (const DecoderLayer& layer : layers_) layout.push_back(layer.cache_spec());
  return layout;
}

at::Tensor Qwen3TtsForConditionalGeneration::text_track(const at::Tensor& ids, const ForwardContext& ctx) const {
  const at::Tensor x = text_embedding_(ids, ctx.dtype);
  return text_fc2_(ops::activation(*ctx.backend, text_fc1_(x, ctx), ops::Activation::Silu), ctx);
}

at::Tensor Qwen3TtsForConditionalGeneration::input_embeddings(const ForwardContext& ctx) const {
  const int32_t groups = config_.num_code_groups;
  std::vector<int64_t> text_rows, text_ids, codec_rows, codec_ids, frame_rows, vector_rows;
  std::vector<const std::vector<float>*> vectors;
  std::vector<std::vector<int64_t>> frame_codes(static_cast<size_t>(groups));
  for (size_t seq = 0; seq < ctx.seqs.size(); ++seq) {
    const SeqSlice& s = ctx.seqs[seq];
    const Qwen3TtsRequestState& state = tts_state(ctx.states[seq]);
    const TtsPrompt& prompt = state.prompt;
    const int64_t prompt_len = static_cast<int64_t>(prompt.positions.size());
    for (int64_t i = 0; i < s.length; ++i) {
      const int64_t pos = s.start_pos + i, row = s.offset + i;
      if (pos < prompt_len) {
        const TtsPosition& p = prompt.positions[static_cast<size_t>(pos)];
        if (p.text >= 0) text_rows.push_back(row), text_ids.push_back(p.text);
        if (p.codec >= 0) codec_rows.push_back(row), codec_ids.push_back(p.codec);
        if (p.vector >= 0) vector_rows.push_back(row), vectors.push_back(&prompt.vectors[p.vector]);
        if (p.frame >= 0) {
          frame_rows.push_back(row);
          const std::vector<int32_t>& codes = prompt.reference_frames[static_cast<size_t>(p.frame)];
          for (int32_t k = 0; k < groups; ++k) frame_codes[static_cast<size_t>(k)].push_back(codes[k]);
        }
        continue;
      }
      const size_t frame = static_cast<size_t>(pos - prompt_len);
      IZWI_CHECK(frame < state.frames.size(), "position {} has no frame ({} generated)", pos, state.frames.size());
      frame_rows.push_back(row);
      for (int32_t k = 0; k < groups; ++k) frame_codes[static_cast<size_t>(k)].push_back(state.frames[frame][k]);
      text_rows.push_back(row);
      text_ids.push_back(frame < prompt.trailing_text.size() ? prompt.trailing_text[frame] : config_.tts_pad);
    }
  }
  const at::Device device = ctx.input_ids.device();
  // Every index list of the step reaches the device in one copy.
  std::vector<const std::vector<int64_t>*> lists = {&frame_rows,  &codec_rows, &codec_ids,
                                                    &vector_rows, &text_rows,  &text_ids};
  for (const std::vector<int64_t>& codes : frame_codes) lists.push_back(&codes);
  const std::vector<at::Tensor> index = index_tensors(lists, device);
  const auto codebook = [&](int32_t k) { return index[6 + static_cast<size_t>(k)]; };
  at::Tensor h =
      at::zeros({ctx.num_tokens, config_.talker.hidden_size}, at::TensorOptions().dtype(ctx.dtype).device(device));
  if (!frame_rows.empty()) {
    at::Tensor frames = codec_embedding_(codebook(0), ctx.dtype);
    for (int32_t k = 1; k < groups; ++k) frames.add_(code_predictor_->embed(k, codebook(k), ctx.dtype));
    h.index_add_(0, index[0], frames);
  }
  if (!codec_rows.empty()) h.index_add_(0, index[1], codec_embedding_(index[2], ctx.dtype));
  if (!vector_rows.empty()) {
    at::Tensor rows = at::empty({static_cast<int64_t>(vectors.size()), config_.talker.hidden_size}, at::kFloat);
    for (size_t i = 0; i < vectors.size(); ++i) {
      std::copy(vectors[i]->begin(), vectors[i]->end(), rows[static_cast<int64_t>(i)].data_ptr<float>());
    }
    h.index_add_(0, index[3], rows.to(device, ctx.dtype));
  }
  if (!text_rows.empty()) h.index_add_(0, index[4], text_track(index[5], ctx));
  return h;
}

at::Tensor Qwen3TtsForConditionalGeneration::forward_embeddings(at::Tensor h, const ForwardContext& ctx,
                                                                CacheBuffers& cache) const {
  for (size_t i = 0; i < layers_.size(); ++i) layers_[i](h, *rope_, cache.layer(i), ctx);
  return norm_(h, ctx);
}

at::Tensor Qwen3TtsForConditionalGeneration::logits(const at::Tensor& hidden, const ForwardContext& ctx) const {
  return codec_head_(hidden, ctx);
}

std::vector<StepOutput> Qwen3TtsForConditionalGeneration::sample(const at::Tensor& hidden,
                                                                 const std::vector<SampleRow>& rows,
                                                                 const ForwardContext& ctx, CacheBuffers& cache,
                                                                 Sampler& sampler) const {
  std::vector<SamplingState*> states;
  for (const SampleRow& row : rows) states.push_back(row.sampling);
  const std::vector<int32_t> tokens = sampler.sample_rows(logits(hidden, ctx), states, *ctx.backend);
  std::vector<StepOutput> outputs(rows.size());
  std::vector<int64_t> frame_rows, code0;
  std::vector<SamplingState*> subtalker;
  for (size_t i = 0; i < rows.size(); ++i) {
    const int32_t token = tokens[i];
    outputs[i].token = token;
    if (token == config_.codec_eos) continue;  // the end of speech gets no other codebooks
    frame_rows.push_back(static_cast<int64_t>(i));
    code0.push_back(token);
    subtalker.push_back(&tts_state(rows[i].state).subtalker);
  }
  if (frame_rows.empty()) return outputs;
  // The code predictor completes every frame of the step in one batch.
  const std::vector<at::Tensor> index = index_tensors({&frame_rows, &code0}, hidden.device());
  const at::Tensor frame_hidden = hidden.index_select(0, index[0]);
  const std::vector<std::vector<int32_t>> rest =
      code_predictor_->predict(frame_hidden, codec_embedding_(index[1], ctx.dtype), subtalker, sampler, cache, ctx);
  for (size_t j = 0; j < frame_rows.size(); ++j) {
    const size_t i = static_cast<size_t>(frame_rows[j]);
    Qwen3TtsRequestState& state = tts_state(rows[i].state);
    std::vector<int32_t> frame{static_cast<int32_t>(code0[j])};
    frame.insert(frame.end(), rest[j].begin(), rest[j].end());
    state.frames.push_back(frame);
    if (state.record_hidden) state.hidden.push_back(frame_hidden[static_cast<int64_t>(j)].to(at::kCPU, at::kFloat));
    outputs[i].codes = std::move(frame);
  }
  return outputs;
}

ModelCapabilities Qwen3TtsForConditionalGeneration::capabilities() const {
  ModelCapabilities caps;
  caps.speech = this;
  caps.audio_decoder = this;
  if (speaker_encoder_) caps.voice_cloner = this;
  return caps;
}

SpeechPrompt Qwen3TtsForConditionalGeneration::speech_prompt(const SpeechRequest& request,
                                                             const Tokenizer* tokenizer) const {
  const Qwen3TtsConfig& c = config_;
  TtsPromptInputs in;
  in.text_ids = resolve_text(request.text, request.text_ids, "text", "<|im_start|>assistant\n",
                             "<|im_end|>\n<|im_start|>assistant\n", tokenizer);
  if (in.text_ids.empty()) fail(ErrorCode::InvalidArgument, "text is empty: give text or text_ids");
  in.instruct_ids =
      resolve_text(request.instruct, request.instruct_ids, "instruct", "<|im_start|>user\n", "<|im_end|>\n", tokenizer);
  if (c.ignores_instruct()) in.instruct_ids.clear();  // as the released 0.6B CustomVoice wrapper does
  in.speaker = lower(request.speaker);
  if (!request.voice.empty()) {
    check_voice(request.voice);
    in.xvector = request.voice.xvector;
    in.reference_text_ids = request.voice.reference_text_ids;
    in.reference_codes = request.voice.reference_codes;
  }
  in.language = request.language.empty() ? "auto" : lower(request.language);
  // Default: as released, Base models feed the text per frame; the others give it whole first.
  in.streaming_text = request.text_mode == SpeechTextMode::Default ? c.tts_model_type == "base"
                                                                   : request.text_mode == SpeechTextMode::Streaming;

  const SpeechParams& sp = request.params;
  if (sp.max_frames < 1) fail(ErrorCode::InvalidArgument, "params.max_frames = {} must be >= 1", sp.max_frames);
  if (sp.min_frames < 0) fail(ErrorCode::InvalidArgument, "params.min_frames = {} must be >= 0", sp.min_frames);
  SpeechPrompt out;
  GenerationParams& p = out.params;
  p.max_tokens = sp.max_frames;
  p.min_tokens = std::min(sp.min_frames, sp.max_frames);
  auto state = std::make_unique<Qwen3TtsRequestState>();
  out.codebook_sampling = &state->subtalker;
  state->prompt = build_tts_prompt(c, in);
  // A voice's reference is most of an in-context prompt: when no max_frames could make the prompt
  // fit, name the voice (before its frames are embedded, prefilled and decoded).
  const size_t positions = state->prompt.positions.size();
  if (!in.reference_codes.empty() && positions >= static_cast<size_t>(spec_.max_positions)) {
    fail(ErrorCode::InvalidArgument,
         "voice reference_codes ({} frames) and reference_text_ids ({} ids) make a prompt of {} positions; this "
         "model's context (max_position_embeddings) is {}, which leaves no room to speak: use a shorter reference",
         in.reference_codes.size(), in.reference_text_ids.size(), positions, spec_.max_positions);
  }
  out.keys = tts_prompt_keys(state->prompt, c.talker.vocab_size, *voice_keys_);
  out.state = std::move(state);
  return out;
}

void Qwen3TtsForConditionalGeneration::check_voice(const Voice& voice) const {
  if (!speaker_encoder_) {
    fail(ErrorCode::Unsupported, "voices are for Qwen3-TTS Base models; this one is {} (use a named speaker)",
         config_.tts_model_type);
  }
  const int64_t width = config_.talker.hidden_size;
  if (voice.model_type != spec_.model_type || static_cast<int64_t>(voice.xvector.size()) != width) {
    fail(ErrorCode::InvalidArgument,
         "voice was made by another model ({} with a {}-wide x-vector; this {} model needs {} values)",
         voice.model_type.empty() ? std::string("unknown") : voice.model_type, voice.xvector.size(), spec_.model_type,
         width);
  }
  for (size_t i = 0; i < voice.xvector.size(); ++i) {
    if (!std::isfinite(voice.xvector[i])) {
      fail(ErrorCode::InvalidArgument, "voice xvector[{}] = {} is not finite", i, voice.xvector[i]);
    }
  }
}

Voice Qwen3TtsForConditionalGeneration::create_voice(const std::vector<float>& samples, int32_t sample_rate,
                                                     const VoiceTranscript& transcript,
                                                     const Tokenizer* tokenizer) const {
  IZWI_CHECK(speaker_encoder_ != nullptr, "create_voice on a model that does not clone voices");
  if (!transcript.empty() && !codec_encoder_) {
    fail(ErrorCode::Unsupported,
         "in-context cloning (a voice with a transcript) needs the speech tokenizer's encoder, and this model's "
         "speech_tokenizer/ has a decoder only");
  }
  check_sample_rate(sample_rate, "sample_rate", "create_voice");
  check_samples(samples.data(), samples.size(), "create_voice reference audio");
  Voice voice;
  voice.model_type = spec_.model_type;
  if (!transcript.empty()) {
    // As the released code frames ref_text; the prompt builder checks the ids against the vocabulary.
    voice.reference_text_ids = resolve_text(transcript.text, transcript.text_ids, "transcript",
                                            "<|im_start|>assistant\n", "<|im_end|>\n", tokenizer);
  }
  const auto at_rate = [&](int32_t rate) {
    return sample_rate == rate ? samples : resample(samples, sample_rate, rate);
  };
  const at::Tensor xvector = speaker_encoder_->embed(at::tensor(at_rate(speaker_encoder_->config().sample_rate)));
  voice.xvector.assign(xvector.data_ptr<float>(), xvector.data_ptr<float>() + xvector.numel());
  if (!transcript.empty()) {
    const at::Tensor codes = codec_encoder_->encode(at::tensor(at_rate(codec_encoder_->sample_rate())))
                                 .to(at::kInt)
                                 .t()
                                 .contiguous();  // [frames, codebooks]
    for (int64_t f = 0; f < codes.size(0); ++f) {
      voice.reference_codes.emplace_back(codes[f].data_ptr<int32_t>(), codes[f].data_ptr<int32_t>() + codes.size(1));
    }
  }
  return voice;
}

std::vector<std::vector<float>> Qwen3TtsForConditionalGeneration::decode_audio(
    const std::vector<RequestState*>& states, const std::vector<int32_t>& num_frames) const {
  std::vector<CodecDecoderState*> codec_states;
  std::vector<at::Tensor> codes;
  for (size_t i = 0; i < states.size(); ++i) {
    Qwen3TtsRequestState& state = tts_state(states[i]);
    if (!state.codec) {
      // In-context cloning continues the reference audio: the state starts after it (its audio
      // dropped), copied from the voice's earlier requests when there were any.
      state.codec = state.prompt.reference_frames.empty()
                        ? codec_->new_state()
                        : warm_codecs_->state_after(*codec_, state.prompt.reference_frames);
    }
    const int32_t n = num_frames[i];
    IZWI_CHECK(state.frames_decoded + n <= static_cast<int32_t>(state.frames.size()), "{} frames to decode, {} pending",
               n, state.frames.size() - static_cast<size_t>(state.frames_decoded));
    codes.push_back(frames_to_codes(state.frames, static_cast<size_t>(state.frames_decoded), static_cast<size_t>(n)));
    state.frames_decoded += n;
    codec_states.push_back(state.codec.get());
  }
  const std::vector<at::Tensor> pcm = codec_->decode_streaming(codec_states, codes);
  std::vector<std::vector<float>> out;
  for (const at::Tensor& samples : pcm) {
    const at::Tensor s = samples.to(at::kCPU, at::kFloat).contiguous();
    out.emplace_back(s.data_ptr<float>(), s.data_ptr<float>() + s.numel());
  }
  return out;
}

}  // namespace izwi
