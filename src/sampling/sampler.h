#pragma once
// Turns rows of logits into token ids, applying the processors in Hugging Face's order:
// repetition penalty, min-tokens suppression, temperature, top-k, top-p, then a draw (or argmax).
// sample_rows is the sampling dispatch point every model's output head goes through.

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/backend.h"
#include "layers/step/sampling_state.h"

namespace izwi {

class DeviceSampler;

/// Log-softmax over the vocabulary of each row of `logits` [rows, vocab] (any device, any float
/// dtype), as float32 where the logits are.
at::Tensor log_softmax_rows(const at::Tensor& logits);
/// From `log_probs` [rows, vocab] (log_softmax_rows): row r's entry of ids[r] and its top[r]
/// largest entries, descending. Only these values are copied to the host.
std::vector<TokenLogprob> pick_logprobs(const at::Tensor& log_probs, const std::vector<int32_t>& ids,
                                        const std::vector<int32_t>& top);

class Sampler {
 public:
  Sampler();
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  /// `logits` has `vocab_size` entries and is modified in place (scratch).
  int32_t sample(float* logits, int32_t vocab_size, SamplingState& state);

  /// One id per row of `logits` [rows, vocab] (any device, any float dtype), row r sampled with
  /// *states[r]. Cuda backend with logits on a CUDA device: sampled there (sampling/device_sampler.h)
  /// and only the ids come back. Otherwise the rows are copied to the host and sampled there, spread
  /// over the CPU threads (at::parallel_for); each row's draw depends only on its own state.
  /// Rows whose state has a constraint (structured outputs) are masked to its allowed ids first,
  /// on the logits' device, and the drawn id is given to it. Rows whose state asks for logprobs get
  /// their TokenLogprob appended to its logprobs_out, from the logits as given (before any
  /// processor) but after that mask.
  std::vector<int32_t> sample_rows(const at::Tensor& logits, const std::vector<SamplingState*>& states,
                                   const Backend& backend);

  /// sample_rows leaving the ids where the logits are: an int64 tensor [rows] on the logits'
  /// device (on the CPU, a CPU tensor), with no copy back to the host on the Cuda backend. For a
  /// chain of draws whose next input is the drawn id (a frame's codebooks), which copies the ids
  /// back once at its end. The states advance as in sample_rows (draw counters, host RNGs); each
  /// state's history is read as it stands, so a repetition penalty sees no id of the chain until
  /// the caller appends them. Rows may have no constraint and ask for no logprobs (both need the
  /// ids on the host): sample_rows is for those.
  at::Tensor sample_rows_on_device(const at::Tensor& logits, const std::vector<SamplingState*>& states,
                                   const Backend& backend);

 private:
  /// `logits` with the rows `constrained` masked by their states' constraints: float32, on the
  /// host unless the logits are on a CUDA device with the Cuda backend (then masked there).
  at::Tensor mask_rows(const at::Tensor& logits, const std::vector<SamplingState*>& states,
                       const std::vector<int64_t>& constrained, const Backend& backend);
  std::vector<int32_t> sample_with_logprobs(const at::Tensor& logits, const std::vector<SamplingState*>& states,
                                            const std::vector<int64_t>& asking, const Backend& backend);
  std::vector<int32_t> sample_ids(const at::Tensor& logits, const std::vector<SamplingState*>& states,
                                  const Backend& backend);
  /// The ids [rows] (int64) where they were drawn: on the logits' CUDA device with the Cuda
  /// backend, else on the host. The one implementation both forms share.
  at::Tensor draw_ids(const at::Tensor& logits, const std::vector<SamplingState*>& states, const Backend& backend);

  /// Buffers one row's sampling reuses across calls; one per thread that samples rows.
  struct Scratch {
    std::vector<int32_t> order;
    std::vector<float> probs;   ///< by id
    std::vector<float> values;  ///< a copy of the logits to select on
    std::vector<uint8_t> seen;
  };
  static int32_t sample_with(float* logits, int32_t vocab_size, SamplingState& state, Scratch& scratch);
  static void apply_repetition_penalty(float* logits, int32_t vocab_size, const SamplingState& state, Scratch& scratch);
  /// A draw among ids[0, count) with probabilities probs[id] summing to `total`, walked in order.
  static int32_t draw(const int32_t* ids, int32_t count, double total, const std::vector<float>& probs,
                      SamplingState& state);

  std::vector<Scratch> scratch_;           ///< [0] for sample(); [i] for thread i's rows in sample_rows
  std::unique_ptr<DeviceSampler> device_;  ///< Created on the first device call (CUDA builds).
};

}  // namespace izwi
