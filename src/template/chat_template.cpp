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
  } catch (const EvalError& e) {  // a literal past the limits of a value (template/limits.h)
    fail(ErrorCode::InvalidFormat, "chat template '{}': {}", name_, e.what());
  }
}

ChatTemplate::~ChatTemplate() = default;
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;

std::string ChatTemplate::render(const ChatTemplateInputs& inputs) const {
  if (!inputs.kwargs.is_object() && !inputs.kwargs.is_null()) {
    fail(ErrorCode::InvalidArgument, "chat template keyword arguments must be a JSON object");
  }
  // transformers: render(messages=..., tools=..., documents=None, add_generation_prompt=...,
  //                      **special_tokens_map, **kwargs). Later names override earlier ones (the
  //                      interpreter binds them in order), so no lookups while building.
  ValueDict context;
  const auto add = [&context](const std::string& name, Value v) { context.entries.emplace_back(name, std::move(v)); };
  try {
    add("messages", from_json(inputs.messages));
    add("tools", from_json(inputs.tools));
    add("documents", Value::none());
    add("add_generation_prompt", Value(inputs.add_generation_prompt));
    if (inputs.special_tokens.is_object()) {
      for (const auto& [k, v] : inputs.special_tokens.items()) add(k, from_json(v));
    }
    if (inputs.kwargs.is_object()) {
      for (const auto& [k, v] : inputs.kwargs.items()) add(k, from_json(v));
    }
  } catch (const EvalError& e) {  // JSON nested past kMaxValueDepth
    fail(ErrorCode::InvalidArgument, "chat template '{}' inputs: {}", name_, e.what());
  }
  try {
    return jinja::render(*template_, context);
  } catch (const RenderError& e) {
    fail(ErrorCode::InvalidArgument, "chat template '{}' line {}: {}{}", name_, e.line,
         e.raised ? "raise_exception: " : "", e.message);
  }
}

}  // namespace izwi::jinja
