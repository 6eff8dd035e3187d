#pragma once
// A model's own chat template (the Jinja text of tokenizer_config.json's chat_template or of
// chat_template.jinja), rendered the way transformers' apply_chat_template does: Jinja with
// trim_blocks and lstrip_blocks, and the variables messages, tools, documents,
// add_generation_prompt, the special tokens and any extra keyword arguments.

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace izwi::jinja {

struct Template;

struct ChatTemplateInputs {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();  ///< [{"role":..., "content":..., ...}]
  nlohmann::ordered_json tools;                                       ///< null (the template sees none) or a list
  bool add_generation_prompt = true;
  /// Special tokens by name ("bos_token", "eos_token", ...): strings the template may print.
  nlohmann::ordered_json special_tokens = nlohmann::ordered_json::object();
  nlohmann::ordered_json kwargs =
      nlohmann::ordered_json::object();  ///< extra variables, e.g. {"enable_thinking": false}
};

class ChatTemplate {
 public:
  /// Parses `source`; `name` (e.g. the file it came from) is named in errors. Throws izwi::Error
  /// InvalidFormat "chat template '<name>' line N: ..." for a syntax error, an unknown filter or test.
  ChatTemplate(const std::string& source, std::string name);
  ~ChatTemplate();
  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;

  /// Throws izwi::Error InvalidArgument "chat template '<name>' line N: ..." when the template
  /// raises (raise_exception) or fails (e.g. an undefined value in arithmetic).
  std::string render(const ChatTemplateInputs& inputs) const;

  const std::string& name() const { return name_; }

 private:
  std::unique_ptr<Template> template_;
  std::string name_;
};

}  // namespace izwi::jinja
