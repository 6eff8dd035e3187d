#pragma once
// A CUDA graph capture that failed (an operation a capture does not allow, an invalidated capture):
// nothing of the step has run yet, so the caller runs it eagerly and stops capturing.

#include <stdexcept>

namespace izwi {

class GraphCaptureFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace izwi
