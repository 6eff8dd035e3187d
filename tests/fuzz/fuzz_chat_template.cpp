// Fuzz target: random chat messages (roles, contents, options from the bytes) rendered by the
// three built-in prompt formats (ChatML, Llama 3, Mistral with and without spaces inside
// [INST]) and by a tekken tokenizer. Each render either gives a prompt holding every message's
// content (ChatML, verbatim) that encodes to ids in the vocabulary, or raises izwi::Error.

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "izwi/errors.h"
#include "izwi/tokenizer.h"

namespace {

izwi::Tokenizer make_tokenizer(const std::string& tokenizer_file, const std::string& config) {
  const std::string dir = izwi::fuzz::scratch_dir("chat_template");
  const std::filesystem::path source(std::string(IZWI_TEST_DATA_DIR) + "/" + tokenizer_file);
  std::filesystem::copy_file(source, dir + "/" + source.filename().string());
  if (!config.empty()) izwi::fuzz::write_file(dir + "/tokenizer_config.json", config);
  return izwi::Tokenizer::from_dir(dir);
}

std::vector<izwi::Tokenizer> make_tokenizers() {
  std::vector<izwi::Tokenizer> out;
  out.push_back(make_tokenizer("tokenizer-qwen2-style/tokenizer.json",
                               R"({"chat_template": "{% for m in messages %}<|im_start|>{{ m.role }}{% endfor %}"})"));
  out.push_back(make_tokenizer("tokenizer-llama3-style/tokenizer.json",
                               R"({"chat_template": "<|start_header_id|>{{ m.role }}<|end_header_id|>"})"));
  out.push_back(
      make_tokenizer("tokenizer-qwen2-style/tokenizer.json", R"({"chat_template": "[INST] {{ x }} [/INST]"})"));
  out.push_back(make_tokenizer("tokenizer-qwen2-style/tokenizer.json", R"({"chat_template": "[INST]{{ x }}[/INST]"})"));
  out.push_back(make_tokenizer("tokenizer-tekken-small/tekken.json", ""));
  for (const izwi::Tokenizer& t : out) {
    if (!t.chat_template_family()) std::abort();  // the fixture setup itself is wrong
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<izwi::Tokenizer> tokenizers = make_tokenizers();
  static const char* const kRoles[] = {"system", "user", "assistant", "tool", ""};
  izwi::fuzz::Bytes in(data, size);
  izwi::ChatOptions options;
  options.add_generation_prompt = in.flag();
  std::vector<izwi::ChatMessage> messages;
  while (in.remaining() > 0 && messages.size() < 64) {
    izwi::ChatMessage m;
    const uint8_t r = in.byte();
    m.role = r < 5 * 40 ? kRoles[r % 5] : in.string(32);
    m.content = in.string(512);
    messages.push_back(std::move(m));
  }
  for (const izwi::Tokenizer& tokenizer : tokenizers) {
    try {
      const std::string text = tokenizer.apply_chat_template(messages, options);
      if (*tokenizer.chat_template_family() == izwi::ChatTemplateFamily::ChatML) {
        for (const izwi::ChatMessage& m : messages) {
          if (text.find(m.content) == std::string::npos) std::abort();  // a message lost in rendering
        }
      }
      for (int32_t id : tokenizer.encode_chat(messages, options)) {
        if (id < 0 || id >= tokenizer.vocab_size()) std::abort();  // an id outside the vocabulary
      }
    } catch (const izwi::Error&) {
    }
  }
  return 0;
}
