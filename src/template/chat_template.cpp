#include "template/chat_template.h"

#include "common/check.h"
#include "template/interpreter.h"
#include "template/json_value.h"
#include "template/lexer.h"
#include "template/parser.h"

namespace izwi::jinja {

ChatTemplate::ChatTemplate(const std::string& source, std::string name) : name_(std::move(name)) {
  try {
    template_ = std::make_unique<Template>(parse(source));
    check_names(*template_);
  } catch (const SyntaxError& e) {
    fail(ErrorCode::InvalidFormat, "chat template '{}' line {}: {}", name_, e.line, e.message);
  }
}

ChatTemplate::~ChatTemplate() = default;
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;

std::string ChatTemplate::render(const ChatTemplateInputs& inputs) const {
  // transformers: render(messages=..., tools=..., documents=None, add_generation_prompt=...,
  //                      **special_tokens_map, **kwargs)
  ValueDict context;
  context.set("messages", from_json(inputs.messages));
  context.set("tools", from_json(inputs.tools));
  context.set("documents", Value::none());
  context.set("add_generation_prompt", Value(inputs.add_generation_prompt));
  if (inputs.special_tokens.is_object()) {
    for (const auto& [k, v] : inputs.special_tokens.items()) context.set(k, from_json(v));
  }
  if (inputs.kwargs.is_object()) {
    for (const auto& [k, v] : inputs.kwargs.items()) context.set(k, from_json(v));
  } else if (!inputs.kwargs.is_null()) {
    fail(ErrorCode::InvalidArgument, "chat template keyword arguments must be a JSON object");
  }
  try {
    return jinja::render(*template_, context);
  } catch (const RenderError& e) {
    fail(ErrorCode::InvalidArgument, "chat template '{}' line {}: {}{}", name_, e.line,
         e.raised ? "raise_exception: " : "", e.message);
  }
}

}  // namespace izwi::jinja
