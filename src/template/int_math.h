#pragma once
// Python's integer arithmetic on int64: floor division and modulo round toward negative infinity,
// and a result that does not fit (Python's ints do not overflow) is an EvalError, never a wrapped
// value or a trap (INT64_MIN // -1).

#include <cstdint>
#include <string>

#include "template/value.h"

namespace izwi::jinja::py {

[[noreturn]] inline void integer_overflow(int64_t a, const char* op, int64_t b) {
  throw EvalError("integer overflow: " + std::to_string(a) + " " + op + " " + std::to_string(b) +
                  " does not fit in 64 bits");
}

inline int64_t add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) integer_overflow(a, "+", b);
  return r;
}

inline int64_t sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) integer_overflow(a, "-", b);
  return r;
}

inline int64_t mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) integer_overflow(a, "*", b);
  return r;
}

inline int64_t neg(int64_t a) {
  if (a == INT64_MIN) throw EvalError("integer overflow: -(" + std::to_string(a) + ") does not fit in 64 bits");
  return -a;
}

/// a // b (b != 0): rounded toward negative infinity.
inline int64_t floor_div(int64_t a, int64_t b) {
  if (b == -1) {  // a / -1 traps for INT64_MIN
    if (a == INT64_MIN) integer_overflow(a, "//", b);
    return -a;
  }
  const int64_t q = a / b, m = a % b;
  return m != 0 && ((m < 0) != (b < 0)) ? q - 1 : q;
}

/// a % b (b != 0): the sign of b.
inline int64_t mod(int64_t a, int64_t b) {
  if (b == -1) return 0;  // a % -1 traps for INT64_MIN
  const int64_t m = a % b;
  return m != 0 && ((m < 0) != (b < 0)) ? m + b : m;
}

/// int(d) of a finite float: truncated toward zero; EvalError when it does not fit (or is inf/nan).
inline int64_t truncate(double d) {
  // +-2^63 are exact doubles; no double lies strictly between -2^63 - 1 and -2^63.
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) {
    throw EvalError("cannot convert float " + float_repr(d) + " to a 64-bit integer");
  }
  return static_cast<int64_t>(d);
}

/// a ** b for b >= 0, by squaring.
inline int64_t pow(int64_t a, int64_t b) {
  int64_t result = 1, base = a;
  for (int64_t e = b; e > 0; e >>= 1) {
    if (e & 1) {
      if (__builtin_mul_overflow(result, base, &result)) integer_overflow(a, "**", b);
    }
    if (e > 1 && __builtin_mul_overflow(base, base, &base)) {
      // base**2 overflows; the result does unless base is 0, 1 or -1, which cannot overflow
      integer_overflow(a, "**", b);
    }
  }
  return result;
}

}  // namespace izwi::jinja::py
