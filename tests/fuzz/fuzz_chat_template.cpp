// Fuzz target: random chat messages (roles, contents, reasoning, tool calls, options from the
// bytes) rendered by the built-in formats (ChatML from the vocabulary, Mistral for tekken) and by
// real Jinja templates (Qwen2.5, Llama 3.1, Mistral Nemo from tests/data/chat_templates). Each
// render either gives a prompt that encodes to ids in the vocabulary (holding every message's
// content verbatim for built-in ChatML), or raises izwi::Error.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
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

// tokenizer_config.json with a real template of tests/data/chat_templates.
std::string config_with_template(const std::string& name, bool qwen_special_tokens) {
  std::ifstream in(std::string(IZWI_TEST_DATA_DIR) + "/chat_templates/" + name);
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().empty()) std::abort();
  nlohmann::json config{{"chat_template", text.str()}};
  if (qwen_special_tokens) config["eos_token"] = config["bos_token"] = "<|endoftext|>";
  return config.dump();
}

std::vector<izwi::Tokenizer> make_tokenizers() {
  std::vector<izwi::Tokenizer> out;
  out.push_back(make_tokenizer("tokenizer-qwen2-style/tokenizer.json", ""));  // built-in ChatML
  out.push_back(make_tokenizer("tokenizer-tekken-small/tekken.json", ""));    // built-in Mistral
  out.push_back(make_tokenizer("tokenizer-qwen2-style/tokenizer.json",
                               config_with_template("Qwen-Qwen2.5-7B-Instruct.jinja", true)));
  out.push_back(make_tokenizer("tokenizer-llama3-style/tokenizer.json",
                               config_with_template("meta-llama-Llama-3.1-8B-Instruct.jinja", false)));
  out.push_back(make_tokenizer("tokenizer-qwen2-style/tokenizer.json",
                               config_with_template("mistralai-Mistral-Nemo-Instruct-2407.jinja", true)));
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
    const uint8_t extra = in.byte();
    if (extra & 1) m.reasoning_content = in.string(64);
    if (extra & 2)
      m.tool_calls = extra & 4 ? R"([{"function": {"name": "f", "arguments": {"a": 1}}, "id": "abcdefghi"}])"
                               : in.string(64);  // mostly not JSON: a typed error
    if (extra & 8) m.tool_call_id = in.string(16);
    messages.push_back(std::move(m));
  }
  for (const izwi::Tokenizer& tokenizer : tokenizers) {
    try {
      const std::string text = tokenizer.apply_chat_template(messages, options);
      if (tokenizer.chat_template().empty() && *tokenizer.chat_template_family() == izwi::ChatTemplateFamily::ChatML) {
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
