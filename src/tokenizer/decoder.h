#pragma once
// tokenizer.json "decoder". Byte-level BPE decodes by concatenating each token's raw bytes (the
// ByteLevel decoder) and reading them as lossy UTF-8; nothing else is supported.

#include <nlohmann/json.hpp>

#include <string>

namespace izwi {

/// Accepts ByteLevel or a Sequence of ByteLevel; Unsupported naming any other decoder.
void check_decoder(const nlohmann::json& value, const std::string& origin);

}  // namespace izwi
