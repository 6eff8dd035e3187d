#include "common/text_model.h"

#include <filesystem>

#include "bench_support/checkpoint_presets.h"
#include "bench_support/random_checkpoint.h"
#include "common/reference.h"

namespace izwi::testing {

std::string write_text_model(const std::string& dir) {
  nlohmann::json config = checkpoint_preset("qwen3", "tiny");
  config["vocab_size"] = 3000;
  write_random_checkpoint(config, dir, at::kFloat, 11);
  std::filesystem::copy_file(fixture_dir("tokenizer-qwen2-style") + "/tokenizer.json", dir + "/tokenizer.json",
                             std::filesystem::copy_options::overwrite_existing);
  return dir;
}

}  // namespace izwi::testing
