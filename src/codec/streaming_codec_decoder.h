#pragma once
// What every izwi codec decoder shares: code validation, whole-sequence decode through the
// streaming path in bounded chunks, and batched incremental decode of many streams (streams
// with the same number of new frames run as one batch; their carry-over tensors are
// concatenated along the batch dimension and split back). A decoder supplies its forward pass
// over batched state and the list of its zero states.

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codec/codec_decoder.h"

namespace izwi {

class StreamingCodecDecoder : public CodecDecoder {
 public:
  at::Tensor decode(const at::Tensor& codes) const final;
  void check_codes(const at::Tensor& codes) const final;
  std::unique_ptr<CodecDecoderState> new_state() const final;
  std::vector<at::Tensor> decode_streaming(const std::vector<CodecDecoderState*>& states,
                                           const std::vector<at::Tensor>& new_codes) const final;

 protected:
  explicit StreamingCodecDecoder(const at::Device& device) : device_(device) {}

  /// codes [B, K, n] int64 on the device; `positions[b]` is stream b's first frame index;
  /// `states` are the batched per-stream tensors in the order append_initial_state lists them,
  /// replaced in place. Returns [B, n * samples_per_frame].
  virtual at::Tensor forward(const at::Tensor& codes, const std::vector<int64_t>& positions,
                             std::vector<at::Tensor>& states) const = 0;
  /// Appends one stream's zero carry-overs (batch 1).
  virtual void append_initial_state(std::vector<at::Tensor>& states) const = 0;

 private:
  /// Checks shape and range; returns the codes as int64 on the device. `what` prefixes messages,
  /// which count frames from `first_frame` (the stream's position).
  at::Tensor checked_codes(const at::Tensor& codes, const std::string& what, bool allow_empty,
                           int64_t first_frame) const;
  /// forward() kDecodeChunkFrames frames at a time (bounds activations); codes [B, K, n] with
  /// n >= 1 -> [B, n * samples_per_frame] float32 CPU.
  at::Tensor forward_in_chunks(const at::Tensor& codes, const std::vector<int64_t>& positions,
                               std::vector<at::Tensor>& states) const;

  at::Device device_;
};

}  // namespace izwi
