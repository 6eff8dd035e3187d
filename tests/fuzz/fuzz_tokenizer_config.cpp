// Fuzz target: any tokenizer_config.json beside a small valid tokenizer.json (the qwen2-style
// fixture) either loads a tokenizer whose BOS/EOS ids lie in the vocabulary and whose chat
// template (the config's Jinja text, or the built-in ChatML format) renders and encodes to ids in
// the vocabulary, or raises izwi::Error. Nothing else may happen.

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
  const std::string dir = izwi::fuzz::scratch_dir("tokenizer_config");
  std::filesystem::copy_file(std::string(IZWI_TEST_DATA_DIR) + "/tokenizer-qwen2-style/tokenizer.json",
                             dir + "/tokenizer.json");
  return dir;
}

void check_ids(const izwi::Tokenizer& tokenizer, const std::vector<int32_t>& ids) {
  for (int32_t id : ids) {
    if (id < 0 || id >= tokenizer.vocab_size()) std::abort();  // an id outside the vocabulary
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = make_folder();
  izwi::fuzz::write_file(dir + "/tokenizer_config.json", data, size);
  try {
    const izwi::Tokenizer tokenizer = izwi::Tokenizer::from_dir(dir);
    check_ids(tokenizer, tokenizer.eos_ids());
    if (const auto bos = tokenizer.bos_id()) check_ids(tokenizer, {*bos});
    check_ids(tokenizer, tokenizer.encode("Hello <|im_start|> world", true));
    if (tokenizer.chat_template_family()) {
      const std::vector<izwi::ChatMessage> messages = {
          {"system", "Be brief."}, {"user", "Hi"}, {"assistant", " there "}, {"user", "again"}};
      const std::string text = tokenizer.apply_chat_template(messages);
      // The built-in format keeps every message (a Jinja template renders what it says).
      if (tokenizer.chat_template().empty() && text.find("again") == std::string::npos) std::abort();
      check_ids(tokenizer, tokenizer.encode_chat(messages, izwi::ChatOptions{false}));
    }
  } catch (const izwi::Error&) {
  }
  return 0;
}
