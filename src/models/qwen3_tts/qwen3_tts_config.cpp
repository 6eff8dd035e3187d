#include "models/qwen3_tts/qwen3_tts_config.h"

#include <limits>

#include "common/check.h"
#include "io/config_fields.h"

namespace izwi {

namespace {

int32_t token_id(const JsonFields& fields, const std::string& key) {
  const int64_t id = fields.get<int64_t>(key);
  if (id < 0 || id > std::numeric_limits<int32_t>::max()) {
    fail(ErrorCode::InvalidFormat, "{}: field '{}' = {} is not a valid id", fields.origin(), key, id);
  }
  return static_cast<int32_t>(id);
}

std::map<std::string, int32_t> id_map(const JsonFields& fields, const std::string& key, int64_t vocab) {
  std::map<std::string, int32_t> ids;
  const std::optional<JsonFields> object = fields.object(key);
  if (!object) return ids;
  for (const auto& [name, value] : object->json().items()) {
    if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() >= vocab) {
      fail(ErrorCode::InvalidFormat, "{}: {}['{}'] must be an id in [0, {})", fields.origin(), key, name, vocab);
    }
    ids[name] = value.get<int32_t>();
  }
  return ids;
}

// The talker_config fields beside its LlamaConfig.
constexpr ConfigField<Qwen3TtsConfig> kTalkerFields[] = {
    {"text_vocab_size", &Qwen3TtsConfig::text_vocab_size, 1, kMaxVocabSize, kRequired},
    {"text_hidden_size", &Qwen3TtsConfig::text_hidden_size, 1, kMaxHiddenSize, kRequired},
    {"num_code_groups", &Qwen3TtsConfig::num_code_groups, 1, kMaxCodebooks, kRequired},
};

}  // namespace

Qwen3TtsConfig Qwen3TtsConfig::parse(const HfConfig& hf) {
  const JsonFields top = hf.fields();
  const std::optional<JsonFields> talker = top.object("talker_config");
  if (!talker) fail(ErrorCode::InvalidFormat, "{}: talker_config is required", hf.path());
  const std::optional<JsonFields> predictor = talker->object("code_predictor_config");
  if (!predictor) fail(ErrorCode::InvalidFormat, "{}: talker_config.code_predictor_config is required", hf.path());

  Qwen3TtsConfig c;
  c.tts_model_type = top.get_or<std::string>("tts_model_type", "custom_voice");
  if (c.tts_model_type != "custom_voice" && c.tts_model_type != "voice_design" && c.tts_model_type != "base") {
    fail(ErrorCode::Unsupported, "{}: tts_model_type '{}' is not supported (custom_voice, voice_design, base)",
         hf.path(), c.tts_model_type);
  }
  c.tts_model_size = top.get_or<std::string>("tts_model_size", "");
  c.talker = LlamaConfig::parse(JsonFields(talker->json(), hf.path() + ": talker_config"), true);
  c.code_predictor =
      LlamaConfig::parse(JsonFields(predictor->json(), hf.path() + ": talker_config.code_predictor_config"), true);
  read_checked_fields(*talker, kTalkerFields, c);
  if (c.num_code_groups < 2 || c.num_code_groups != predictor->get_or<int32_t>("num_code_groups", c.num_code_groups)) {
    fail(ErrorCode::InvalidFormat, "{}: num_code_groups {} must be >= 2 and equal in talker and code predictor",
         hf.path(), c.num_code_groups);
  }
  c.codec_pad = token_id(*talker, "codec_pad_id");
  c.codec_bos = token_id(*talker, "codec_bos_id");
  c.codec_eos = token_id(*talker, "codec_eos_token_id");
  c.codec_think = token_id(*talker, "codec_think_id");
  c.codec_nothink = token_id(*talker, "codec_nothink_id");
  c.codec_think_bos = token_id(*talker, "codec_think_bos_id");
  c.codec_think_eos = token_id(*talker, "codec_think_eos_id");
  for (int32_t id :
       {c.codec_pad, c.codec_bos, c.codec_eos, c.codec_think, c.codec_nothink, c.codec_think_bos, c.codec_think_eos}) {
    if (id >= c.talker.vocab_size) {
      fail(ErrorCode::InvalidFormat, "{}: codec control id {} is outside talker vocab_size {}", hf.path(), id,
           c.talker.vocab_size);
    }
  }
  c.im_start = token_id(top, "im_start_token_id");
  c.im_end = token_id(top, "im_end_token_id");
  c.tts_pad = token_id(top, "tts_pad_token_id");
  c.tts_bos = token_id(top, "tts_bos_token_id");
  c.tts_eos = token_id(top, "tts_eos_token_id");
  for (int32_t id : {c.im_start, c.im_end, c.tts_pad, c.tts_bos, c.tts_eos}) {
    if (id >= c.text_vocab_size) {
      fail(ErrorCode::InvalidFormat, "{}: text special id {} is outside text_vocab_size {}", hf.path(), id,
           c.text_vocab_size);
    }
  }
  if ((c.text_vocab_size + 1) * (c.talker.vocab_size + 1) > std::numeric_limits<int32_t>::max()) {
    fail(ErrorCode::InvalidFormat, "{}: text_vocab_size {} x codec vocab_size {} is too large", hf.path(),
         c.text_vocab_size, c.talker.vocab_size);
  }
  c.languages = id_map(*talker, "codec_language_id", c.talker.vocab_size);
  c.speakers = id_map(*talker, "spk_id", c.talker.vocab_size);
  if (const std::optional<JsonFields> dialects = talker->object("spk_is_dialect")) {
    for (const auto& [name, value] : dialects->json().items()) {
      if (!value.is_string()) continue;  // false: not a dialect speaker
      const std::string dialect = value.get<std::string>();
      if (c.languages.count(dialect) == 0) {
        fail(ErrorCode::InvalidFormat, "{}: spk_is_dialect['{}'] names '{}', which codec_language_id lacks", hf.path(),
             name, dialect);
      }
      c.speaker_dialects[name] = dialect;
    }
  }
  return c;
}

bool Qwen3TtsConfig::ignores_instruct() const {
  return tts_model_type == "custom_voice" && std::string("0b6").find(tts_model_size) != std::string::npos;
}

}  // namespace izwi
