#include "models/lfm2_audio/lfm2_audio_config.h"

#include "common/check.h"
#include "io/config_fields.h"

namespace izwi {

namespace {

constexpr ConfigField<Lfm2AudioConfig> kLfm2AudioFields[] = {
    {"codebooks", &Lfm2AudioConfig::codebooks, 1, kMaxCodebooks},
    {"interleaved_n_text", &Lfm2AudioConfig::interleaved_n_text, 1, 1 << 20},
    {"interleaved_n_audio", &Lfm2AudioConfig::interleaved_n_audio, 1, 1 << 20},
};
constexpr ConfigField<DepthformerConfig> kDepthformerFields[] = {
    {"dim", &DepthformerConfig::dim, 1, kMaxHiddenSize, kRequired},
    {"layers", &DepthformerConfig::layers, 1, kMaxLayers, kRequired},
};

}  // namespace

Lfm2AudioConfig Lfm2AudioConfig::parse(const HfConfig& hf) {
  const JsonFields top = hf.fields();
  Lfm2AudioConfig c;
  const std::optional<JsonFields> lfm = top.object("lfm");
  const std::optional<JsonFields> depth = top.object("depthformer");
  const std::optional<JsonFields> encoder = top.object("encoder");
  const std::optional<JsonFields> preprocessor = top.object("preprocessor");
  if (!lfm || !depth || !encoder || !preprocessor) {
    fail(ErrorCode::InvalidFormat, "{}: LFM2-Audio needs sections 'lfm', 'encoder', 'preprocessor' and 'depthformer'",
         hf.path());
  }
  c.lfm = Lfm2Config::parse(*lfm);
  c.encoder = FastConformerConfig::parse(*encoder);
  c.mel = NemoLogMelConfig::parse(*preprocessor);
  read_checked_fields(top, kLfm2AudioFields, c);
  c.tie_audio_embeddings = top.get_or<bool>("tie_audio_embeddings", false);
  DepthformerConfig& d = c.depthformer;
  d.input_dim = c.lfm.hidden_size;
  read_checked_fields(*depth, kDepthformerFields, d);
  d.tie = depth->get_or<bool>("tie", false);
  d.codebooks = c.codebooks;
  if (d.dim % d.heads != 0 || (d.dim / d.heads) % 2 != 0) {
    fail(ErrorCode::InvalidFormat, "{}: depthformer.dim {} must be a multiple of {} heads with an even head size",
         hf.path(), d.dim, d.heads);
  }
  // liquid-audio's GLU: int(2 * 4 * dim / 3), rounded up to a multiple of 256.
  d.ffn_dim = (2 * 4 * d.dim / 3 + 255) / 256 * 256;
  if (c.tie_audio_embeddings) fail(ErrorCode::Unsupported, "{}: tie_audio_embeddings is not supported", hf.path());
  return c;
}

}  // namespace izwi
