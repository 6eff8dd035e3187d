#include "models/checkpoint_presets.h"

#include <map>

#include "common/check.h"

namespace izwi {

namespace {

using json = nlohmann::json;

json llama(int hidden, int intermediate, int layers, int heads, int kv_heads, int vocab, int max_positions,
           json rope_parameters) {
  return {{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"}, {"hidden_size", hidden},
          {"intermediate_size", intermediate}, {"num_hidden_layers", layers}, {"num_attention_heads", heads},
          {"num_key_value_heads", kv_heads}, {"head_dim", hidden / heads}, {"vocab_size", vocab},
          {"max_position_embeddings", max_positions}, {"rms_norm_eps", 1e-5}, {"tie_word_embeddings", true},
          {"hidden_act", "silu"}, {"bos_token_id", 1}, {"eos_token_id", 2}, {"rope_parameters", rope_parameters}};
}

json qwen3(int hidden, int intermediate, int layers, int heads, int kv_heads, int head_dim, int vocab,
           int max_positions) {
  return {{"architectures", {"Qwen3ForCausalLM"}}, {"model_type", "qwen3"}, {"hidden_size", hidden},
          {"intermediate_size", intermediate}, {"num_hidden_layers", layers}, {"num_attention_heads", heads},
          {"num_key_value_heads", kv_heads}, {"head_dim", head_dim}, {"vocab_size", vocab},
          {"max_position_embeddings", max_positions}, {"rms_norm_eps", 1e-6}, {"tie_word_embeddings", true},
          {"hidden_act", "silu"}, {"bos_token_id", 1}, {"eos_token_id", 2},
          {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 1000000.0}}}};
}

json lfm2(int hidden, int intermediate, bool auto_adjust, int vocab, int max_positions, const std::vector<std::string>& types,
          int heads, int kv_heads) {
  return {{"architectures", {"Lfm2ForCausalLM"}}, {"model_type", "lfm2"}, {"hidden_size", hidden},
          {"intermediate_size", intermediate}, {"block_auto_adjust_ff_dim", auto_adjust},
          {"block_ffn_dim_multiplier", 1.0}, {"block_multiple_of", 256}, {"num_hidden_layers", types.size()},
          {"layer_types", types}, {"num_attention_heads", heads}, {"num_key_value_heads", kv_heads},
          {"vocab_size", vocab}, {"max_position_embeddings", max_positions}, {"norm_eps", 1e-5},
          {"conv_L_cache", 3}, {"conv_bias", false}, {"tie_word_embeddings", true}, {"bos_token_id", 1},
          {"eos_token_id", 2}, {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 1000000.0}}}};
}

json voxtral(int text_hidden, int text_ffn, int text_layers, int text_heads, int text_kv_heads, int text_head_dim,
             int vocab, int audio_hidden, int audio_ffn, int audio_layers, int audio_heads, int window) {
  const json audio = {{"model_type", "voxtral_realtime_encoder"}, {"hidden_size", audio_hidden},
                      {"intermediate_size", audio_ffn}, {"num_hidden_layers", audio_layers},
                      {"num_attention_heads", audio_heads}, {"num_key_value_heads", audio_heads},
                      {"head_dim", audio_hidden / audio_heads}, {"num_mel_bins", 128}, {"sliding_window", window},
                      {"rms_norm_eps", 1e-5}, {"hidden_act", "silu"}, {"max_position_embeddings", 1500},
                      {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000.0}}}};
  const json text = {{"model_type", "voxtral_realtime_text"}, {"hidden_size", text_hidden},
                     {"intermediate_size", text_ffn}, {"num_hidden_layers", text_layers},
                     {"num_attention_heads", text_heads}, {"num_key_value_heads", text_kv_heads},
                     {"head_dim", text_head_dim}, {"vocab_size", vocab}, {"max_position_embeddings", 131072},
                     {"sliding_window", 8192}, {"rms_norm_eps", 1e-5}, {"hidden_act", "silu"},
                     {"bos_token_id", 1}, {"eos_token_id", 2}, {"tie_word_embeddings", true},
                     {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 1000000.0}}}};
  return {{"architectures", {"VoxtralRealtimeForConditionalGeneration"}}, {"model_type", "voxtral_realtime"},
          {"audio_config", audio}, {"text_config", text}, {"audio_length_per_tok", 8}, {"downsample_factor", 4},
          {"default_num_delay_tokens", 6}, {"tie_word_embeddings", true}};
}

std::vector<std::string> lfm2_layers(const std::vector<int>& attention, int count) {
  std::vector<std::string> types(static_cast<size_t>(count), "conv");
  for (int i : attention) types[static_cast<size_t>(i)] = "full_attention";
  return types;
}

const std::map<std::pair<std::string, std::string>, json>& presets() {
  static const std::map<std::pair<std::string, std::string>, json> table = {
      {{"llama", "tiny"}, llama(64, 160, 2, 4, 2, 512, 512, {{"rope_type", "default"}, {"rope_theta", 10000.0}})},
      {{"llama", "100m"},
       llama(768, 2048, 12, 12, 4, 32000, 4096, {{"rope_type", "default"}, {"rope_theta", 10000.0}})},
      {{"llama", "llama-3.2-1b"},
       llama(2048, 8192, 16, 32, 8, 128256, 131072,
             {{"rope_type", "llama3"}, {"rope_theta", 500000.0}, {"factor", 32.0}, {"low_freq_factor", 1.0},
              {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 8192}})},
      {{"qwen3", "tiny"}, qwen3(64, 160, 2, 4, 2, 32, 512, 512)},
      {{"qwen3", "100m"}, qwen3(768, 2048, 12, 12, 4, 64, 32000, 4096)},
      {{"qwen3", "qwen3-0.6b"}, qwen3(1024, 3072, 28, 16, 8, 128, 151936, 40960)},
      {{"lfm2", "tiny"}, lfm2(64, 128, false, 512, 512, lfm2_layers({1}, 3), 4, 2)},
      {{"lfm2", "100m"}, lfm2(768, 2048, false, 32000, 4096, lfm2_layers({2, 5, 8, 10}, 12), 12, 4)},
      {{"lfm2", "lfm2-1.2b"}, lfm2(2048, 12288, true, 65536, 128000, lfm2_layers({2, 5, 8, 10, 12, 14}, 16), 32, 8)},
      {{"voxtral_realtime", "tiny"}, voxtral(64, 128, 2, 4, 2, 16, 512, 64, 128, 2, 4, 16)},
      // About a twelfth of the real model: encoder and decoder scaled down in width and depth.
      {{"voxtral_realtime", "small"}, voxtral(1024, 3072, 8, 16, 4, 64, 131072, 512, 2048, 8, 8, 750)},
      {{"voxtral_realtime", "voxtral-mini-4b-realtime"},
       voxtral(3072, 9216, 26, 32, 8, 128, 131072, 1280, 5120, 32, 32, 750)},
  };
  return table;
}

}  // namespace

nlohmann::json checkpoint_preset(const std::string& arch, const std::string& preset) {
  auto it = presets().find({arch, preset});
  if (it == presets().end()) {
    std::string names;
    for (const auto& [key, config] : presets()) names += (names.empty() ? "" : ", ") + key.first + "/" + key.second;
    fail(ErrorCode::InvalidArgument, "no preset '{}' for arch '{}' (available: {})", preset, arch, names);
  }
  return it->second;
}

std::vector<std::pair<std::string, std::string>> checkpoint_presets() {
  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto& [key, config] : presets()) keys.push_back(key);
  return keys;
}

}  // namespace izwi
