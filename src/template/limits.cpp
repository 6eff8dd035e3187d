#include "template/limits.h"

#include <stdexcept>
#include <string>

namespace izwi::jinja {
namespace {

thread_local RenderBudget* current_budget = nullptr;
thread_local int walk_depth = 0;
thread_local int64_t step_limit = kMaxRenderSteps;

}  // namespace

void limit_exceeded(const std::string& what, int64_t limit) {
  throw EvalError("render limit exceeded: " + what + " (limit " + std::to_string(limit) + ")");
}

RenderBudget::RenderBudget() : previous_(current_budget) { current_budget = this; }
RenderBudget::~RenderBudget() { current_budget = previous_; }

void RenderBudget::draw(int64_t bytes, int64_t steps) {
  RenderBudget* budget = current_budget;
  if (!budget) return;
  budget->bytes_ += bytes;
  if (budget->bytes_ > kMaxRenderBytes) {
    limit_exceeded("the template builds too many bytes of strings and lists", kMaxRenderBytes);
  }
  budget->steps_ += steps;
  if (budget->steps_ > step_limit) limit_exceeded("the template takes too many steps", step_limit);
}

RenderStepLimit::RenderStepLimit(int64_t steps) : previous_(step_limit) {
  if (steps < 1 || steps > kMaxRenderSteps) {
    throw std::invalid_argument("RenderStepLimit: steps must be in [1, kMaxRenderSteps]");
  }
  step_limit = steps;
}
RenderStepLimit::~RenderStepLimit() { step_limit = previous_; }

void charge_steps(int64_t n) { RenderBudget::draw(0, n); }

void charge_bytes(size_t n) {
  check_string_size(n);
  RenderBudget::draw(static_cast<int64_t>(n), static_cast<int64_t>(n / kBytesPerStep) + 1);
}

void charge_scan(size_t n) { charge_steps(static_cast<int64_t>(n / kBytesPerStep) + 1); }

void check_items(size_t n) {
  if (n > kMaxListItems) limit_exceeded("a list or dict has too many items", static_cast<int64_t>(kMaxListItems));
}

void charge_items(size_t n) {
  check_items(n);
  // Copying a value is a reference count, whatever it holds: a step per item.
  RenderBudget::draw(static_cast<int64_t>(n * sizeof(Value)), static_cast<int64_t>(n) + 1);
}

void check_string_size(size_t size) {
  if (size > kMaxStringBytes) limit_exceeded("a string is too long", static_cast<int64_t>(kMaxStringBytes));
}

size_t string_size_sum(size_t a, size_t b) {
  if (a > kMaxStringBytes || b > kMaxStringBytes - a) {
    limit_exceeded("a string is too long", static_cast<int64_t>(kMaxStringBytes));
  }
  return a + b;
}

size_t string_size_product(size_t size, size_t count) {
  if (size != 0 && count > kMaxStringBytes / size)
    limit_exceeded("a string is too long", static_cast<int64_t>(kMaxStringBytes));
  return size * count;
}

int nested_depth(int deepest) {
  if (deepest >= kMaxValueDepth) limit_exceeded("a value is nested too deeply", kMaxValueDepth);
  return deepest + 1;
}

ValueWalk::ValueWalk() {
  if (walk_depth >= kMaxValueDepth) limit_exceeded("a value is nested too deeply", kMaxValueDepth);
  ++walk_depth;
}
ValueWalk::~ValueWalk() { --walk_depth; }

}  // namespace izwi::jinja
