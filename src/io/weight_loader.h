#pragma once
// Loads a Hugging Face checkpoint's tensors (model.safetensors, shards listed in
// model.safetensors.index.json, or one named .safetensors file). Every stored tensor must be taken or explicitly
// skipped: finish() reports the rest by name. A folder whose config.json has a quantization_config
// (GPTQ, AWQ, FP8: src/quant/quantization_config.h) hands its quantized linear layers to
// read_quantized as released, and to read() dequantized to float.

#include <ATen/ATen.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "io/weight_source.h"
#include "quant/checkpoint_tensors.h"
#include "quant/quantization_config.h"

namespace izwi {

class WeightLoader final : public WeightSource {
 public:
  /// Opens the checkpoint in `model_dir` (a folder, or a .safetensors file); NotFound if it has no
  /// safetensors weights.
  WeightLoader(const std::string& model_dir, at::ScalarType compute_dtype, at::ScalarType weight_dtype,
               const at::Device& device);

  /// Also true for `<prefix>.weight` of a quantized layer (stored as `<prefix>.qweight` etc.).
  bool contains(const std::string& name) const override;
  void skip(const std::string& name) override;
  /// Skips every stored tensor whose name starts with `prefix` (a part of a checkpoint another
  /// component reads, e.g. a codec's encoder when only its decoder is built).
  void skip_prefix(const std::string& prefix);
  /// Skips every stored tensor whose name does not start with `prefix`.
  void skip_all_but(const std::string& prefix);
  void finish() const override;
  /// Files every stored tensor under `rename(stored name)` (a checkpoint written with another
  /// library's names); messages keep naming the stored tensor. InvalidFormat when two collide.
  void rename(const std::function<std::string(const std::string&)>& rename);
  /// Calls `progress(done, total)` with the bytes of stored tensors read or skipped so far after
  /// each one (EngineConfig::on_load_progress); null = none.
  void set_progress(std::function<void(int64_t done, int64_t total)> progress);

 protected:
  /// `<prefix>.weight` of a layer the checkpoint stores quantized: GPTQ / AWQ `<prefix>.qweight`,
  /// `.qzeros`, `.scales` (and GPTQ's `.g_idx`), or an F8_E4M3 `<prefix>.weight` with
  /// `.weight_scale` (its `.input_scale`, if any, is skipped). nullopt for a layer left in float.
  std::optional<QuantizedMatrix> read_quantized(const std::string& name, const std::vector<int64_t>& shape) override;
  at::Tensor read(const std::string& name, const std::vector<int64_t>& shape) override;
  std::string location(const std::string& name) const override;

 private:
  struct Location {
    const SafetensorsFile* file;
    const StTensorInfo* info;
  };

  std::string model_dir_;
  QuantizationConfig quantization_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, Location> tensors_;
  std::set<std::string> used_;
  std::function<void(int64_t, int64_t)> progress_;
  int64_t total_bytes_ = 0;
  int64_t used_bytes_ = 0;

  /// Marks `name` used, counting its bytes once and reporting progress.
  void use(const std::string& name);
  /// The stored tensor `name` in its stored dtype, marked used; undefined (named) when absent.
  StoredTensor stored(const std::string& name);
  /// The layer `name` (`<prefix>.weight`) is stored quantized.
  bool is_quantized(const std::string& name) const;
};

}  // namespace izwi
