// Encode throughput (bytes of UTF-8 text per second, one thread) of the fixture tokenizers on a
// few MB of deterministic mixed text: English prose, code, CJK and emoji. And the load time of a
// 150k-token byte-level BPE tokenizer.json (the size of Llama 3's and Qwen3's), generated here.

#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "izwi/tokenizer.h"

namespace {

std::string mixed_text(size_t bytes) {
  const std::vector<std::string> words = {
      "the", "of", "and",  "to",  "in",   "model",     "engine",  "tokens",     "speech",  "stream", "batch", "cache",
      "is",  "a",  "that", "for", "with", "scheduler", "latency", "throughput", "request", "audio",  "text"};
  const std::vector<std::string> code = {"for (size_t i = 0; i < n; ++i) {\n", "  out[i] = std::max(a[i], b[i]) * 2;\n",
                                         "}\n", "def decode(ids):\n    return ''.join(vocab[i] for i in ids)\n",
                                         "    if x == None: return -1\n"};
  const std::vector<std::string> other = {"你好世界，今天天气很好。",
                                          "我们一起去公园散步吧。",
                                          "😀🎉👍🏽 ",
                                          "👨‍👩‍👧 ",
                                          "naïve café ",
                                          "Привет мир. "};
  std::mt19937 rng(42);
  std::string text;
  text.reserve(bytes + 256);
  while (text.size() < bytes) {
    const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
    if (kind < 7) {  // a sentence of prose
      const int n = std::uniform_int_distribution<int>(6, 18)(rng);
      for (int i = 0; i < n; ++i) {
        std::string w = words[std::uniform_int_distribution<size_t>(0, words.size() - 1)(rng)];
        if (i == 0) w[0] = static_cast<char>(w[0] - 'a' + 'A');
        text += w + (i + 1 < n ? " " : ". ");
      }
      if (std::uniform_int_distribution<int>(0, 4)(rng) == 0) text += std::to_string(rng() % 100000) + "\n";
    } else if (kind < 9) {
      text += code[std::uniform_int_distribution<size_t>(0, code.size() - 1)(rng)];
    } else {
      text += other[std::uniform_int_distribution<size_t>(0, other.size() - 1)(rng)];
    }
  }
  return text;
}

void BM_Encode(benchmark::State& state, const std::string& fixture) {
  const izwi::Tokenizer tokenizer = izwi::Tokenizer::from_dir(std::string(IZWI_SOURCE_DIR) + "/tests/data/" + fixture);
  const std::string text = mixed_text(4 << 20);
  size_t tokens = 0;
  for (auto _ : state) {
    const std::vector<int32_t> ids = tokenizer.encode(text);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
}

BENCHMARK_CAPTURE(BM_Encode, qwen2_style, std::string("tokenizer-qwen2-style"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Encode, llama3_style, std::string("tokenizer-llama3-style"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Encode, tekken_small, std::string("tokenizer-tekken-small"))->Unit(benchmark::kMillisecond);
// SentencePiece style: Llama 2's layout (whole text to the model), Metaspace, Gemma's; GPT-4o's.
BENCHMARK_CAPTURE(BM_Encode, spm_llama2_style, std::string("tokenizer-hf-spm-llama2"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Encode, spm_metaspace_style, std::string("tokenizer-hf-spm-metaspace"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Encode, spm_gemma_style, std::string("tokenizer-hf-spm-gemma"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Encode, o200k_style, std::string("tokenizer-hf-o200k"))->Unit(benchmark::kMillisecond);
// A SentencePiece tokenizer.model, encoded by libsentencepiece.
BENCHMARK_CAPTURE(BM_Encode, sentencepiece_model, std::string("tokenizer-sentencepiece-bpe"))
    ->Unit(benchmark::kMillisecond);

// A byte-level BPE tokenizer.json with `size` tokens: the 256 byte tokens, then tokens made by
// merging two earlier ones (random, distinct, at most 16 bytes), and 200 special tokens. Written
// in the layout of Llama 3's and Qwen3's files (merges as ["a", "b"] pairs, Split + ByteLevel).
std::string large_tokenizer_dir(size_t size) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("izwi_bench_tokenizer_" + std::to_string(size))).string();
  if (std::filesystem::exists(dir + "/tokenizer.json")) return dir;
  std::filesystem::create_directories(dir);
  // GPT-2's byte-level alphabet.
  std::vector<std::string> alphabet(256);
  int next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    const int cp = printable ? b : next++;
    std::string& out = alphabet[b];
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  std::vector<std::string> tokens = alphabet;
  std::vector<size_t> lengths(256, 1);
  std::unordered_set<std::string> seen(tokens.begin(), tokens.end());
  nlohmann::json merges = nlohmann::json::array();
  std::mt19937 rng(7);
  // Prefer letters and space so the tokens look like words.
  const std::string common = " etaoinshrdlucmfwypvbgkETAOINSHR";
  while (tokens.size() < size) {
    const auto pick = [&]() -> size_t {
      if (rng() % 3 == 0) return static_cast<uint8_t>(common[rng() % common.size()]);
      return rng() % tokens.size();
    };
    const size_t a = pick(), b = pick();
    if (lengths[a] + lengths[b] > 16) continue;
    std::string merged = tokens[a] + tokens[b];
    if (!seen.insert(merged).second) continue;
    merges.push_back({tokens[a], tokens[b]});
    tokens.push_back(std::move(merged));
    lengths.push_back(lengths[a] + lengths[b]);
  }
  nlohmann::json vocab = nlohmann::json::object();
  for (size_t i = 0; i < tokens.size(); ++i) vocab[tokens[i]] = i;
  nlohmann::json added = nlohmann::json::array();
  for (int i = 0; i < 200; ++i) {
    added.push_back({{"id", tokens.size() + i},
                     {"content", "<|reserved_special_token_" + std::to_string(i) + "|>"},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  }
  const nlohmann::json doc = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"},
           {"pattern",
            {{"Regex",
              "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
              "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}}},
           {"behavior", "Isolated"},
           {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}}}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"continuing_subword_prefix", nullptr},
        {"end_of_word_suffix", nullptr},
        {"fuse_unk", false},
        {"byte_fallback", false},
        {"ignore_merges", true},
        {"vocab", vocab},
        {"merges", merges}}}};
  std::ofstream(dir + "/tokenizer.json") << doc.dump();
  return dir;
}

void BM_LoadLargeTokenizerJson(benchmark::State& state) {
  const std::string dir = large_tokenizer_dir(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    const izwi::Tokenizer tokenizer = izwi::Tokenizer::from_dir(dir);
    benchmark::DoNotOptimize(tokenizer.vocab_size());
  }
  state.counters["file_MB"] = static_cast<double>(std::filesystem::file_size(dir + "/tokenizer.json")) / 1e6;
}
BENCHMARK(BM_LoadLargeTokenizerJson)->Arg(150000)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
