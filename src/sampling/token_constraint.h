#pragma once
// A request's constraint on which token comes next (structured outputs). The sampler asks it for
// an allowed-token bitmask before each draw of the request's row and tells it the drawn token
// after; sampling knows nothing of what the constraint is (src/structured implements it).

#include <cstdint>

namespace izwi {

class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;
  /// 32-bit words of the bitmask: bit id % 32 of word id / 32, covering the logits' row.
  virtual int64_t bitmask_words() const = 0;
  /// Sets the bits of the ids allowed next, clears the others.
  virtual void fill_bitmask(uint32_t* words) = 0;
  /// Advances by the drawn id; false if the id was not allowed (the constraint is unchanged).
  virtual bool accept(int32_t id) = 0;
  /// The output is complete and nothing may follow: only an end (EOS or stop id) is allowed, so
  /// min_tokens no longer holds the end back.
  virtual bool must_end() const = 0;
};

}  // namespace izwi
