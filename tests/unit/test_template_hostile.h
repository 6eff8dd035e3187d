#pragma once
// Shared by tests/unit/test_template_hostile_*.cpp: hostile chat templates (untrusted code from a
// model folder, rendered on every request) must end in a typed izwi::Error, never a crash, a hang,
// a wrapped integer or gigabytes of memory.

#include <gtest/gtest.h>

#include <string>

#include "izwi/errors.h"
#include "template/chat_template.h"

namespace izwi::hostile {

/// Renders `source` with `kwargs` as the template's variables (and no messages).
inline std::string render(const std::string& source,
                          const nlohmann::ordered_json& kwargs = nlohmann::ordered_json::object()) {
  jinja::ChatTemplateInputs in;
  in.kwargs = kwargs;
  return jinja::ChatTemplate(source, "hostile.jinja").render(in);
}

/// The typed error that parsing or rendering `source` raises (a test failure if none).
inline Error error_of(const std::string& source,
                      const nlohmann::ordered_json& kwargs = nlohmann::ordered_json::object()) {
  try {
    render(source, kwargs);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << source.substr(0, 200);
  return Error(ErrorCode::Internal, "");
}

/// Whether the error's message contains `text`.
inline ::testing::AssertionResult mentions(const Error& e, const std::string& text) {
  if (std::string(e.what()).find(text) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << e.what() << "' does not mention '" << text << "'";
}

/// `text` repeated `n` times.
inline std::string repeat(const std::string& text, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += text;
  return out;
}

}  // namespace izwi::hostile
