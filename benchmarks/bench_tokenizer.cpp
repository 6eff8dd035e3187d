// Encode throughput (bytes of UTF-8 text per second, one thread) of the fixture tokenizers on a
// few MB of deterministic mixed text: English prose, code, CJK and emoji.

#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

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

}  // namespace

BENCHMARK_MAIN();
