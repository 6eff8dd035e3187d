#pragma once
// Renders a parsed template: Jinja's scoping (for and macro bodies are scopes, if is not),
// loop variables, loopcontrols, macros with caller, namespaces and the global functions chat
// templates call (range, namespace, dict, raise_exception, strftime_now).

#include <string>

#include "template/ast.h"
#include "template/value.h"

namespace izwi::jinja {

/// A failure while rendering, with the line of the expression or statement that failed.
/// A render limit hit (template/limits.h) is one too, its message "render limit exceeded: ...".
struct RenderError {
  int line;
  std::string message;
  bool raised;  ///< by the template's raise_exception()
};

/// Names an unknown filter or test (Jinja rejects those when compiling) as a SyntaxError.
void check_names(const Template& tmpl);

/// Throws RenderError. Draws from a RenderBudget (template/limits.h) of its own.
std::string render(const Template& tmpl, const ValueDict& context);

}  // namespace izwi::jinja
