#include "io/weight_loader.h"

#include <fmt/ranges.h>

#include <filesystem>

#include "common/check.h"
#include "common/json_fields.h"
#include "io/safetensors_tensor.h"
#include "quant/awq_reader.h"
#include "quant/dequantize.h"
#include "quant/fp8_reader.h"
#include "quant/gptq_reader.h"

namespace izwi {

namespace fs = std::filesystem;

namespace {

bool is_float(StDType dtype) {
  return dtype == StDType::F64 || dtype == StDType::F32 || dtype == StDType::F16 || dtype == StDType::BF16;
}

constexpr char kWeightSuffix[] = ".weight";

// "<prefix>.weight" -> "<prefix>", or empty for any other name.
std::string layer_prefix(const std::string& name) {
  const size_t n = sizeof(kWeightSuffix) - 1;
  if (name.size() <= n || name.compare(name.size() - n, n, kWeightSuffix) != 0) return {};
  return name.substr(0, name.size() - n);
}

}  // namespace

WeightLoader::WeightLoader(const std::string& model_dir, at::ScalarType compute_dtype, at::ScalarType weight_dtype,
                           const at::Device& device)
    : WeightSource(compute_dtype, weight_dtype, device),
      model_dir_(model_dir),
      quantization_(load_quantization_config(model_dir)) {
  const fs::path dir(model_dir);
  const fs::path index_path = dir / "model.safetensors.index.json";
  const fs::path single_path = dir / "model.safetensors";
  if (fs::is_regular_file(dir)) {
    files_.push_back(std::make_unique<SafetensorsFile>(dir.string()));
    for (const auto& info : files_.back()->tensors()) tensors_[info.name] = Location{files_.back().get(), &info};
  } else if (fs::exists(index_path)) {
    const nlohmann::json index = read_json_file(index_path.string());
    JsonFields fields(index, index_path.string());
    auto map = fields.object("weight_map");
    if (!map) fail(ErrorCode::InvalidFormat, "{}: missing 'weight_map'", index_path.string());
    std::map<std::string, const SafetensorsFile*> shards;
    for (auto it = map->json().begin(); it != map->json().end(); ++it) {
      if (!it->is_string()) {
        fail(ErrorCode::InvalidFormat, "{}: weight_map entry '{}' is not a file name", index_path.string(), it.key());
      }
      const std::string shard = it->get<std::string>();
      if (shard.empty() || shard.find('/') != std::string::npos || shard == "." || shard == "..") {
        fail(ErrorCode::InvalidFormat, "{}: weight_map entry '{}' names '{}', which is not a file in the model folder",
             index_path.string(), it.key(), shard);
      }
      auto found = shards.find(shard);
      if (found == shards.end()) {
        files_.push_back(std::make_unique<SafetensorsFile>((dir / shard).string()));
        found = shards.emplace(shard, files_.back().get()).first;
      }
      const StTensorInfo* info = found->second->find(it.key());
      if (info == nullptr) {
        fail(ErrorCode::InvalidFormat, "{}: tensor '{}' is listed for shard '{}' but that file does not contain it",
             index_path.string(), it.key(), shard);
      }
      tensors_[it.key()] = Location{found->second, info};
    }
    for (const auto& file : files_) {
      for (const auto& info : file->tensors()) {
        if (tensors_.count(info.name) == 0) {
          fail(ErrorCode::InvalidFormat, "{}: tensor '{}' is not listed in {}", file->path(), info.name,
               index_path.string());
        }
      }
    }
  } else if (fs::exists(single_path)) {
    files_.push_back(std::make_unique<SafetensorsFile>(single_path.string()));
    for (const auto& info : files_.back()->tensors()) tensors_[info.name] = Location{files_.back().get(), &info};
  } else {
    fail(ErrorCode::NotFound, "'{}' has neither model.safetensors nor model.safetensors.index.json", model_dir);
  }
}

bool WeightLoader::contains(const std::string& name) const { return tensors_.count(name) != 0 || is_quantized(name); }

bool WeightLoader::is_quantized(const std::string& name) const {
  const std::string prefix = layer_prefix(name);
  if (prefix.empty()) return false;
  switch (quantization_.method) {
    case QuantMethod::None:
      return false;
    case QuantMethod::Gptq:
    case QuantMethod::Awq:
      return tensors_.count(prefix + ".qweight") != 0;
    case QuantMethod::Fp8: {
      const auto it = tensors_.find(name);
      return it != tensors_.end() && it->second.info->dtype == StDType::F8_E4M3;
    }
  }
  return false;
}

StoredTensor WeightLoader::stored(const std::string& name) {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) return {name, {}};
  StoredTensor t{it->second.info->name, read_tensor(*it->second.file, *it->second.info)};
  use(name);
  return t;
}

std::optional<QuantizedMatrix> WeightLoader::read_quantized(const std::string& name,
                                                            const std::vector<int64_t>& shape) {
  if (shape.size() != 2 || !is_quantized(name)) return std::nullopt;
  const std::string prefix = layer_prefix(name);
  const std::string first = quantization_.method == QuantMethod::Fp8 ? name : prefix + ".qweight";
  const QuantLayer layer{location(first), shape[0], shape[1]};
  switch (quantization_.method) {
    case QuantMethod::Gptq: {
      const GptqTensors t{stored(prefix + ".qweight"), stored(prefix + ".qzeros"), stored(prefix + ".scales"),
                          stored(prefix + ".g_idx")};
      return read_gptq(layer, t, quantization_);
    }
    case QuantMethod::Awq: {
      const AwqTensors t{stored(prefix + ".qweight"), stored(prefix + ".qzeros"), stored(prefix + ".scales")};
      return read_awq(layer, t, quantization_);
    }
    case QuantMethod::Fp8: {
      const Fp8Tensors t{stored(name), stored(prefix + ".weight_scale")};
      // Static activation scales: the CPU quantizes no activations to FP8.
      if (tensors_.count(prefix + ".input_scale") != 0) use(prefix + ".input_scale");
      return read_fp8(layer, t);
    }
    case QuantMethod::None:
      break;
  }
  return std::nullopt;
}

void WeightLoader::rename(const std::function<std::string(const std::string&)>& rename) {
  std::map<std::string, Location> renamed;
  for (const auto& [name, location] : tensors_) {
    const auto [it, inserted] = renamed.emplace(rename(name), location);
    if (!inserted) {
      fail(ErrorCode::InvalidFormat, "{}: tensors '{}' and '{}' both stand for '{}'", location.file->path(),
           it->second.info->name, name, it->first);
    }
  }
  tensors_ = std::move(renamed);
}

void WeightLoader::skip_prefix(const std::string& prefix) {
  for (const auto& [name, location] : tensors_) {
    if (name.compare(0, prefix.size(), prefix) == 0) skip(name);
  }
}

void WeightLoader::skip_all_but(const std::string& prefix) {
  for (const auto& [name, location] : tensors_) {
    if (name.compare(0, prefix.size(), prefix) != 0) skip(name);
  }
}

std::string WeightLoader::location(const std::string& name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? model_dir_ : it->second.file->path();
}

at::Tensor WeightLoader::read(const std::string& name, const std::vector<int64_t>& shape) {
  // A consumer without a quantized kernel gets the float weights the checkpoint stands for.
  if (std::optional<QuantizedMatrix> quantized = read_quantized(name, shape)) return dequantize(*quantized);
  auto it = tensors_.find(name);
  if (it == tensors_.end()) fail(ErrorCode::InvalidFormat, "{}: required tensor '{}' is missing", model_dir_, name);
  const Location& loc = it->second;
  const StTensorInfo& info = *loc.info;
  if (info.shape != shape) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}' has shape [{}] but the config implies [{}]", loc.file->path(),
         info.name, fmt::join(info.shape, ", "), fmt::join(shape, ", "));
  }
  if (!is_float(info.dtype)) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}' has dtype {}, expected a floating-point type", loc.file->path(),
         info.name, st_dtype_name(info.dtype));
  }
  at::Tensor tensor = read_tensor(*loc.file, info);
  use(name);
  return tensor;
}

void WeightLoader::skip(const std::string& name) { use(name); }

void WeightLoader::set_progress(std::function<void(int64_t, int64_t)> progress) {
  progress_ = std::move(progress);
  total_bytes_ = 0;
  for (const auto& [name, loc] : tensors_) total_bytes_ += static_cast<int64_t>(loc.info->end - loc.info->begin);
}

void WeightLoader::use(const std::string& name) {
  if (!used_.insert(name).second) return;
  const auto it = tensors_.find(name);
  if (it != tensors_.end()) used_bytes_ += static_cast<int64_t>(it->second.info->end - it->second.info->begin);
  if (progress_) progress_(used_bytes_, total_bytes_);
}

void WeightLoader::finish() const {
  std::vector<std::string> unused;
  for (const auto& [name, loc] : tensors_) {
    if (used_.count(name) == 0) unused.push_back(loc.info->name);
  }
  if (!unused.empty()) {
    const size_t shown = std::min<size_t>(unused.size(), 5);
    fail(ErrorCode::InvalidFormat, "{}: {} unexpected tensor(s) the model does not use: {}{}", model_dir_,
         unused.size(), fmt::join(unused.begin(), unused.begin() + shown, ", "), unused.size() > shown ? ", ..." : "");
  }
}

}  // namespace izwi
