#pragma once
// The bounds on parsing and rendering one untrusted chat template (a model folder's template is
// code from the internet, rendered on every request). A render draws from one budget: every
// expression, statement, loop iteration, call, comparison and visited item costs steps, every
// string or list it builds costs bytes (and steps by its size). Values nest to a bounded depth and
// recursion (of the parser, the evaluator, macros) is bounded too. Real templates use a tiny part
// of each (docs/chat_templates.md#render-limits). A limit hit is an EvalError "render limit exceeded:
// <what> (limit N)", which the template's user sees as an InvalidArgument naming the line.

#include <cstddef>
#include <cstdint>
#include <string>

#include "template/value.h"

namespace izwi::jinja {

// Parsing.
constexpr int kMaxParseNesting = 100;      ///< parser recursion: nested sub-expressions, nested blocks
constexpr int kMaxExpressionHeight = 300;  ///< of one expression tree (a+a+...+a is as tall as it is long)
// Rendering.
constexpr int kMaxCallDepth = 200;               ///< macro (and caller) recursion
constexpr int kMaxEvalDepth = 800;               ///< the evaluator's recursion: expressions, blocks, macro calls
constexpr int kMaxValueDepth = 200;              ///< lists and dicts inside each other; printing through namespaces
constexpr int64_t kMaxRenderSteps = 20'000'000;  ///< about a second or two of work
constexpr size_t kMaxStringBytes = size_t{32} << 20;     ///< one string, the output included
constexpr size_t kMaxListItems = size_t{1} << 20;        ///< one list or dict
constexpr int64_t kMaxRenderBytes = int64_t{256} << 20;  ///< all strings and lists a render builds, summed
constexpr int64_t kMaxRangeItems = 100'000;              ///< one range()
constexpr size_t kBytesPerStep = 8;                      ///< building or reading n bytes costs n / 8 steps
constexpr int64_t kStepsPerCall = 10;                    ///< a macro call: a scope, its arguments, its text

/// The budget of the render running on this thread (renders do not nest). While none runs, only
/// the per-value limits apply.
class RenderBudget {
 public:
  RenderBudget();
  ~RenderBudget();
  RenderBudget(const RenderBudget&) = delete;
  RenderBudget& operator=(const RenderBudget&) = delete;

 private:
  friend void charge_steps(int64_t);
  friend void charge_bytes(size_t);
  friend void charge_items(size_t);
  // Adds `bytes` built and `steps` to the running render's budget, if one runs.
  static void draw(int64_t bytes, int64_t steps);
  int64_t steps_ = 0;
  int64_t bytes_ = 0;
  RenderBudget* previous_;
};

/// While one lives, renders on its thread stop at `steps` instead of kMaxRenderSteps: the fuzz
/// target's, whose every input must take well under a second under ASan (where kMaxRenderSteps
/// takes some 20 s). Steps past kMaxRenderSteps are not allowed.
class RenderStepLimit {
 public:
  explicit RenderStepLimit(int64_t steps);
  ~RenderStepLimit();
  RenderStepLimit(const RenderStepLimit&) = delete;
  RenderStepLimit& operator=(const RenderStepLimit&) = delete;

 private:
  int64_t previous_;
};

/// Throws the EvalError "render limit exceeded: <what> (limit <limit>)".
[[noreturn]] void limit_exceeded(const std::string& what, int64_t limit);
/// Costs `n` steps; a limit error past kMaxRenderSteps (or the thread's RenderStepLimit).
void charge_steps(int64_t n);
/// A string of `n` bytes is being built: a limit error past kMaxStringBytes, or past kMaxRenderBytes
/// in all; costs n / kBytesPerStep steps.
void charge_bytes(size_t n);
/// `n` bytes are being read (searched, decoded, compared): costs n / kBytesPerStep steps.
void charge_scan(size_t n);
/// A list or dict of `n` items is being built: a limit error past kMaxListItems; costs as its slots.
void charge_items(size_t n);
/// A limit error unless a list of `n` items fits kMaxListItems (check before building it).
void check_items(size_t n);
/// A limit error unless a string of `size` bytes fits kMaxStringBytes (check before building it).
void check_string_size(size_t size);
/// `a` + `b` bytes, a limit error when that is more than a string may hold (no overflow).
size_t string_size_sum(size_t a, size_t b);
/// `count` copies of `size` bytes, a limit error when that is more than a string may hold (no overflow).
size_t string_size_product(size_t size, size_t count);

/// The depth of a list or dict whose deepest item is `deepest` deep; a limit error past kMaxValueDepth
/// (printing, comparing and destroying a value recurse over its levels).
int nested_depth(int deepest);

/// Counts one level of a recursive walk over a value (printing through namespaces); a limit error past
/// kMaxValueDepth.
class ValueWalk {
 public:
  ValueWalk();
  ~ValueWalk();
  ValueWalk(const ValueWalk&) = delete;
  ValueWalk& operator=(const ValueWalk&) = delete;
};

}  // namespace izwi::jinja
