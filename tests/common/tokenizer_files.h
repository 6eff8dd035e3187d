#pragma once
// Small tokenizer folders built in tests: a byte-level BPE tokenizer.json with a handful of
// merges and added tokens, written next to optional config files.

#include <nlohmann/json.hpp>

#include <string>

#include "common/temp_dir.h"

namespace izwi::testing {

/// tokenizer.json with the 256 byte tokens (ids 0..255), merges h+e, l+l, he+ll, hell+o
/// (ids 256..259, "hello" = 259), "xyz" (260) without a merge, and added tokens
/// <|begin_of_text|> 300, <|eot_id|> 301, <|end_of_text|> 302 (special) and <mask> 303 (lstrip).
nlohmann::json tiny_tokenizer_json();

/// Writes `tokenizer` as <dir>/tokenizer.json and each non-null config next to it; returns dir.
std::string write_tokenizer_dir(const TempDir& dir, const nlohmann::json& tokenizer,
                                const nlohmann::json& tokenizer_config = nullptr,
                                const nlohmann::json& generation_config = nullptr);

/// Writes `tokenizer` (a byte-level BPE tokenizer.json) as the files a Qwen2 / GPT-2 style model
/// folder ships instead: vocab.json (model.vocab without the added tokens), merges.txt (a
/// "#version" header, then "left right" per line) and tokenizer_config.json (`config` plus
/// tokenizer_class and added_tokens_decoder). Returns dir.
std::string write_vocab_merges_dir(const TempDir& dir, const nlohmann::json& tokenizer,
                                   const std::string& tokenizer_class = "Qwen2Tokenizer",
                                   nlohmann::json config = nlohmann::json::object());

/// tests/data/<name>
std::string tokenizer_fixture(const std::string& name);

}  // namespace izwi::testing
