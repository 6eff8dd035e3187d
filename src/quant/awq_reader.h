#pragma once
// AWQ int4 linear layers in AutoAWQ's GEMM layout (WQLinear_GEMM; vLLM's awq loader reads the same):
//   qweight int32 [in, out / 8]       8 output columns per word, interleaved: column 8k + c at
//                                     bits [4 s, 4 s + 4) with s = {0, 4, 1, 5, 2, 6, 3, 7}[c]
//                                     (the pack order [0, 2, 4, 6, 1, 3, 5, 7] inverted)
//   qzeros  int32 [groups, out / 8]   the same interleaving
//   scales  float [groups, out]
// w[o, i] = scales[g, o] * (q[i, o] - zero[g, o]) with g = i / group_size.

#include "quant/checkpoint_tensors.h"
#include "quant/quantization_config.h"
#include "quant/quantized_matrix.h"

namespace izwi {

struct AwqTensors {
  StoredTensor qweight, qzeros, scales;
};

/// The layer as an Int4 QuantizedMatrix; InvalidFormat naming the tensor for every inconsistency.
QuantizedMatrix read_awq(const QuantLayer& layer, const AwqTensors& t, const QuantizationConfig& config);

}  // namespace izwi
