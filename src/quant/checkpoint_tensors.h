#pragma once
// What the pre-quantized checkpoint readers (gptq_reader, awq_reader, fp8_reader) share: the
// stored tensors of one linear layer by name, the checks whose errors name a tensor, and the int4
// nibble unpacking and packing.

#include <ATen/ATen.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace izwi {

/// One stored tensor: its name for messages and its values in the stored dtype (undefined when the
/// checkpoint does not have it).
struct StoredTensor {
  std::string name;
  at::Tensor tensor;
};

/// Where the tensors come from, for messages (a file path), and the layer's expected [out, in].
struct QuantLayer {
  std::string origin;
  int64_t out = 0;
  int64_t in = 0;
};

/// InvalidFormat "<origin>: required tensor '<name>' is missing" when `t` is undefined.
void require_present(const QuantLayer& layer, const StoredTensor& t);
/// InvalidFormat naming the tensor, its shape and `shape` when they differ.
void require_shape(const QuantLayer& layer, const StoredTensor& t, const std::vector<int64_t>& shape);
/// InvalidFormat naming the tensor when its dtype is not `dtype` (`what` says what it holds).
void require_dtype(const QuantLayer& layer, const StoredTensor& t, at::ScalarType dtype, const char* what);
/// A floating-point tensor of scales as float32; InvalidFormat naming it when it is not floating
/// point, holds NaN or Inf, or holds a scale whose product with `max_quantized` (the largest
/// |quantized value|: 15 for int4, 448 for e4m3) overflows float32.
at::Tensor finite_scales(const QuantLayer& layer, const StoredTensor& t, float max_quantized);

/// The columns per group of an int4 layer (config.group_size, or `in` when -1); InvalidFormat naming
/// `qweight` when it does not divide the layer's rows or the packing's multiples of 8 do not hold.
int64_t int4_group_size(const QuantLayer& layer, const StoredTensor& qweight, int64_t config_group_size);

/// Bit positions of the 8 nibbles of an int32 word: nibble c of a word holds element
/// 8k + c of the unpacked row at bits [4 * shift[c], 4 * shift[c] + 4).
using NibbleOrder = std::array<int64_t, 8>;
constexpr NibbleOrder kSequentialNibbles = {0, 1, 2, 3, 4, 5, 6, 7};

/// int32 [..., n] -> uint8 [..., 8 n], each word's nibbles in `order`.
at::Tensor unpack_nibbles(const at::Tensor& packed, const NibbleOrder& order);
/// int32 [in, out / 8], output columns packed along a row in `order` (AWQ's qweight) -> uint8
/// [out, in / 2] in QuantizedMatrix's int4 pairs (`in` even).
at::Tensor transpose_packed_words(const at::Tensor& packed, const NibbleOrder& order);
/// uint8 [out, in / 2] int4 pairs -> the same with column k taken from column column_order[k]
/// (int64 [in]): GPTQ's act-order columns sorted into their groups.
at::Tensor gather_pair_columns(const at::Tensor& pairs, const at::Tensor& column_order);

}  // namespace izwi
