// Fuzz target: any model.safetensors.index.json in a folder with two small valid shards
// (model-00001-of-00002.safetensors: a, b; model-00002-of-00002.safetensors: c) either gives a
// WeightLoader in which every tensor of the shards it names is known and readable (and
// finish() then finds nothing left), or raises
// izwi::Error. Nothing else may happen (no path escapes the folder: a name with '/' is refused).

#include <ATen/ATen.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "bench_support/safetensors_writer.h"
#include "fuzz_support.h"
#include "io/weight_loader.h"
#include "izwi/errors.h"

namespace {

std::string make_folder() {
  const std::string dir = izwi::fuzz::scratch_dir("sharded_index");
  izwi::write_safetensors(dir + "/model-00001-of-00002.safetensors",
                          {{"a", at::arange(4, at::kFloat)}, {"b", at::ones({2, 3}, at::kFloat)}}, at::kFloat);
  izwi::write_safetensors(dir + "/model-00002-of-00002.safetensors", {{"c", at::zeros({5}, at::kFloat)}}, at::kFloat);
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = make_folder();
  izwi::fuzz::write_file(dir + "/model.safetensors.index.json", data, size);
  try {
    izwi::WeightLoader loader(dir, at::kFloat, at::kFloat, at::kCPU);
    // Accepted: a shard's tensors are all listed, so whichever of a, b, c are known must read
    // back with their stored shape and values.
    if (loader.contains("a") && loader.take("a", {4}).sum().item<float>() != 6.0f) std::abort();
    if (loader.contains("b") && loader.take("b", {2, 3}).sum().item<float>() != 6.0f) std::abort();
    if (loader.contains("c") && loader.take("c", {5}).sum().item<float>() != 0.0f) std::abort();
    if (loader.contains("a") != loader.contains("b")) std::abort();  // one shard, listed in part
    try {
      loader.finish();  // every tensor of the opened shards was listed, and taken above
    } catch (const izwi::Error&) {
      std::abort();
    }
  } catch (const izwi::Error&) {
  }
  return 0;
}
