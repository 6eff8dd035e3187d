#include "codec/streaming_codec_decoder.h"

#include <fmt/format.h>

#include <map>

#include "common/check.h"

namespace izwi {
namespace {

class CodecStreamState final : public CodecDecoderState {
 public:
  const StreamingCodecDecoder* owner = nullptr;
  int64_t position = 0;             ///< Frames decoded so far.
  std::vector<at::Tensor> tensors;  ///< Batch-1 carry-overs, in the decoder's fixed order.

  std::unique_ptr<CodecDecoderState> clone() const override {
    auto copy = std::make_unique<CodecStreamState>();
    copy->owner = owner;
    copy->position = position;
    for (const at::Tensor& t : tensors) copy->tensors.push_back(t.clone());
    return copy;
  }
};

}  // namespace

at::Tensor StreamingCodecDecoder::checked_codes(const at::Tensor& codes, const std::string& what, bool allow_empty,
                                                int64_t first_frame) const {
  if (!codes.defined() || codes.dim() != 2) {
    fail(ErrorCode::InvalidArgument, "{}codes must be a [num_codebooks, frames] tensor, got {} dimensions", what,
         codes.defined() ? codes.dim() : 0);
  }
  if (at::isFloatingType(codes.scalar_type()) || codes.scalar_type() == at::kBool) {
    fail(ErrorCode::InvalidArgument, "{}codes must be integers, got {}", what, c10::toString(codes.scalar_type()));
  }
  if (codes.size(0) != num_codebooks()) {
    fail(ErrorCode::InvalidArgument, "{}codes have {} codebooks but the codec has {}", what, codes.size(0),
         num_codebooks());
  }
  if (codes.size(1) == 0 && !allow_empty) fail(ErrorCode::InvalidArgument, "{}codes have no frames", what);
  const at::Tensor cpu = codes.to(at::kCPU, at::kLong).contiguous();
  const at::Tensor bad = ((cpu < 0) | (cpu >= codebook_size())).nonzero();
  if (bad.size(0) > 0) {
    const int64_t k = bad[0][0].item<int64_t>(), t = bad[0][1].item<int64_t>();
    fail(ErrorCode::InvalidArgument, "{}codebook {}, frame {}: code {} is outside [0, {})", what, k, first_frame + t,
         cpu[k][t].item<int64_t>(), codebook_size());
  }
  return cpu.to(device_);
}

at::Tensor StreamingCodecDecoder::forward_in_chunks(const at::Tensor& codes, const std::vector<int64_t>& positions,
                                                    std::vector<at::Tensor>& states) const {
  const int64_t frames = codes.size(2);
  std::vector<at::Tensor> pieces;
  for (int64_t start = 0; start < frames; start += kDecodeChunkFrames) {
    const int64_t n = std::min(kDecodeChunkFrames, frames - start);
    std::vector<int64_t> chunk_positions = positions;
    for (int64_t& p : chunk_positions) p += start;
    pieces.push_back(forward(codes.narrow(2, start, n), chunk_positions, states).to(at::kFloat));
  }
  // The samples leave for the caller in one copy, not one per chunk.
  return (pieces.size() == 1 ? pieces[0] : at::cat(pieces, 1)).to(at::kCPU);
}

void StreamingCodecDecoder::check_codes(const at::Tensor& codes) const { checked_codes(codes, "", true, 0); }

at::Tensor StreamingCodecDecoder::decode(const at::Tensor& codes) const {
  const at::Tensor checked = checked_codes(codes, "", true, 0);
  if (checked.size(1) == 0) return at::zeros({0}, at::kFloat);
  std::vector<at::Tensor> states;
  append_initial_state(states);
  return forward_in_chunks(checked.unsqueeze(0), {0}, states).squeeze(0).contiguous();
}

std::unique_ptr<CodecDecoderState> StreamingCodecDecoder::new_state() const {
  auto state = std::make_unique<CodecStreamState>();
  state->owner = this;
  append_initial_state(state->tensors);
  return state;
}

std::vector<at::Tensor> StreamingCodecDecoder::decode_streaming(const std::vector<CodecDecoderState*>& states,
                                                                const std::vector<at::Tensor>& new_codes) const {
  if (states.size() != new_codes.size()) {
    fail(ErrorCode::InvalidArgument, "decode_streaming: {} states but {} code chunks", states.size(), new_codes.size());
  }
  std::vector<CodecStreamState*> typed(states.size());
  std::vector<at::Tensor> codes(states.size());
  std::map<int64_t, std::vector<size_t>> groups;  // frames -> streams
  for (size_t i = 0; i < states.size(); ++i) {
    typed[i] = dynamic_cast<CodecStreamState*>(states[i]);
    if (typed[i] == nullptr || typed[i]->owner != this) {
      fail(ErrorCode::InvalidArgument, "decode_streaming: stream {} has a state this decoder did not create", i);
    }
    for (size_t j = 0; j < i; ++j) {
      if (typed[j] == typed[i]) fail(ErrorCode::InvalidArgument, "decode_streaming: stream {} is also stream {}", i, j);
    }
    codes[i] = checked_codes(new_codes[i], fmt::format("stream {}: ", i), false, typed[i]->position);
    groups[codes[i].size(1)].push_back(i);
  }

  std::vector<at::Tensor> outputs(states.size());
  for (const auto& [frames, members] : groups) {
    std::vector<int64_t> positions;
    std::vector<at::Tensor> batch_codes;
    for (const size_t i : members) {
      positions.push_back(typed[i]->position);
      batch_codes.push_back(codes[i]);
    }
    const size_t num_states = typed[members[0]]->tensors.size();
    std::vector<at::Tensor> batched(num_states);
    for (size_t s = 0; s < num_states; ++s) {
      std::vector<at::Tensor> parts;
      for (const size_t i : members) parts.push_back(typed[i]->tensors[s]);
      batched[s] = members.size() == 1 ? parts[0] : at::cat(parts, 0);
    }
    const at::Tensor wav = forward_in_chunks(at::stack(batch_codes), positions, batched);
    for (size_t b = 0; b < members.size(); ++b) {
      CodecStreamState* state = typed[members[b]];
      for (size_t s = 0; s < num_states; ++s) {
        state->tensors[s] = members.size() == 1 ? batched[s] : batched[s].narrow(0, b, 1).clone();
      }
      state->position += frames;
      outputs[members[b]] = wav[b].contiguous();
    }
  }
  return outputs;
}

}  // namespace izwi
