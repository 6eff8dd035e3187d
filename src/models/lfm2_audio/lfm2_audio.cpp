#include "models/lfm2_audio/lfm2_audio.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "audio/sample_checks.h"
#include "codec/codec_checkpoint.h"
#include "codec/warm_codec_states.h"
#include "common/check.h"
#include "izwi/audio.h"
#include "kernels/backend.h"
#include "layers/index_tensor.h"
#include "layers/linear.h"
#include "layers/step/sampling_state.h"

namespace izwi {

namespace {

const Lfm2AudioRequestState* audio_state(const RequestState* state) {
  return dynamic_cast<const Lfm2AudioRequestState*>(state);
}

/// The batch norms' step counters (int64, training only) are not weights.
FastConformerEncoder load_encoder(WeightSource& source, const FastConformerConfig& config) {
  for (int64_t i = 0; i < config.n_layers; ++i) {
    const std::string counter = fmt::format("conformer.layers.{}.conv.batch_norm.num_batches_tracked", i);
    if (source.contains(counter)) source.skip(counter);
  }
  return FastConformerEncoder(source, config, "conformer");
}

}  // namespace

Lfm2AudioForConditionalGeneration::Lfm2AudioForConditionalGeneration(const HfConfig& hf, WeightSource& source)
    : config_(Lfm2AudioConfig::parse(hf)),
      backbone_(source, "lfm", config_.lfm),
      encoder_(load_encoder(source, config_.encoder)),
      adapter_(source, encoder_.config().d_model, config_.lfm.hidden_size, "audio_adapter.model") {
  const Lfm2Config& c = config_.lfm;
  spec_ = base_spec(hf, *hf.fields().object("lfm"), c.vocab_size, c.hidden_size, c.max_positions,
                    GenerationDefaultsRule::Lfm2Audio);
  spec_.needs_state_slots = true;
  spec_.graph_safe_decode_from_embeddings = true;  // the backbone; the head (text or depthformer) is sample()
  spec_.audio_sample_rate = static_cast<int32_t>(config_.mel.sample_rate);
  // The text head is the token embedding (liquid-audio ties them).
  text_head_ = backbone_.embed_tokens().tie_output_head(source.cpu_kernels(), source.backend().weight_quantization());
  const int64_t audio_vocab = config_.depthformer.vocab;
  audio_embedding_ =
      source.take_matrix("audio_embedding.embedding.weight", {config_.codebooks * audio_vocab, c.hidden_size});
  // Training-only parts of the audio embedding and buffers the released code registers.
  for (const char* unused : {"audio_embedding.embedding_norm.weight", "audio_embedding.to_logits.weight",
                             "codebook_offsets", "audio_loss_weights"}) {
    if (source.contains(unused)) source.skip(unused);
  }
  depthformer_ = Depthformer(source, config_.depthformer);
  keys_ = std::make_unique<EmbeddingKeys>(c.vocab_size);
  spec_.num_codebooks = static_cast<int32_t>(config_.codebooks);
  if (!moshi_tokenizer_file(hf.model_dir()).empty()) {
    codec_ = load_codec_decoder(hf.model_dir(), source.backend(), source.check_finite(),
                                static_cast<int32_t>(config_.codebooks));
    if (codec_->codebook_size() != Lfm2AudioConfig::kEndOfAudio) {
      fail(ErrorCode::InvalidFormat, "{}: the codec has {} codes per codebook; LFM2-Audio's frames need {}",
           hf.model_dir(), codec_->codebook_size(), Lfm2AudioConfig::kEndOfAudio);
    }
    spec_.output_sample_rate = codec_->sample_rate();
  }
  // The weights a step touches: the backbone, the tied head and, for a frame, the depthformer.
  spec_.decode_weight_bytes = backbone_.layer_weight_bytes() + text_head_.weight_bytes() + depthformer_.weight_bytes();
}

at::Tensor Lfm2AudioForConditionalGeneration::encode_audio(const std::vector<float>& samples) const {
  // The samples cross to the model's device once; the log-mel and the embeddings stay there.
  const at::Tensor mel = nemo_log_mel(at::tensor(samples, at::kFloat).to(audio_embedding_.device()), config_.mel);
  return adapter_(encoder_.encode(mel)).to(at::kFloat).contiguous();
}

int64_t Lfm2AudioForConditionalGeneration::audio_positions(int64_t samples) const {
  return encoder_.output_frames(nemo_log_mel_frames(samples, config_.mel));  // the adapter keeps the length
}

std::unique_ptr<Lfm2AudioRequestState> Lfm2AudioForConditionalGeneration::make_state(Lfm2AudioPrompt prompt,
                                                                                     Lfm2AudioGeneration mode) const {
  if (prompt.audio_in.defined() && (prompt.audio_in.dim() != 2 || prompt.audio_in.size(1) != config_.lfm.hidden_size)) {
    fail(ErrorCode::InvalidArgument, "audio-in embeddings must be [positions, {}]", config_.lfm.hidden_size);
  }
  for (const int32_t id : prompt.text_ids) {
    if (id < 0 || id >= config_.lfm.vocab_size) {
      fail(ErrorCode::InvalidArgument, "text id {} is outside the vocabulary [0, {})", id, config_.lfm.vocab_size);
    }
  }
  for (size_t f = 0; f < prompt.audio_out.size(); ++f) {
    if (static_cast<int64_t>(prompt.audio_out[f].size()) != config_.codebooks) {
      fail(ErrorCode::InvalidArgument, "audio-out frame {} has {} codes; this model's frames have {}", f,
           prompt.audio_out[f].size(), config_.codebooks);
    }
    for (const int32_t code : prompt.audio_out[f]) {
      if (code < 0 || code > Lfm2AudioConfig::kEndOfAudio) {
        fail(ErrorCode::InvalidArgument, "audio-out frame {}: code {} is outside [0, {}]", f, code,
             Lfm2AudioConfig::kEndOfAudio);
      }
    }
  }
  return std::make_unique<Lfm2AudioRequestState>(std::move(prompt), mode, config_.interleaved_n_text);
}

ModelCapabilities Lfm2AudioForConditionalGeneration::capabilities() const {
  ModelCapabilities caps;
  caps.audio_chat = this;
  if (codec_) caps.audio_decoder = this;
  return caps;
}

SpeechPrompt Lfm2AudioForConditionalGeneration::audio_chat_prompt(const AudioChatRequest& request,
                                                                  const Tokenizer* tokenizer) const {
  const bool token_level = !request.pre_ids.empty() || !request.post_ids.empty();
  if (token_level && (!request.system.empty() || !request.text.empty())) {
    fail(ErrorCode::InvalidArgument, "give the prompt one way: pre_ids / post_ids, or system and text");
  }
  if (request.max_items < 1) fail(ErrorCode::InvalidArgument, "max_items = {} must be >= 1", request.max_items);
  Lfm2AudioPrompt prompt;
  std::vector<at::Tensor> audio_rows;
  const auto add_ids = [&](const std::vector<int32_t>& ids) {
    for (const int32_t id : ids) {
      prompt.modality.push_back(Lfm2AudioModality::kText);
      prompt.text_ids.push_back(id);
    }
  };
  // liquid-audio's ChatState tokenizes each piece on its own.
  const auto add_text = [&](const std::string& text) {
    if (text.empty()) return;
    if (tokenizer == nullptr) {
      fail(ErrorCode::InvalidArgument,
           "the chat template needs the model folder's tokenizer, which it does not have; pass pre_ids and post_ids "
           "and give the history as ids");
    }
    add_ids(tokenizer->encode(text, false));
  };
  const auto add_audio = [&](const std::vector<float>& samples, int32_t sample_rate, const std::string& what) {
    check_sample_rate(sample_rate, "sample_rate", what);
    check_samples(samples.data(), samples.size(), what);
    const int32_t rate = static_cast<int32_t>(config_.mel.sample_rate);
    const std::vector<float> at_rate = sample_rate == rate ? samples : resample(samples, sample_rate, rate);
    // Sized before it is encoded (the encoder's memory grows with the audio): audio that cannot
    // fit the context is refused as the engine would refuse the finished prompt.
    const int64_t before = static_cast<int64_t>(prompt.modality.size());
    const int64_t positions = audio_positions(static_cast<int64_t>(at_rate.size()));
    if (before + positions > spec_.max_positions) {
      fail(ErrorCode::InvalidArgument,
           "{}: {:.1f} s of audio make {} audio positions; after the {} positions before them the prompt exceeds "
           "the limit of {} positions",
           what, static_cast<double>(at_rate.size()) / rate, positions, before, spec_.max_positions);
    }
    audio_rows.push_back(encode_audio(at_rate));
    IZWI_CHECK(audio_rows.back().size(0) == positions, "{} audio positions, {} expected", audio_rows.back().size(0),
               positions);
    prompt.modality.insert(prompt.modality.end(), static_cast<size_t>(audio_rows.back().size(0)),
                           Lfm2AudioModality::kAudioIn);
  };
  const auto add_turn = [&](const std::string& role, const auto& add_content) {
    if (!role.empty()) add_text("<|im_start|>" + role + "\n");
    add_content();
    if (!role.empty()) add_text("<|im_end|>\n");
  };

  if (!token_level) {
    add_text("<|startoftext|>");
    if (!request.system.empty()) add_turn("system", [&] { add_text(request.system); });
  }
  for (size_t m = 0; m < request.history.size(); ++m) {
    const AudioChatMessage& message = request.history[m];
    if (!message.role.empty() && message.role != "system" && message.role != "user" && message.role != "assistant") {
      fail(ErrorCode::InvalidArgument, "history[{}].role = '{}' must be system, user, assistant or empty (token level)",
           m, message.role);
    }
    add_turn(message.role, [&] {
      for (size_t i = 0; i < message.parts.size(); ++i) {
        const AudioChatPart& part = message.parts[i];
        const int kinds = !part.text.empty() + !part.text_ids.empty() + !part.audio.empty() + !part.frames.empty();
        if (kinds != 1) {
          fail(ErrorCode::InvalidArgument, "history[{}].parts[{}] must hold one of text, text_ids, audio or frames", m,
               i);
        }
        add_text(part.text);
        add_ids(part.text_ids);
        if (!part.audio.empty())
          add_audio(part.audio, part.sample_rate, fmt::format("history[{}].parts[{}] audio", m, i));
        for (const std::vector<int32_t>& frame : part.frames) {
          prompt.modality.push_back(Lfm2AudioModality::kAudioOut);
          prompt.audio_out.push_back(frame);
        }
      }
    });
  }
  if (token_level) {
    add_ids(request.pre_ids);
    if (!request.audio.empty()) add_audio(request.audio, request.sample_rate, "audio chat audio");
    add_ids(request.post_ids);
  } else {
    add_turn("user", [&] {
      if (!request.audio.empty()) add_audio(request.audio, request.sample_rate, "audio chat audio");
      add_text(request.text);
    });
    add_text("<|im_start|>assistant\n");
  }
  if (!audio_rows.empty()) prompt.audio_in = at::cat(audio_rows, 0);

  const Lfm2AudioGeneration mode =
      request.mode == AudioChatMode::Interleaved ? Lfm2AudioGeneration::kInterleaved : Lfm2AudioGeneration::kSequential;
  std::unique_ptr<Lfm2AudioRequestState> state = make_state(std::move(prompt), mode);
  SpeechPrompt out;
  // Every position is keyed by its input (text id, audio row, frame), generated ones too (sample()
  // gives frames their keys), so the whole conversation can be reused by its next turn.
  // The audio rows' keys hash their values: one copy of the turn's embeddings to the host.
  const at::Tensor audio_in = state->prompt().audio_in;
  const at::Tensor host_audio = audio_in.defined() ? audio_in.to(at::kCPU, at::kFloat).contiguous() : audio_in;
  for (int64_t p = 0; p < state->prompt_length(); ++p) {
    const int32_t index = state->index_of(p);
    switch (state->prompt().modality[static_cast<size_t>(p)]) {
      case Lfm2AudioModality::kText:
        out.keys.push_back(state->prompt().text_ids[static_cast<size_t>(index)]);
        break;
      case Lfm2AudioModality::kAudioIn: {
        const at::Tensor row = host_audio[index];  // a row of a contiguous matrix
        out.keys.push_back(keys_->key_of({row.data_ptr<float>(), row.data_ptr<float>() + row.numel()}));
        break;
      }
      case Lfm2AudioModality::kAudioOut:
        out.keys.push_back(keys_->key_of_frame(state->prompt().audio_out[static_cast<size_t>(index)], -1));
        break;
    }
  }
  out.cacheable_positions = std::numeric_limits<int32_t>::max();
  out.params.max_tokens = request.max_items;
  out.codebook_sampling = &state->audio_sampling;
  state->decodes_audio = codec_ != nullptr;
  out.state = std::move(state);
  return out;
}

std::vector<std::vector<float>> Lfm2AudioForConditionalGeneration::decode_audio(
    const std::vector<RequestState*>& states, const std::vector<int32_t>& num_frames) const {
  IZWI_CHECK(codec_ != nullptr, "decode_audio without a codec");
  std::vector<CodecDecoderState*> codec_states;
  std::vector<at::Tensor> codes;
  std::vector<size_t> decoded;  // which outputs come from the codec
  std::vector<std::vector<float>> out(states.size());
  for (size_t i = 0; i < states.size(); ++i) {
    auto* state = dynamic_cast<Lfm2AudioRequestState*>(states[i]);
    IZWI_CHECK(state != nullptr, "an lfm2_audio sequence has no LFM2-Audio request state");
    if (!state->codec) state->codec = codec_->new_state();
    // The next num_frames[i] frames, without end-of-audio frames (they carry no audio).
    std::vector<std::vector<int32_t>> frames;
    size_t seen = 0;
    for (const StepOutput& item : state->items) {
      if (item.codes.empty()) continue;
      if (seen++ < state->frames_decoded) continue;
      if (static_cast<int32_t>(seen - 1 - state->frames_decoded) >= num_frames[i]) break;
      if (item.codes[0] != Lfm2AudioConfig::kEndOfAudio) frames.push_back(item.codes);
    }
    state->frames_decoded += static_cast<size_t>(num_frames[i]);
    if (frames.empty()) continue;
    codec_states.push_back(state->codec.get());
    codes.push_back(frames_to_codes(frames, 0, frames.size()));
    decoded.push_back(i);
  }
  if (codes.empty()) return out;
  const std::vector<at::Tensor> pcm = codec_->decode_streaming(codec_states, codes);
  for (size_t j = 0; j < decoded.size(); ++j) {
    const at::Tensor s = pcm[j].to(at::kCPU, at::kFloat).contiguous();
    out[decoded[j]].assign(s.data_ptr<float>(), s.data_ptr<float>() + s.numel());
  }
  return out;
}

at::Tensor Lfm2AudioForConditionalGeneration::frame_embeddings(const at::Tensor& ids, const ForwardContext& ctx) const {
  return at::embedding(audio_embedding_, ids)
      .view({-1, config_.codebooks, audio_embedding_.size(1)})
      .sum(1)
      .to(ctx.dtype);
}

at::Tensor Lfm2AudioForConditionalGeneration::input_embeddings(const ForwardContext& ctx) const {
  const at::Device device = ctx.input_ids.device();
  // Rows that take a token id come from input_ids unless the request's state gives another id.
  at::Tensor ids = ctx.input_ids.clone();
  std::vector<int64_t> audio_rows, frame_rows;
  std::vector<at::Tensor> audio;
  std::vector<const std::vector<int32_t>*> frames;
  std::vector<int64_t> text_rows, text_ids;
  for (size_t seq = 0; seq < ctx.seqs.size(); ++seq) {
    const Lfm2AudioRequestState* state = audio_state(ctx.states[seq]);
    if (state == nullptr) continue;
    const SeqSlice& s = ctx.seqs[seq];
    for (int64_t i = 0; i < s.length; ++i) {
      const int64_t pos = s.start_pos + i, row = s.offset + i;
      if (pos < state->prompt_length()) {
        const int32_t index = state->index_of(pos);
        switch (state->prompt().modality[static_cast<size_t>(pos)]) {
          case Lfm2AudioModality::kText:
            text_rows.push_back(row), text_ids.push_back(state->prompt().text_ids[static_cast<size_t>(index)]);
            break;
          case Lfm2AudioModality::kAudioIn:
            audio_rows.push_back(row), audio.push_back(state->prompt().audio_in[index]);
            break;
          case Lfm2AudioModality::kAudioOut:
            frame_rows.push_back(row), frames.push_back(&state->prompt().audio_out[static_cast<size_t>(index)]);
            break;
        }
        continue;
      }
      const size_t item = static_cast<size_t>(pos - state->prompt_length());
      IZWI_CHECK(item < state->items.size(), "position {} has no item ({} generated)", pos, state->items.size());
      const StepOutput& out = state->items[item];
      if (out.codes.empty()) {
        text_rows.push_back(row), text_ids.push_back(out.token);
      } else {
        frame_rows.push_back(row), frames.push_back(&out.codes);
      }
    }
  }
  // Embedding rows that are not text are overwritten below; their id only has to be in range.
  std::vector<int64_t> other_rows = audio_rows;
  other_rows.insert(other_rows.end(), frame_rows.begin(), frame_rows.end());
  const int64_t vocab = config_.depthformer.vocab;
  std::vector<int64_t> frame_ids;  // audio_embedding rows: code k of a frame is row code + k * vocab
  for (const std::vector<int32_t>* frame : frames) {
    for (int64_t k = 0; k < config_.codebooks; ++k) frame_ids.push_back((*frame)[static_cast<size_t>(k)] + k * vocab);
  }
  // Every list of the step crosses to the device in one copy.
  const std::vector<at::Tensor> index =
      index_tensors({&text_rows, &text_ids, &other_rows, &audio_rows, &frame_rows, &frame_ids}, device);
  if (!text_rows.empty()) ids.index_put_({index[0]}, index[1]);
  if (!other_rows.empty()) ids.index_fill_(0, index[2], 0);
  at::Tensor h = backbone_.embed_tokens()(ids, ctx.dtype);
  if (!audio_rows.empty()) h.index_copy_(0, index[3], at::stack(audio).to(device, ctx.dtype));
  if (!frame_rows.empty()) h.index_copy_(0, index[4], frame_embeddings(index[5], ctx));
  return h;
}

at::Tensor Lfm2AudioForConditionalGeneration::forward_embeddings(at::Tensor h, const ForwardContext& ctx,
                                                                 CacheBuffers& cache) const {
  return backbone_.forward(std::move(h), ctx, cache);
}

at::Tensor Lfm2AudioForConditionalGeneration::logits(const at::Tensor& hidden, const ForwardContext& ctx) const {
  return text_head_(hidden, ctx);
}

std::vector<StepOutput> Lfm2AudioForConditionalGeneration::sample(const at::Tensor& hidden,
                                                                  const std::vector<SampleRow>& rows,
                                                                  const ForwardContext& ctx, CacheBuffers& cache,
                                                                  Sampler& sampler) const {
  std::vector<StepOutput> outputs(rows.size());
  std::vector<int64_t> text_rows, audio_rows;
  for (size_t i = 0; i < rows.size(); ++i) {
    auto* state = dynamic_cast<Lfm2AudioRequestState*>(rows[i].state);
    (state != nullptr && state->audio_next ? audio_rows : text_rows).push_back(static_cast<int64_t>(i));
  }
  const std::vector<at::Tensor> index = index_tensors({&text_rows, &audio_rows}, hidden.device());
  if (!text_rows.empty()) {
    std::vector<SamplingState*> states;
    for (const int64_t i : text_rows) states.push_back(rows[static_cast<size_t>(i)].sampling);
    const std::vector<int32_t> ids =
        sampler.sample_rows(logits(hidden.index_select(0, index[0]), ctx), states, *ctx.backend);
    for (size_t j = 0; j < text_rows.size(); ++j) outputs[static_cast<size_t>(text_rows[j])].token = ids[j];
  }
  if (!audio_rows.empty()) {
    std::vector<SamplingState*> sampling;
    for (const int64_t i : audio_rows) {
      sampling.push_back(&dynamic_cast<Lfm2AudioRequestState*>(rows[static_cast<size_t>(i)].state)->audio_sampling);
    }
    const std::vector<std::vector<int32_t>> frames =
        depthformer_.frames(hidden.index_select(0, index[1]), sampling, sampler, *ctx.backend);
    for (size_t j = 0; j < audio_rows.size(); ++j) outputs[static_cast<size_t>(audio_rows[j])].codes = frames[j];
  }
  (void)cache;

  // The modality rules of liquid-audio's generation loops.
  const Lfm2AudioConfig& c = config_;
  for (size_t i = 0; i < rows.size(); ++i) {
    auto* state = dynamic_cast<Lfm2AudioRequestState*>(rows[i].state);
    if (state == nullptr) continue;
    StepOutput& out = outputs[i];
    const bool interleaved = state->mode == Lfm2AudioGeneration::kInterleaved;
    if (interleaved) --state->modality_left;
    if (!state->audio_next) {
      if (out.token == Lfm2AudioConfig::kImEnd) {
        // Both modes stop; sequential mode yields the token, interleaved mode does not.
        state->ended = true;
        if (!interleaved) state->items.push_back(out);
        continue;
      }
      if (interleaved) {
        if (out.token == Lfm2AudioConfig::kTextEnd) state->text_done = true;
        if (state->modality_left == 0 || state->text_done) {
          state->audio_next = true;
          state->modality_left = c.interleaved_n_audio;
        }
      } else if (out.token == Lfm2AudioConfig::kAudioStart) {
        state->audio_next = true;
      }
    } else {
      if (interleaved && state->modality_left == 0 && !state->text_done) {
        state->audio_next = false;
        state->modality_left = c.interleaved_n_text;
      }
      if (out.codes[0] == Lfm2AudioConfig::kEndOfAudio) {
        std::fill(out.codes.begin(), out.codes.end(), Lfm2AudioConfig::kEndOfAudio);
        state->audio_next = false;
      }
      out.token = keys_->key_of_frame(out.codes, -1);
    }
    state->items.push_back(out);
  }
  return outputs;
}

}  // namespace izwi
