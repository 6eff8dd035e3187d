#pragma once
// Jinja's grammar, as far as chat templates use it: statements for/if/set/macro/call/filter/
// break/continue (loopcontrols), raw, transformers' generation block; the full expression syntax.

#include <string>

#include "template/ast.h"

namespace izwi::jinja {

/// Throws SyntaxError (lexer.h) with the line of the offending token.
Template parse(const std::string& source);

}  // namespace izwi::jinja
