#pragma once
// The device the model-running suites use: the IZWI_TEST_DEVICE environment variable ("cuda",
// "cuda:1", ...), or the CPU when it is unset. The text-model parity suite (ModelRunner) and the
// engine parity suite read it, so a GPU machine runs them unchanged (docs/gpu.md).

#include <ATen/ATen.h>

#include "izwi/config.h"
#include "kernels/backend.h"

namespace izwi::testing {

at::Device test_device();

/// The default EngineConfig on test_device().
EngineConfig test_engine_config();

/// izwi's kernels, float32, on test_device(): Backend::host() on the CPU. For the codecs and
/// encoders the suites build outside an engine.
const Backend& test_backend();

/// izwi's kernels in bf16 on test_device(), the dtype a GPU serves in: the suites' bf16 checks.
const Backend& test_bf16_backend();

}  // namespace izwi::testing
