// izwi-make-checkpoint: writes a random-weight checkpoint of a real model shape, so benchmarks
// run without downloading weights (a qwen3_tts folder also gets speech_tokenizer/, its codec).
//
//   izwi-make-checkpoint --arch ARCH --preset NAME --dtype f32|bf16|fp8 --out DIR [--seed S]
//
// fp8: the linear layers' weights in FP8 (e4m3, a scale per output channel) as compressed-tensors
// releases them, the rest in bf16 (text models).
//   izwi-make-checkpoint --list

#include <CLI/CLI.hpp>

#include <iostream>

#include "bench_support/checkpoint_presets.h"
#include "bench_support/random_checkpoint.h"
#include "common/cli_main.h"
#include "io/weight_loader.h"
#include "izwi/errors.h"
#include "kernels/backend.h"

int main(int argc, char** argv) {
  CLI::App app{"Write a random-weight checkpoint of a real model shape"};
  std::string arch, preset, dtype = "f32", out;
  uint64_t seed = 0;
  bool list = false;
  app.add_option("--arch", arch, "llama, qwen3, lfm2, voxtral_realtime or qwen3_tts");
  app.add_option("--preset", preset, "Shape preset (see --list)");
  app.add_option("--dtype", dtype, "f32, bf16, or fp8 (linear layers in FP8, the rest bf16)")->capture_default_str();
  app.add_option("--out", out, "Output folder");
  app.add_option("--seed", seed, "Random seed")->capture_default_str();
  app.add_flag("--list", list, "List the presets");
  CLI11_PARSE(app, argc, argv);
  return izwi::cli::run_main("izwi-make-checkpoint", [&] {
    if (list) {
      for (const auto& [a, p] : izwi::checkpoint_presets()) std::cout << a << " " << p << "\n";
      return 0;
    }
    if (arch.empty() || preset.empty() || out.empty()) {
      throw izwi::Error(izwi::ErrorCode::InvalidArgument, "--arch, --preset and --out are required");
    }
    const nlohmann::json config = izwi::checkpoint_preset(arch, preset);
    izwi::RandomCheckpointInfo info;
    if (dtype == "fp8") {
      info = izwi::write_random_fp8_checkpoint(config, out, seed);
    } else {
      const at::ScalarType scalar = izwi::parse_dtype(dtype, "--dtype");
      if (scalar == at::kHalf) throw izwi::Error(izwi::ErrorCode::InvalidArgument, "--dtype must be f32, bf16 or fp8");
      info = izwi::write_random_checkpoint(config, out, scalar, seed);
    }
    std::cout << "wrote " << out << ": " << info.parameters << " parameters, " << info.file_bytes << " bytes\n";
    return 0;
  });
}
