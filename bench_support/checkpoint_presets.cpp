#include "bench_support/checkpoint_presets.h"

#include <map>

#include "common/check.h"

namespace izwi {

namespace {

using json = nlohmann::json;

json llama(int hidden, int intermediate, int layers, int heads, int kv_heads, int vocab, int max_positions,
           json rope_parameters) {
  return {{"architectures", {"LlamaForCausalLM"}},
          {"model_type", "llama"},
          {"hidden_size", hidden},
          {"intermediate_size", intermediate},
          {"num_hidden_layers", layers},
          {"num_attention_heads", heads},
          {"num_key_value_heads", kv_heads},
          {"head_dim", hidden / heads},
          {"vocab_size", vocab},
          {"max_position_embeddings", max_positions},
          {"rms_norm_eps", 1e-5},
          {"tie_word_embeddings", true},
          {"hidden_act", "silu"},
          {"bos_token_id", 1},
          {"eos_token_id", 2},
          {"rope_parameters", rope_parameters}};
}

json qwen3(int hidden, int intermediate, int layers, int heads, int kv_heads, int head_dim, int vocab,
           int max_positions) {
  return {{"architectures", {"Qwen3ForCausalLM"}},
          {"model_type", "qwen3"},
          {"hidden_size", hidden},
          {"intermediate_size", intermediate},
          {"num_hidden_layers", layers},
          {"num_attention_heads", heads},
          {"num_key_value_heads", kv_heads},
          {"head_dim", head_dim},
          {"vocab_size", vocab},
          {"max_position_embeddings", max_positions},
          {"rms_norm_eps", 1e-6},
          {"tie_word_embeddings", true},
          {"hidden_act", "silu"},
          {"bos_token_id", 1},
          {"eos_token_id", 2},
          {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 1000000.0}}}};
}

json lfm2(int hidden, int intermediate, bool auto_adjust, int vocab, int max_positions,
          const std::vector<std::string>& types, int heads, int kv_heads) {
  return {{"architectures", {"Lfm2ForCausalLM"}},
          {"model_type", "lfm2"},
          {"hidden_size", hidden},
          {"intermediate_size", intermediate},
          {"block_auto_adjust_ff_dim", auto_adjust},
          {"block_ffn_dim_multiplier", 1.0},
          {"block_multiple_of", 256},
          {"num_hidden_layers", types.size()},
          {"layer_types", types},
          {"num_attention_heads", heads},
          {"num_key_value_heads", kv_heads},
          {"vocab_size", vocab},
          {"max_position_embeddings", max_positions},
          {"norm_eps", 1e-5},
          {"conv_L_cache", 3},
          {"conv_bias", false},
          {"tie_word_embeddings", true},
          {"bos_token_id", 1},
          {"eos_token_id", 2},
          {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 1000000.0}}}};
}

json voxtral(int text_hidden, int text_ffn, int text_layers, int text_heads, int text_kv_heads, int text_head_dim,
             int vocab, int audio_hidden, int audio_ffn, int audio_layers, int audio_heads, int window) {
  const json audio = {{"model_type", "voxtral_realtime_encoder"},
                      {"hidden_size", audio_hidden},
                      {"intermediate_size", audio_ffn},
                      {"num_hidden_layers", audio_layers},
                      {"num_attention_heads", audio_heads},
                      {"num_key_value_heads", audio_heads},
                      {"head_dim", audio_hidden / audio_heads},
                      {"num_mel_bins", 128},
                      {"sliding_window", window},
                      {"rms_norm_eps", 1e-5},
                      {"hidden_act", "silu"},
                      {"max_position_embeddings", 1500},
                      {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000.0}}}};
  const json text = {{"model_type", "voxtral_realtime_text"},
                     {"hidden_size", text_hidden},
                     {"intermediate_size", text_ffn},
                     {"num_hidden_layers", text_layers},
                     {"num_attention_heads", text_heads},
                     {"num_key_value_heads", text_kv_heads},
                     {"head_dim", text_head_dim},
                     {"vocab_size", vocab},
                     {"max_position_embeddings", 131072},
                     {"sliding_window", 8192},
                     {"rms_norm_eps", 1e-5},
                     {"hidden_act", "silu"},
                     {"bos_token_id", 1},
                     {"eos_token_id", 2},
                     {"tie_word_embeddings", true},
                     {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 1000000.0}}}};
  return {{"architectures", {"VoxtralRealtimeForConditionalGeneration"}},
          {"model_type", "voxtral_realtime"},
          {"audio_config", audio},
          {"text_config", text},
          {"audio_length_per_tok", 8},
          {"downsample_factor", 4},
          {"default_num_delay_tokens", 6},
          {"tie_word_embeddings", true}};
}

// Qwen3-TTS 12 Hz CustomVoice in the released config.json layout, plus its speech tokenizer's
// config under kSpeechTokenizerKey. The codec ids, languages and speakers are the released ones.
struct Qwen3TtsShape {
  int hidden, intermediate, layers, heads, kv_heads, head_dim;                    // talker
  int cp_hidden, cp_intermediate, cp_layers, cp_heads, cp_kv_heads, cp_head_dim;  // code predictor
  int text_vocab, text_hidden;
  int im_start, im_end, tts_pad, tts_bos, tts_eos;
  std::string size;
  // Codec decoder
  int codebook_dim, latent_dim, decoder_dim, codec_hidden, codec_layers, codec_heads, codec_head_dim,
      codec_intermediate, sliding_window;
};

json qwen3_tts(const Qwen3TtsShape& s) {
  const json rope = {{"rope_type", "default"}, {"rope_theta", 1000000.0}};
  const json predictor = {{"model_type", "qwen3_tts_talker_code_predictor"},
                          {"hidden_size", s.cp_hidden},
                          {"intermediate_size", s.cp_intermediate},
                          {"num_hidden_layers", s.cp_layers},
                          {"num_attention_heads", s.cp_heads},
                          {"num_key_value_heads", s.cp_kv_heads},
                          {"head_dim", s.cp_head_dim},
                          {"vocab_size", 2048},
                          {"num_code_groups", 16},
                          {"max_position_embeddings", 65536},
                          {"rms_norm_eps", 1e-6},
                          {"hidden_act", "silu"},
                          {"attention_bias", false},
                          {"tie_word_embeddings", false},
                          {"rope_theta", 1000000.0},
                          {"rope_parameters", rope}};
  const json talker = {
      {"model_type", "qwen3_tts_talker"},
      {"hidden_size", s.hidden},
      {"intermediate_size", s.intermediate},
      {"num_hidden_layers", s.layers},
      {"num_attention_heads", s.heads},
      {"num_key_value_heads", s.kv_heads},
      {"head_dim", s.head_dim},
      {"vocab_size", 3072},
      {"num_code_groups", 16},
      {"text_vocab_size", s.text_vocab},
      {"text_hidden_size", s.text_hidden},
      {"max_position_embeddings", 32768},
      {"rms_norm_eps", 1e-6},
      {"hidden_act", "silu"},
      {"attention_bias", false},
      {"tie_word_embeddings", false},
      {"rope_theta", 1000000.0},
      {"rope_parameters",
       {{"rope_type", "default"},
        {"rope_theta", 1000000.0},
        {"mrope_section", {s.head_dim / 2 - 2 * (s.head_dim * 5 / 32), s.head_dim * 5 / 32, s.head_dim * 5 / 32}},
        {"interleaved", true}}},
      {"codec_pad_id", 2148},
      {"codec_bos_id", 2149},
      {"codec_eos_token_id", 2150},
      {"codec_think_id", 2154},
      {"codec_nothink_id", 2155},
      {"codec_think_bos_id", 2156},
      {"codec_think_eos_id", 2157},
      {"codec_language_id", {{"english", 2050}, {"chinese", 2055}}},
      {"spk_id", {{"ryan", 3061}, {"vivian", 3065}}},
      {"spk_is_dialect", {{"ryan", false}, {"vivian", false}}},
      {"code_predictor_config", predictor}};
  const json decoder = {{"codebook_size", 2048},
                        {"codebook_dim", s.codebook_dim},
                        {"latent_dim", s.latent_dim},
                        {"decoder_dim", s.decoder_dim},
                        {"hidden_size", s.codec_hidden},
                        {"num_hidden_layers", s.codec_layers},
                        {"num_attention_heads", s.codec_heads},
                        {"num_key_value_heads", s.codec_heads},
                        {"head_dim", s.codec_head_dim},
                        {"intermediate_size", s.codec_intermediate},
                        {"sliding_window", s.sliding_window},
                        {"upsample_rates", {8, 5, 4, 3}},
                        {"upsampling_ratios", {2, 2}},
                        {"num_quantizers", 16},
                        {"hidden_act", "silu"},
                        {"attention_bias", false},
                        {"layer_scale_initial_scale", 0.01},
                        {"max_position_embeddings", 8000},
                        {"rms_norm_eps", 1e-5},
                        {"rope_theta", 10000.0}};
  const json speech_tokenizer = {{"architectures", {"Qwen3TTSTokenizerV2Model"}},
                                 {"model_type", "qwen3_tts_tokenizer_12hz"},
                                 {"encoder_valid_num_quantizers", 16},
                                 {"input_sample_rate", 24000},
                                 {"output_sample_rate", 24000},
                                 {"encode_downsample_rate", 1920},
                                 {"decode_upsample_rate", 1920},
                                 {"decoder_config", decoder}};
  return {{"architectures", {"Qwen3TTSForConditionalGeneration"}},
          {"model_type", "qwen3_tts"},
          {"tts_model_type", "custom_voice"},
          {"tts_model_size", s.size},
          {"tokenizer_type", "qwen3_tts_tokenizer_12hz"},
          {"im_start_token_id", s.im_start},
          {"im_end_token_id", s.im_end},
          {"tts_pad_token_id", s.tts_pad},
          {"tts_bos_token_id", s.tts_bos},
          {"tts_eos_token_id", s.tts_eos},
          {"talker_config", talker},
          {kSpeechTokenizerKey, speech_tokenizer}};
}

// The Base variant of a qwen3_tts preset: a speaker encoder whose x-vector is as wide as the
// talker, no named speakers, and the speech tokenizer's Mimi encoder (16 of its quantizers kept).
json qwen3_tts_base(json config, const json& speaker_encoder, const json& mimi_encoder) {
  config["tts_model_type"] = "base";
  config["speaker_encoder_config"] = speaker_encoder;
  config["speaker_encoder_config"]["enc_dim"] = config["talker_config"]["hidden_size"];
  config["talker_config"]["spk_id"] = json::object();
  config["talker_config"]["spk_is_dialect"] = json::object();
  config[kSpeechTokenizerKey]["encoder_config"] = mimi_encoder;
  return config;
}

std::vector<std::string> lfm2_layers(const std::vector<int>& attention, int count) {
  std::vector<std::string> types(static_cast<size_t>(count), "conv");
  for (int i : attention) types[static_cast<size_t>(i)] = "full_attention";
  return types;
}

// LFM2-Audio in liquid-audio's layout (no model_type; sections lfm, encoder, preprocessor,
// depthformer): an LFM2 backbone, a FastConformer of `encoder_layers` x `encoder_dim`, and a
// depthformer of `depth_layers` x `depth_dim` over 8 codebooks.
json lfm2_audio(json lfm, int encoder_layers, int encoder_dim, int encoder_heads, int subsampling_channels,
                int ff_expansion, int depth_layers, int depth_dim) {
  lfm["eos_token_id"] = 7;  // <|im_end|> ends a turn
  const json encoder = {{"feat_in", 128},
                        {"feat_out", -1},
                        {"n_layers", encoder_layers},
                        {"d_model", encoder_dim},
                        {"subsampling", "dw_striding"},
                        {"subsampling_factor", 8},
                        {"subsampling_conv_channels", subsampling_channels},
                        {"causal_downsampling", false},
                        {"ff_expansion_factor", ff_expansion},
                        {"self_attention_model", "rel_pos"},
                        {"n_heads", encoder_heads},
                        {"att_context_size", {{-1, -1}}},
                        {"xscaling", false},
                        {"untie_biases", true},
                        {"pos_emb_max_len", 5000},
                        {"conv_kernel_size", 9},
                        {"conv_norm_type", "batch_norm"}};
  const json preprocessor = {{"sample_rate", 16000}, {"normalize", "per_feature"},
                             {"window_size", 0.025}, {"window_stride", 0.01},
                             {"window", "hann"},     {"features", 128},
                             {"n_fft", 512},         {"log", true},
                             {"frame_splicing", 1},  {"dither", 0.0},
                             {"pad_to", 0},          {"pad_value", 0.0}};
  return {{"architectures", {"LFM2AudioModel"}},
          {"codebooks", 8},
          {"tie_audio_embeddings", false},
          {"semantic_codebook_factor", 100.0},
          {"codebook_weight", "log"},
          {"interleaved_n_text", 6},
          {"interleaved_n_audio", 12},
          {"preprocessor", preprocessor},
          {"encoder", encoder},
          {"lfm", lfm},
          {"depthformer", {{"layers", depth_layers}, {"dim", depth_dim}, {"tie", false}}}};
}

const std::map<std::pair<std::string, std::string>, json>& presets() {
  static const std::map<std::pair<std::string, std::string>, json> table = {
      {{"llama", "tiny"}, llama(64, 160, 2, 4, 2, 512, 512, {{"rope_type", "default"}, {"rope_theta", 10000.0}})},
      {{"llama", "100m"},
       llama(768, 2048, 12, 12, 4, 32000, 4096, {{"rope_type", "default"}, {"rope_theta", 10000.0}})},
      {{"llama", "llama-3.2-1b"},
       llama(2048, 8192, 16, 32, 8, 128256, 131072,
             {{"rope_type", "llama3"},
              {"rope_theta", 500000.0},
              {"factor", 32.0},
              {"low_freq_factor", 1.0},
              {"high_freq_factor", 4.0},
              {"original_max_position_embeddings", 8192}})},
      {{"qwen3", "tiny"}, qwen3(64, 160, 2, 4, 2, 32, 512, 512)},
      {{"qwen3", "100m"}, qwen3(768, 2048, 12, 12, 4, 64, 32000, 4096)},
      {{"qwen3", "qwen3-0.6b"}, qwen3(1024, 3072, 28, 16, 8, 128, 151936, 40960)},
      {{"lfm2", "tiny"}, lfm2(64, 128, false, 512, 512, lfm2_layers({1}, 3), 4, 2)},
      {{"lfm2", "100m"}, lfm2(768, 2048, false, 32000, 4096, lfm2_layers({2, 5, 8, 10}, 12), 12, 4)},
      {{"lfm2", "lfm2-1.2b"}, lfm2(2048, 12288, true, 65536, 128000, lfm2_layers({2, 5, 8, 10, 12, 14}, 16), 32, 8)},
      {{"voxtral_realtime", "tiny"}, voxtral(64, 128, 2, 4, 2, 16, 512, 64, 128, 2, 4, 16)},
      // About a twelfth of the real model: encoder and decoder scaled down in width and depth.
      {{"voxtral_realtime", "small"}, voxtral(1024, 3072, 8, 16, 4, 64, 131072, 512, 2048, 8, 8, 750)},
      // Text vocabulary 3000 with <|im_start|> = 1 and <|im_end|> = 2, as tests/data/tokenizer-qwen2-style.
      {{"qwen3_tts", "tiny"}, qwen3_tts({64, 128,  2,    4,    2,     16, 32, 64, 2,  4, 2, 16, 3000, 48, 1,
                                         2,  2997, 2998, 2999, "0b6", 32, 64, 64, 64, 2, 4, 16, 128,  8})},
      {{"qwen3_tts", "qwen3-tts-0.6b"},
       qwen3_tts({1024,   3072,   28,     16,     8,     128, 1024, 3072, 5,   16, 8,  128, 151936, 2048, 151644,
                  151645, 151671, 151672, 151673, "0b6", 512, 1024, 1536, 512, 8,  16, 64,  1024,   72})},
      {{"qwen3_tts", "tiny-base"},
       qwen3_tts_base(qwen3_tts({64, 128,  2,    4,    2,     16, 32, 64, 2,  4, 2, 16, 3000, 48, 1,
                                 2,  2997, 2998, 2999, "0b6", 32, 64, 64, 64, 2, 4, 16, 128,  8}),
                      {{"enc_channels", {32, 32, 32, 32, 96}},
                       {"enc_attention_channels", 16},
                       {"enc_se_channels", 16},
                       {"enc_res2net_scale", 4}},
                      {{"model_type", "mimi"},
                       {"hidden_size", 64},
                       {"num_filters", 8},
                       {"intermediate_size", 128},
                       {"num_hidden_layers", 2},
                       {"num_attention_heads", 4},
                       {"head_dim", 16},
                       {"codebook_dim", 32},
                       {"vector_quantization_hidden_dimension", 32},
                       {"upsample_groups", 64},
                       {"num_quantizers", 16}})},
      {{"qwen3_tts", "qwen3-tts-0.6b-base"},
       qwen3_tts_base(
           qwen3_tts({1024,   3072,   28,     16,     8,     128, 1024, 3072, 5,   16, 8,  128, 151936, 2048, 151644,
                      151645, 151671, 151672, 151673, "0b6", 512, 1024, 1536, 512, 8,  16, 64,  1024,   72}),
           json::object(),                                      // the released ECAPA-TDNN sizes
           {{"model_type", "mimi"}, {"num_quantizers", 32}})},  // Kyutai's sizes, as released
      {{"lfm2_audio", "tiny"},
       lfm2_audio(lfm2(64, 192, true, 512, 2048, lfm2_layers({2}, 4), 4, 2), 2, 64, 4, 16, 2, 2, 64)},
      // LFM2-Audio-1.5B: the LFM2-1.2B backbone, canary-180m-flash's encoder, a 6 x 1024 depthformer.
      {{"lfm2_audio", "lfm2-audio-1.5b"},
       lfm2_audio(lfm2(2048, 12288, true, 65536, 128000, lfm2_layers({2, 5, 8, 10, 12, 14}, 16), 32, 8), 17, 512, 8,
                  256, 4, 6, 1024)},
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
