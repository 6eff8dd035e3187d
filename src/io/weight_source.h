#pragma once
// Where a model's constructor gets its tensors. Models ask by name and expected shape; the
// source decides where the values come from (a checkpoint on disk, or random values for the
// checkpoint tool) and converts them: large matrices (linear layers, embeddings) to the weight
// storage dtype, everything else (norms, biases, conv kernels) to the compute dtype.

#include <ATen/ATen.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "quant/quantized_matrix.h"

namespace izwi {

class Backend;
struct PanelKernels;

/// The bytes of the weights a model holds, counted once as its parts load them, whatever sources
/// they open (a speech model's codec, encoders and speaker encoder open their own): while one of
/// these lives on a thread, every WeightSource's take() and take_matrix() on that thread add the
/// bytes of what they hand out, and a part that keeps a matrix in another form than it took
/// (Linear's quantized panels, a tied head quantized) adds the difference with add(). So no model
/// sums its parts (load_causal_lm sets ModelSpec::weight_bytes from one).
class ResidentWeightBytes {
 public:
  /// Becomes this thread's count until destroyed (the previous one is restored then).
  ResidentWeightBytes();
  ~ResidentWeightBytes();
  ResidentWeightBytes(const ResidentWeightBytes&) = delete;
  ResidentWeightBytes& operator=(const ResidentWeightBytes&) = delete;

  int64_t bytes() const { return bytes_; }
  /// Adds `bytes` (negative for a form released) to this thread's count, if one lives.
  static void add(int64_t bytes);

 private:
  int64_t bytes_ = 0;
  ResidentWeightBytes* previous_ = nullptr;
};

class WeightSource {
 public:
  WeightSource(at::ScalarType compute_dtype, at::ScalarType weight_dtype, const at::Device& device)
      : compute_dtype_(compute_dtype), weight_dtype_(weight_dtype), device_(device) {}
  virtual ~WeightSource() = default;

  /// True if the source holds `name` (a random source holds nothing until asked).
  virtual bool contains(const std::string& name) const = 0;
  /// A small tensor in the compute dtype.
  at::Tensor take(const std::string& name, const std::vector<int64_t>& shape);
  /// A large matrix in the weight storage dtype.
  at::Tensor take_matrix(const std::string& name, const std::vector<int64_t>& shape);
  /// A large matrix [out, in] quantized: as the checkpoint stores it (read_quantized), else
  /// quantized at load from its floating-point values when the backend's weight_quantization()
  /// asks for it; nullopt when neither (take_matrix then gives it).
  std::optional<QuantizedMatrix> take_quantized(const std::string& name, const std::vector<int64_t>& shape);
  /// Marks a stored tensor as deliberately unused (e.g. a tied lm_head saved anyway).
  virtual void skip(const std::string& name) = 0;
  /// Throws InvalidFormat listing stored tensors that were neither taken nor skipped.
  virtual void finish() const = 0;

  /// Tensors of at most this many elements (norm scales, biases, conv kernels: a small share of
  /// the bytes, but one NaN there spreads through every activation) are always scanned for NaN and
  /// Inf as they load; InvalidFormat names the first that holds one.
  static constexpr int64_t kAlwaysCheckedElements = int64_t{1} << 20;
  /// When on, take_matrix keeps matrices the checkpoint stores in bf16 as bf16 whatever
  /// weight_dtype() says (Backend::keeps_bf16_weights: "auto" does not widen a bf16 checkpoint).
  void set_keep_bf16(bool on) { keep_bf16_ = on; }
  /// When on, every tensor taken is scanned, the large matrices too (one more pass over the weights).
  void set_check_finite(bool on) { check_finite_ = on; }
  bool check_finite() const { return check_finite_; }

  /// The backend the model is loaded for: its weights are packed for backend.panel_kernels()
  /// (cpu_kernels()), and the model's parts keep a reference to it, so it must outlive them (the
  /// executor owns the engine's). Its device and compute dtype must be the source's; the source may
  /// store its matrices in another dtype than backend.weight_dtype() (a codec keeps its few in the
  /// compute dtype).
  void set_backend(const Backend& backend);
  /// The backend set, or Backend::host() for a source built from dtypes alone (tests, tools).
  const Backend& backend() const;

  /// The variant linear layers (and tied output heads) whose weights the CPU panel kernels take
  /// are repacked for as they load (layers/packed_weight.h): the backend's panel_kernels(), null
  /// without a backend or unless izwi's CPU kernels run in float32.
  const PanelKernels* cpu_kernels() const { return cpu_kernels_; }

  at::ScalarType compute_dtype() const { return compute_dtype_; }
  at::ScalarType weight_dtype() const { return weight_dtype_; }
  const at::Device& device() const { return device_; }

 protected:
  /// The matrix `name` [shape[0], shape[1]] as a quantized checkpoint stores it (GPTQ / AWQ / FP8
  /// as released, src/quant), on the CPU; nullopt when the source stores it in floating point
  /// (then read() gives it). Throws naming the tensor when the stored form is malformed.
  virtual std::optional<QuantizedMatrix> read_quantized(const std::string& /*name*/,
                                                        const std::vector<int64_t>& /*shape*/) {
    return std::nullopt;
  }
  /// The named tensor's values as a floating-point CPU tensor of exactly `shape`; throws naming
  /// the tensor when it is missing, mis-shaped or not floating point.
  virtual at::Tensor read(const std::string& name, const std::vector<int64_t>& shape) = 0;
  /// Where `name` is stored, for error messages (a file path); empty when there is no file.
  virtual std::string location(const std::string& /*name*/) const { return {}; }

 private:
  at::ScalarType compute_dtype_;
  at::ScalarType weight_dtype_;
  at::Device device_;
  bool check_finite_ = false;
  bool keep_bf16_ = false;
  const PanelKernels* cpu_kernels_ = nullptr;
  const Backend* backend_ = nullptr;

  at::Tensor checked_read(const std::string& name, const std::vector<int64_t>& shape);
};

}  // namespace izwi
