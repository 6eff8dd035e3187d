// Fuzz target: any config.json handed to the per-model config readers (Llama/Qwen3, LFM2,
// Qwen3-TTS, its codec, Mimi, the Voxtral audio encoder, LFM2-Audio and its FastConformer and
// log-mel, rope settings, token ids, quantization_config) either parses into values inside the
// documented bounds or raises izwi::Error. Nothing else may happen.

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "audio/nemo_log_mel.h"
#include "codec/mimi_config.h"
#include "codec/qwen3_tts_codec_decoder.h"
#include "fuzz_support.h"
#include "io/hf_config.h"
#include "izwi/errors.h"
#include "models/lfm2.h"
#include "models/lfm2_audio/fast_conformer.h"
#include "models/lfm2_audio/lfm2_audio_config.h"
#include "models/llama.h"
#include "models/qwen3_tts/qwen3_tts_config.h"
#include "models/voxtral_audio_encoder.h"
#include "quant/quantization_config.h"

namespace {

using namespace izwi;

void check_llama(const LlamaConfig& c) {
  const bool ok = c.vocab_size >= 1 && c.vocab_size <= kMaxVocabSize && c.hidden_size >= 1 &&
                  c.hidden_size <= kMaxHiddenSize && c.num_layers >= 1 && c.num_layers <= kMaxLayers &&
                  c.num_heads >= 1 && c.num_heads <= kMaxHeads && c.num_kv_heads >= 1 &&
                  c.num_heads % c.num_kv_heads == 0 && c.head_dim >= 1 && c.head_dim <= kMaxHeadDim &&
                  c.head_dim % 2 == 0 && c.max_positions >= 1 && c.max_positions <= kMaxPositions &&
                  std::isfinite(c.rms_norm_eps) && c.rms_norm_eps >= 0;
  if (!ok) std::abort();  // accepted a config outside the bounds the model code relies on
}

void check_rope(const RopeConfig& r) {
  if (r.type != "default" && r.type != "linear" && r.type != "llama3") std::abort();
}

template <typename F>
void attempt(F&& f) {
  try {
    f();
  } catch (const izwi::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = izwi::fuzz::scratch_dir("hf_config");
  izwi::fuzz::write_file(dir + "/config.json", data, size);
  std::optional<HfConfig> config;
  try {
    config = HfConfig::load(dir);
  } catch (const izwi::Error&) {
    return 0;
  }
  const JsonFields fields = config->fields();
  attempt([&] { (void)config->model_type(); });
  attempt([&] { check_rope(read_rope_config(fields)); });
  attempt([&] { check_llama(LlamaConfig::parse(*config, false)); });
  attempt([&] { check_llama(LlamaConfig::parse(*config, true)); });
  attempt([&] {
    const Lfm2Config c = Lfm2Config::parse(fields);
    if (static_cast<int64_t>(c.is_attention.size()) != c.num_layers) std::abort();
    if (c.conv_kernel < 1 || c.conv_kernel > kMaxConvKernel) std::abort();
  });
  attempt([&] {
    const Qwen3TtsConfig c = Qwen3TtsConfig::parse(*config);
    check_llama(c.talker);
    check_llama(c.code_predictor);
    if (c.num_code_groups < 1) std::abort();
  });
  attempt([&] {
    if (const auto nested = fields.object("decoder_config")) {
      (void)Qwen3TtsCodecConfig::parse(*nested, &fields);
    } else {
      (void)Qwen3TtsCodecConfig::parse(fields, nullptr);
    }
  });
  attempt([&] {
    if (const auto audio = fields.object("audio_config")) {
      const auto text = fields.object("text_config");
      const int64_t hidden = text ? text->get_or<int64_t>("hidden_size", 64) : 64;
      (void)VoxtralEncoderConfig::parse(*audio, fields.get_or<int64_t>("downsample_factor", 4), hidden);
    }
  });
  attempt([&] {
    const MimiConfig c = MimiConfig::parse(fields);
    if (c.samples_per_frame() < 1 || c.quantizer.num_quantizers < 1 || c.quantizer.num_quantizers > kMaxCodebooks ||
        c.quantizer.num_semantic > c.quantizer.num_quantizers || c.hidden_size % c.upsample_groups != 0) {
      std::abort();
    }
  });
  attempt([&] {
    const Lfm2AudioConfig c = Lfm2AudioConfig::parse(*config);
    if (c.depthformer.dim % c.depthformer.heads != 0 || c.depthformer.ffn_dim < 1) std::abort();
  });
  attempt([&] {
    if (const auto encoder = fields.object("encoder")) {
      const FastConformerConfig c = FastConformerConfig::parse(*encoder);
      if (c.d_model < 1 || c.n_heads < 1 || c.d_model % c.n_heads != 0) std::abort();
    }
  });
  attempt([&] {
    if (const auto preprocessor = fields.object("preprocessor")) {
      const NemoLogMelConfig c = NemoLogMelConfig::parse(*preprocessor);
      if (c.hop < 1 || c.win_length < 1 || c.win_length > c.n_fft || c.n_mels < 1) std::abort();
    }
  });
  attempt([&] {
    const QuantizationConfig q = read_quantization_config(fields);
    const bool int4 = q.method == QuantMethod::Gptq || q.method == QuantMethod::Awq;
    if (int4 && (q.bits != 4 || !(q.group_size == -1 || (q.group_size >= 32 && q.group_size <= 128)))) std::abort();
    if (q.method == QuantMethod::Fp8 && q.bits != 8) std::abort();
  });
  for (const char* key : {"eos_token_id", "bos_token_id", "pad_token_id"}) {
    attempt([&] { (void)read_token_ids(fields, key); });
  }
  return 0;
}
