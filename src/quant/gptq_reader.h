#pragma once
// GPTQ int4 linear layers as AutoGPTQ / GPTQModel pack them (vLLM's gptq loader reads the same):
//   qweight int32 [in / 8, out]   8 input rows per word, row 8k + j at bits [4j, 4j + 4)
//   qzeros  int32 [groups, out / 8]  8 output columns per word, the same nibble order
//   scales  float [groups, out]
//   g_idx   int32 [in]            input row -> group; with act-order (desc_act) a permutation
// w[o, i] = scales[g, o] * (q[i, o] - zero[g, o]) with g = g_idx[i]; in the v1 format
// (checkpoint_format gptq) the stored zero is the zero point minus one.

#include "quant/checkpoint_tensors.h"
#include "quant/quantization_config.h"
#include "quant/quantized_matrix.h"

namespace izwi {

struct GptqTensors {
  StoredTensor qweight, qzeros, scales, g_idx;
};

/// The layer as a QuantizedMatrix (Int4; columns in g_idx's group order, column_order set when
/// that is not the identity). InvalidFormat naming the tensor for every inconsistency.
QuantizedMatrix read_gptq(const QuantLayer& layer, const GptqTensors& t, const QuantizationConfig& config);

}  // namespace izwi
