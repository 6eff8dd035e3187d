// Constrained decoding's per-token cost: filling the vocabulary bitmask from a JSON schema's
// grammar (src/structured/), at a 150k and a 200k byte-level vocabulary. The repository's o200k
// tokenizer fixture holds only a sample of that vocabulary, so the vocabulary is synthetic
// (tests/common/synthetic_vocabulary.h: all bytes, JSON punctuation, numbers, escapes, UTF-8,
// words with spaces, quotes and punctuation glued on). See docs/structured-outputs.md.
//
//   BM_MaskDecode:      mean bitmask time per token (per_token) over a recorded ~250-token output
//                       of a realistic schema (json_object:1, the same output under {"type":
//                       "json_object"} mode), per-node caches warm (the steady state of a served
//                       schema); also the slowest single mask (worst_token_us) and the first,
//                       cold pass over the document (cold_document_ms).
//   BM_MaskInString:    the common case, inside a string value.
//   BM_MaskColdString:  the first mask at a string position (the per-node token walk, then cached).
//   BM_CompileSchema:   schema -> grammar.
//   BM_EngineMaskStep:  what the engine adds to a constrained row's step on the CPU, per token of
//                       the same document: the request's JsonConstraint fills its bitmask, the
//                       bitmask is applied to a float logits row (-inf where disallowed), and the
//                       drawn id is accepted (per_token; caches warm).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../tests/common/synthetic_vocabulary.h"
#include "sampling/token_bitmask.h"
#include "structured/json_constraint.h"
#include "structured/schema_compiler.h"
#include "structured/token_mask.h"

namespace {

using izwi::structured::GrammarMatcher;
using izwi::structured::TokenMasker;
using izwi::structured::TokenVocabulary;

const char* const kSchema = R"({
  "type": "object",
  "properties": {
    "id": {"type": "string", "format": "uuid"},
    "name": {"type": "string"},
    "age": {"type": "integer", "minimum": 0, "maximum": 150},
    "email": {"type": "string", "format": "email"},
    "score": {"type": "number"},
    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
    "address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"},
                "zip": {"type": "string", "pattern": "^[0-9]{5}$"}}, "required": ["street", "city", "zip"]},
    "status": {"enum": ["active", "inactive", "banned"]},
    "notes": {"anyOf": [{"type": "string"}, {"type": "null"}]}
  },
  "required": ["id", "name", "age", "email", "score", "tags", "address", "status", "notes"],
  "additionalProperties": false
})";

std::shared_ptr<const TokenVocabulary> vocabulary(size_t size) {
  static std::map<size_t, std::shared_ptr<const TokenVocabulary>> cache;
  auto& slot = cache[size];
  if (!slot) {
    std::vector<std::string> tokens = izwi::testing::synthetic_vocabulary(size);
    const int32_t stop = static_cast<int32_t>(tokens.size() - 1);
    slot = std::make_shared<TokenVocabulary>(std::move(tokens), std::vector<int32_t>{stop});
  }
  return slot;
}

/// A document of the schema written with the vocabulary's tokens: greedy longest-match over a
/// fixed sample text, so the token boundaries look like a real tokenizer's.
std::vector<int32_t> tokenize_greedy(const TokenVocabulary& vocab, const std::string& text) {
  std::map<std::string, int32_t> by_bytes;
  size_t longest = 0;
  for (int32_t id = 0; id < vocab.size(); ++id) {
    if (!vocab.bytes(id).empty())
      by_bytes.emplace(vocab.bytes(id), id), longest = std::max(longest, vocab.bytes(id).size());
  }
  std::vector<int32_t> ids;
  for (size_t at = 0; at < text.size();) {
    for (size_t n = std::min(longest, text.size() - at); n > 0; --n) {
      const auto found = by_bytes.find(text.substr(at, n));
      if (found != by_bytes.end()) {
        ids.push_back(found->second);
        at += n;
        break;
      }
    }
  }
  return ids;
}

const std::string kDocument = R"({
  "address": {"city": "Lisbon", "street": "Rua das Flores 12, apartment on the third floor at the back", "zip": "12345"},
  "age": 42,
  "email": "maria.silva@example.com",
  "id": "123e4567-e89b-12d3-a456-426614174000",
  "name": "Maria da Silva, the engineer who wrote the scheduler and most of the tests for the cache",
  "notes": "She prefers to be contacted in the morning; the second address is only for letters.",
  "score": 97.25,
  "status": "active",
  "tags": ["scheduler", "cache", "speech", "tokenizer", "latency"]
})";

/// state.range(0): vocabulary size; state.range(1): 1 for json_object mode (any object), else the schema.
void BM_MaskDecode(benchmark::State& state) {
  const auto vocab = vocabulary(static_cast<size_t>(state.range(0)));
  const auto grammar = state.range(1) ? izwi::structured::compile_any_json_object()
                                      : izwi::structured::compile_json_schema(nlohmann::json::parse(kSchema));
  const TokenMasker masker(grammar, vocab);
  const std::vector<int32_t> ids = tokenize_greedy(*vocab, kDocument);
  std::vector<uint32_t> mask(vocab->bitmask_words());
  auto run = [&] {
    GrammarMatcher matcher(grammar);
    for (const int32_t id : ids) {
      masker.fill_next_token_bitmask(matcher, mask.data());
      if (!((mask[static_cast<size_t>(id) / 32] >> (id % 32)) & 1) || !masker.accept_token(matcher, id)) {
        state.SkipWithError("the recorded document does not fit the schema");
        return;
      }
    }
    masker.fill_next_token_bitmask(matcher, mask.data());
  };
  auto seconds_since = [](std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const auto cold_start = std::chrono::steady_clock::now();
  run();  // warms the per-node caches
  state.counters["cold_document_ms"] = seconds_since(cold_start) * 1e3;
  {  // the slowest single mask, caches warm
    GrammarMatcher matcher(grammar);
    double worst = 0;
    for (const int32_t id : ids) {
      const auto start = std::chrono::steady_clock::now();
      masker.fill_next_token_bitmask(matcher, mask.data());
      worst = std::max(worst, seconds_since(start));
      masker.accept_token(matcher, id);
    }
    state.counters["worst_token_us"] = worst * 1e6;
  }
  for (auto _ : state) run();
  state.counters["tokens"] = static_cast<double>(ids.size() + 1);
  state.counters["per_token"] = benchmark::Counter(
      static_cast<double>(ids.size() + 1), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["cached_nodes"] = static_cast<double>(masker.cached_nodes());
}
BENCHMARK(BM_MaskDecode)
    ->ArgNames({"vocab", "json_object"})
    ->Args({150000, 0})
    ->Args({200000, 0})
    ->Args({150000, 1})
    ->Unit(benchmark::kMicrosecond);

void BM_MaskInString(benchmark::State& state) {
  const auto vocab = vocabulary(static_cast<size_t>(state.range(0)));
  const auto grammar = izwi::structured::compile_json_schema(nlohmann::json::parse(kSchema));
  const TokenMasker masker(grammar, vocab);
  GrammarMatcher matcher(grammar);
  matcher.accept_bytes(R"({"address": {"city": "Lis)");
  std::vector<uint32_t> mask(vocab->bitmask_words());
  masker.fill_next_token_bitmask(matcher, mask.data());
  for (auto _ : state) {
    masker.fill_next_token_bitmask(matcher, mask.data());
    benchmark::DoNotOptimize(mask.data());
  }
}
BENCHMARK(BM_MaskInString)->Arg(150000)->Arg(200000)->Unit(benchmark::kMicrosecond);

void BM_MaskColdString(benchmark::State& state) {
  const auto vocab = vocabulary(static_cast<size_t>(state.range(0)));
  const auto grammar = izwi::structured::compile_json_schema(nlohmann::json::parse(kSchema));
  std::vector<uint32_t> mask(vocab->bitmask_words());
  for (auto _ : state) {
    const TokenMasker masker(grammar, vocab);  // empty caches
    GrammarMatcher matcher(grammar);
    matcher.accept_bytes(R"({"address": {"city": "Lis)");
    masker.fill_next_token_bitmask(matcher, mask.data());
    benchmark::DoNotOptimize(mask.data());
  }
}
BENCHMARK(BM_MaskColdString)->Arg(150000)->Unit(benchmark::kMillisecond);

void BM_CompileSchema(benchmark::State& state) {
  const nlohmann::json schema = nlohmann::json::parse(kSchema);
  for (auto _ : state) benchmark::DoNotOptimize(izwi::structured::compile_json_schema(schema));
}
BENCHMARK(BM_CompileSchema)->Unit(benchmark::kMicrosecond);

void BM_EngineMaskStep(benchmark::State& state) {
  const auto vocab = vocabulary(static_cast<size_t>(state.range(0)));
  const auto masker =
      std::make_shared<const TokenMasker>(izwi::structured::compile_json_schema(nlohmann::json::parse(kSchema)), vocab);
  const std::vector<int32_t> ids = tokenize_greedy(*vocab, kDocument);
  std::vector<uint32_t> mask(vocab->bitmask_words());
  std::vector<float> logits(static_cast<size_t>(vocab->size()));
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  for (float& l : logits) l = normal(rng);
  auto run = [&] {
    izwi::structured::JsonConstraint constraint(masker, {});
    for (const int32_t id : ids) {
      constraint.fill_bitmask(mask.data());
      izwi::apply_token_bitmask(logits.data(), vocab->size(), mask.data());  // its cost does not depend on the values
      if (!constraint.accept(id)) {
        state.SkipWithError("the recorded document does not fit the schema");
        return;
      }
    }
  };
  run();  // warms the per-node caches
  for (auto _ : state) run();
  state.counters["per_token"] = benchmark::Counter(
      static_cast<double>(ids.size()), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_EngineMaskStep)->Arg(150000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
