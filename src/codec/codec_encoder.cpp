#include "codec/codec_encoder.h"

#include "codec/codec_checkpoint.h"
#include "codec/mimi_encoder.h"
#include "common/check.h"
#include "common/json_fields.h"
#include "io/hf_config.h"

namespace izwi {

std::unique_ptr<CodecEncoder> load_codec_encoder(const std::string& path, const Backend& backend, bool check_finite) {
  const CodecCheckpoint checkpoint = find_codec_checkpoint(path);
  // The config is checked before any weights are opened.
  std::unique_ptr<WeightLoader> weights;
  const auto open_weights = [&] { weights = open_codec_weights(checkpoint, backend, check_finite); };
  std::unique_ptr<CodecEncoder> encoder;
  switch (checkpoint.kind) {
    case CodecCheckpoint::Kind::kQwen3TtsTokenizer: {
      // The speech tokenizer's encoder is a transformers Mimi of which the model keeps the first
      // encoder_valid_num_quantizers codebooks.
      const JsonFields top(checkpoint.config, checkpoint.config_path);
      const std::optional<JsonFields> nested = top.object("encoder_config");
      if (!nested)
        fail(ErrorCode::Unsupported, "{}: the speech tokenizer has no encoder_config", checkpoint.config_path);
      const MimiConfig config = MimiConfig::parse(*nested);
      const int64_t kept = top.get_or<int64_t>("encoder_valid_num_quantizers", config.quantizer.num_quantizers);
      require_in_range(checkpoint.config_path, {{"encoder_valid_num_quantizers", kept, config.quantizer.num_semantic,
                                                 config.quantizer.num_quantizers}});
      open_weights();
      weights->skip_prefix("decoder.");
      // The released encoder is a MimiModel with its decoder deleted; a file that kept those parts loads too.
      for (const char* part : {"encoder.decoder.", "encoder.decoder_transformer.", "encoder.upsample."}) {
        weights->skip_prefix(part);
      }
      encoder = std::make_unique<MimiEncoder>(*weights, config, "encoder.", static_cast<int32_t>(kept));
      break;
    }
    case CodecCheckpoint::Kind::kQwen3TtsDecoder:
      fail(ErrorCode::Unsupported, "{}: this codec folder holds a decoder only", checkpoint.config_path);
    case CodecCheckpoint::Kind::kMimi: {
      const MimiConfig config = mimi_config_of(checkpoint);
      open_weights();
      for (const char* part : {"decoder.", "decoder_transformer.", "upsample."}) weights->skip_prefix(part);
      encoder =
          std::make_unique<MimiEncoder>(*weights, config, "", static_cast<int32_t>(config.quantizer.num_quantizers));
      break;
    }
  }
  weights->finish();
  return encoder;
}

bool holds_codec_encoder(const std::string& path) {
  const CodecCheckpoint checkpoint = find_codec_checkpoint(path);
  switch (checkpoint.kind) {
    case CodecCheckpoint::Kind::kMimi:
      return true;
    case CodecCheckpoint::Kind::kQwen3TtsDecoder:
      return false;
    case CodecCheckpoint::Kind::kQwen3TtsTokenizer: {
      const auto it = checkpoint.config.find("encoder_config");
      return it != checkpoint.config.end() && it->is_object() && !it->empty();
    }
  }
  return false;
}

}  // namespace izwi
