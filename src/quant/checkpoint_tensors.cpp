#include "quant/checkpoint_tensors.h"

#include <ATen/Parallel.h>
#include <fmt/ranges.h>

#include <limits>

#include "common/check.h"

namespace izwi {

void require_present(const QuantLayer& layer, const StoredTensor& t) {
  if (!t.tensor.defined()) fail(ErrorCode::InvalidFormat, "{}: required tensor '{}' is missing", layer.origin, t.name);
}

void require_shape(const QuantLayer& layer, const StoredTensor& t, const std::vector<int64_t>& shape) {
  require_present(layer, t);
  if (t.tensor.sizes() != at::IntArrayRef(shape)) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}' has shape [{}] but a [{}, {}] layer needs [{}]", layer.origin,
         t.name, fmt::join(t.tensor.sizes(), ", "), layer.out, layer.in, fmt::join(shape, ", "));
  }
}

void require_dtype(const QuantLayer& layer, const StoredTensor& t, at::ScalarType dtype, const char* what) {
  require_present(layer, t);
  if (t.tensor.scalar_type() != dtype) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}' has dtype {}, expected {} ({})", layer.origin, t.name,
         at::toString(t.tensor.scalar_type()), at::toString(dtype), what);
  }
}

at::Tensor finite_scales(const QuantLayer& layer, const StoredTensor& t, float max_quantized) {
  require_present(layer, t);
  if (!at::isFloatingType(t.tensor.scalar_type())) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}' has dtype {}, expected floating-point scales", layer.origin, t.name,
         at::toString(t.tensor.scalar_type()));
  }
  at::Tensor scales = t.tensor.to(at::kFloat).contiguous();
  const int64_t bad = scales.numel() - at::isfinite(scales).sum().item<int64_t>();
  if (bad > 0) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}' holds {} non-finite scale(s) (NaN or Inf)", layer.origin, t.name,
         bad);
  }
  // A finite scale can still make a weight infinite: the dequantized layer would be.
  const float largest = scales.numel() == 0 ? 0.0f : scales.abs().max().item<float>();
  if (largest > std::numeric_limits<float>::max() / max_quantized) {
    fail(ErrorCode::InvalidFormat,
         "{}: tensor '{}' holds the scale {}, whose weights (up to {} times it) overflow float32", layer.origin, t.name,
         largest, max_quantized);
  }
  return scales;
}

int64_t int4_group_size(const QuantLayer& layer, const StoredTensor& qweight, int64_t config_group_size) {
  // Eight 4-bit values fill an int32 word, along the input (GPTQ) or the output (AWQ, qzeros).
  if (layer.in % 8 != 0 || layer.out % 8 != 0) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}' packs a [{}, {}] layer, whose sizes are not multiples of 8",
         layer.origin, qweight.name, layer.out, layer.in);
  }
  const int64_t group = config_group_size == -1 ? layer.in : config_group_size;
  if (group <= 0 || layer.in % group != 0) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}': group_size {} does not divide the layer's {} input columns",
         layer.origin, qweight.name, group, layer.in);
  }
  return group;
}

at::Tensor unpack_nibbles(const at::Tensor& packed, const NibbleOrder& order) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "byte b of a stored int32 word is its bits [8b, 8b + 8)");
  // Byte b of a word holds its nibbles 2b (low) and 2b + 1 (high): one uint8 pass, no int32 copies.
  const at::Tensor bytes = packed.contiguous().view(at::kByte);  // [..., 4 n]
  std::vector<int64_t> shape = packed.sizes().vec();
  shape.back() *= 8;
  std::vector<int64_t> words = packed.sizes().vec();
  words.push_back(8);
  const at::Tensor nibbles =
      at::stack({at::bitwise_and(bytes, 15), at::__rshift__(bytes, 4)}, -1).view(words);  // [..., n, 8]
  if (order == kSequentialNibbles) return nibbles.reshape(shape);
  return nibbles.index_select(-1, at::tensor(std::vector<int64_t>(order.begin(), order.end()), at::kLong))
      .reshape(shape);
}

// Large layers are unpacked row by row on libtorch's threads: element-wise at:: ops over int4
// nibbles cost a 7B model's load a minute; these loops read and write each byte once.
at::Tensor transpose_packed_words(const at::Tensor& packed, const NibbleOrder& order) {
  const at::Tensor by_word = packed.t().contiguous();  // int32 [out / 8, in]: word column k's rows in order
  const int64_t words = by_word.size(0), in = by_word.size(1);
  at::Tensor pairs = at::empty({words * 8, in / 2}, at::kByte);
  const uint32_t* src = reinterpret_cast<const uint32_t*>(by_word.data_ptr<int32_t>());
  uint8_t* dst = pairs.data_ptr<uint8_t>();
  at::parallel_for(0, words, 1, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const uint32_t* row = src + k * in;
      for (int64_t c = 0; c < 8; ++c) {
        const uint32_t shift = static_cast<uint32_t>(4 * order[c]);
        uint8_t* out = dst + (8 * k + c) * (in / 2);
        for (int64_t i = 0; i < in / 2; ++i) {
          out[i] = static_cast<uint8_t>(((row[2 * i] >> shift) & 15u) | ((row[2 * i + 1] >> shift) & 15u) << 4);
        }
      }
    }
  });
  return pairs;
}

at::Tensor gather_pair_columns(const at::Tensor& pairs, const at::Tensor& column_order) {
  const at::Tensor src_pairs = pairs.contiguous();
  const int64_t out = src_pairs.size(0), half = src_pairs.size(1);
  at::Tensor gathered = at::empty_like(src_pairs);
  const int64_t* order = column_order.data_ptr<int64_t>();
  const uint8_t* src = src_pairs.data_ptr<uint8_t>();
  uint8_t* dst = gathered.data_ptr<uint8_t>();
  const auto nibble = [](const uint8_t* row, int64_t col) { return (row[col / 2] >> (4 * (col % 2))) & 15; };
  at::parallel_for(0, out, 1, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const uint8_t* row = src + o * half;
      uint8_t* to = dst + o * half;
      for (int64_t j = 0; j < half; ++j) {
        to[j] = static_cast<uint8_t>(nibble(row, order[2 * j]) | nibble(row, order[2 * j + 1]) << 4);
      }
    }
  });
  return gathered;
}

}  // namespace izwi
