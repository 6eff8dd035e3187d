#pragma once
// A text model folder with a tokenizer: a random-weight tiny Qwen3 whose vocabulary is that of
// the tokenizer-qwen2-style fixture (3000 ids, ChatML special tokens), so text goes in and out.

#include <string>

namespace izwi::testing {

/// Writes config.json, model.safetensors and tokenizer.json into `dir`; returns `dir`.
std::string write_text_model(const std::string& dir);

}  // namespace izwi::testing
