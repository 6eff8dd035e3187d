#pragma once
// What one step yields for each sequence that samples: a token, or a frame of audio codes. The
// token is what the sequence appends, its prefix-tree key: a text id, codebook 0 of a frame (the
// id the model's main head sampled), or the frame's key when frames are inputs a later request
// may share (LFM2-Audio; the engine reports codebook 0 to callers). `codes` holds the whole frame
// (codebook 0 first) when the model's head fills in the codebooks. A frame-emitting model that
// ends (e.g. codec EOS) yields the token alone.

#include <cstdint>
#include <vector>

namespace izwi {

struct StepOutput {
  int32_t token = 0;
  std::vector<int32_t> codes;  ///< Empty for text and for a frame-model's end token.
};

}  // namespace izwi
