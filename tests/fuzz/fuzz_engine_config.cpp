// Fuzz target: any byte string handed to EngineConfig::from_json_string either gives a config
// (which validate() then accepts or refuses with izwi::Error) or raises izwi::Error. A config
// validate() accepts must lie inside the documented bounds. Nothing else may happen.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "izwi/config.h"
#include "izwi/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const izwi::EngineConfig config = izwi::EngineConfig::from_json_string(text, "fuzz-input");
    config.validate();
    const bool ok = config.max_batch_size >= 1 && config.max_batch_size <= 4096 && config.max_tokens_per_step >= 1 &&
                    config.max_tokens_per_step <= (1 << 20) && config.max_tokens_per_step >= config.max_batch_size &&
                    config.max_seq_len >= 0 && config.max_seq_len <= (1 << 24) && config.block_size >= 1 &&
                    config.block_size <= 1024 && config.num_kv_blocks >= 1 &&
                    int64_t{config.num_kv_blocks} * config.block_size <= int64_t{INT32_MAX} &&
                    config.num_threads >= 0 && config.num_threads <= 1024;
    if (!ok) std::abort();  // validate() accepted a config outside its documented bounds
  } catch (const izwi::Error&) {
  }
  return 0;
}
