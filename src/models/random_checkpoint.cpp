#include "models/random_checkpoint.h"

#include <filesystem>
#include <fstream>

#include "common/check.h"
#include "io/hf_config.h"
#include "io/random_weights.h"
#include "io/safetensors_writer.h"
#include "models/model_registry.h"

namespace izwi {

RandomCheckpointInfo write_random_checkpoint(const nlohmann::json& config, const std::string& out_dir,
                                             at::ScalarType dtype, uint64_t seed) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) fail(ErrorCode::InvalidArgument, "cannot create '{}': {}", out_dir, ec.message());
  nlohmann::json stored = config;
  stored["dtype"] = dtype == at::kBFloat16 ? "bfloat16" : "float32";
  {
    std::ofstream out(fs::path(out_dir) / "config.json");
    out << stored.dump(2) << "\n";
    if (!out) fail(ErrorCode::ResourceExhausted, "cannot write '{}/config.json'", out_dir);
  }
  // Building the model on the meta device records every tensor it asks for without keeping a
  // second copy of the weights.
  RandomWeights weights(seed, at::kMeta, dtype);
  build_causal_lm(HfConfig::load(out_dir), weights);
  const std::string path = (fs::path(out_dir) / "model.safetensors").string();
  write_safetensors(path, weights.tensors(), dtype);
  RandomCheckpointInfo info;
  for (const auto& [name, t] : weights.tensors()) info.parameters += t.numel();
  info.file_bytes = static_cast<int64_t>(fs::file_size(path));
  return info;
}

}  // namespace izwi
