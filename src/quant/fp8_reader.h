#pragma once
// FP8 linear layers (quant_method fp8 without weight_block_size, and compressed-tensors
// float-quantized, as vLLM's fp8 and compressed-tensors loaders read them):
//   weight        float8_e4m3fn [out, in] (read as its bytes)
//   weight_scale  float, one value ([] or [1]: per tensor) or [out, 1] / [out] (per channel)
// w[o, i] = e4m3(weight[o, i]) * scale[o]. input_scale (static activation scales) is not read: the
// CPU quantizes no activations to FP8.

#include "quant/checkpoint_tensors.h"
#include "quant/quantized_matrix.h"

namespace izwi {

struct Fp8Tensors {
  StoredTensor weight;  ///< uint8, the e4m3 bits
  StoredTensor weight_scale;
};

/// The layer as an Fp8E4M3 QuantizedMatrix with one scale per row; InvalidFormat naming the tensor
/// for a mis-shaped or non-finite scale and for NaN weights (0x7f, 0xff).
QuantizedMatrix read_fp8(const QuantLayer& layer, const Fp8Tensors& t);

}  // namespace izwi
