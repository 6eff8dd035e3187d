// Fuzz target: any generation_config.json beside a small valid tokenizer.json (the qwen2-style
// fixture) either loads a tokenizer whose EOS ids (without repeats) and BOS id lie in the
// vocabulary, or raises izwi::Error. Nothing else may happen.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "izwi/errors.h"
#include "izwi/tokenizer.h"

namespace {

std::string make_folder() {
  const std::string dir = izwi::fuzz::scratch_dir("generation_config");
  std::filesystem::copy_file(std::string(IZWI_TEST_DATA_DIR) + "/tokenizer-qwen2-style/tokenizer.json",
                             dir + "/tokenizer.json");
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = make_folder();
  izwi::fuzz::write_file(dir + "/generation_config.json", data, size);
  try {
    const izwi::Tokenizer tokenizer = izwi::Tokenizer::from_dir(dir);
    std::vector<int32_t> ids = tokenizer.eos_ids();
    if (const auto bos = tokenizer.bos_id()) ids.push_back(*bos);
    for (int32_t id : ids) {
      if (id < 0 || id >= tokenizer.vocab_size()) std::abort();  // an id outside the vocabulary
    }
    std::vector<int32_t> eos = tokenizer.eos_ids();
    std::sort(eos.begin(), eos.end());
    if (std::adjacent_find(eos.begin(), eos.end()) != eos.end()) std::abort();  // repeated EOS id
    (void)tokenizer.decode(tokenizer.eos_ids());
  } catch (const izwi::Error&) {
  }
  return 0;
}
