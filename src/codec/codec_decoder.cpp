#include "codec/codec_decoder.h"

#include "codec/codec_checkpoint.h"
#include "codec/mimi_decoder.h"
#include "codec/qwen3_tts_codec_decoder.h"
#include "common/check.h"
#include "common/json_fields.h"

namespace izwi {

std::unique_ptr<CodecDecoder> load_codec_decoder(const std::string& path, const Backend& backend, bool check_finite,
                                                 int32_t num_codebooks) {
  const CodecCheckpoint checkpoint = find_codec_checkpoint(path);
  // The config is checked before any weights are opened.
  std::unique_ptr<WeightLoader> weights;
  const auto open_weights = [&] { weights = open_codec_weights(checkpoint, backend, check_finite); };
  std::unique_ptr<CodecDecoder> decoder;
  switch (checkpoint.kind) {
    case CodecCheckpoint::Kind::kQwen3TtsTokenizer: {
      const JsonFields top(checkpoint.config, checkpoint.config_path);
      const Qwen3TtsCodecConfig config = Qwen3TtsCodecConfig::parse(*top.object("decoder_config"), &top);
      open_weights();
      weights->skip_prefix("encoder.");  // The encoder is load_codec_encoder's.
      decoder = std::make_unique<Qwen3TtsCodecDecoder>(*weights, config, "decoder.");
      break;
    }
    case CodecCheckpoint::Kind::kQwen3TtsDecoder: {
      const JsonFields top(checkpoint.config, checkpoint.config_path);
      const Qwen3TtsCodecConfig config = Qwen3TtsCodecConfig::parse(top, nullptr);
      open_weights();
      decoder = std::make_unique<Qwen3TtsCodecDecoder>(*weights, config, "");
      break;
    }
    case CodecCheckpoint::Kind::kMimi: {
      const MimiConfig config = mimi_config_of(checkpoint);
      const int64_t available = config.quantizer.num_quantizers;
      const int64_t used = num_codebooks == 0 ? available : num_codebooks;
      if (used < 1 || used > available) {
        fail(ErrorCode::InvalidArgument, "num_codebooks {} is outside [1, {}] for the codec in '{}'", num_codebooks,
             available, path);
      }
      open_weights();
      for (const char* part : {"encoder.", "encoder_transformer.", "downsample."}) weights->skip_prefix(part);
      decoder = std::make_unique<MimiDecoder>(*weights, config, "", used);
      break;
    }
  }
  if (num_codebooks != 0 && num_codebooks != decoder->num_codebooks()) {
    fail(ErrorCode::InvalidArgument, "num_codebooks {}: the codec in '{}' decodes exactly {}", num_codebooks, path,
         decoder->num_codebooks());
  }
  weights->finish();
  return decoder;
}

}  // namespace izwi
