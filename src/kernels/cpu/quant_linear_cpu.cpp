#include "kernels/cpu/quant_linear_cpu.h"

#include <ATen/Parallel.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/op_profile.h"
#include "kernels/cpu/panel_kernels.h"

namespace izwi {

namespace {

// Tokens whose inputs one thread quantizes before a fork pays (a row is a few microseconds).
constexpr int64_t kTokensPerQuantizeTask = 16;

// The unsigned weight u of row `row`, column `col` of m (kernel form: u = q + 128 for int8).
struct Unsigned {
  const QuantizedMatrix& m;
  const int8_t* int8 = nullptr;
  const uint8_t* int4 = nullptr;
  int64_t int4_stride = 0;

  explicit Unsigned(const QuantizedMatrix& matrix) : m(matrix) {
    if (m.kind == QuantKind::Int8) {
      int8 = m.values.data_ptr<int8_t>();
    } else {
      int4 = m.values.data_ptr<uint8_t>();
      int4_stride = m.values.size(1);
    }
  }
  // Padding (rows past out, columns past in) is q = 0 for int8 and 0 for int4: either meets zero
  // inputs or a zero scale.
  uint8_t operator()(int64_t row, int64_t col) const {
    if (int8 != nullptr) return row < m.out && col < m.in ? static_cast<uint8_t>(int8[row * m.in + col] + 128) : 128;
    if (row >= m.out || col >= m.in) return 0;
    const uint8_t byte = int4[row * int4_stride + col / 2];
    return col % 2 == 0 ? byte & 0x0F : byte >> 4;
  }
};

void check_tensor(bool ok, const std::string& name, const char* part, const std::string& expected) {
  if (!ok) fail(ErrorCode::InvalidFormat, "quantized weight '{}': {} must be {}", name, part, expected);
}

}  // namespace

QuantLayout quant_layout(const QuantizedMatrix& m, const std::string& name) {
  if (m.kind != QuantKind::Int8 && m.kind != QuantKind::Int4) {
    fail(ErrorCode::Unsupported, "quantized weight '{}': the CPU kernels take int8 and int4 weights, not fp8", name);
  }
  const bool int8 = m.kind == QuantKind::Int8;
  QuantLayout layout{int8 ? WeightFormat::I8 : WeightFormat::I4, m.in, m.group_size, false};
  check_tensor(m.out > 0 && m.in > 0, name, "its shape", "positive");
  check_tensor(m.group_size > 0 && (m.group_size >= m.in || m.group_size % layout.block_columns() == 0), name,
               "group_size", fmt::format("the row length {} or a multiple of {}", m.in, layout.block_columns()));
  // vpdpbusd sums u * xq in int32: at most 255 * 127 per column.
  check_tensor(std::min(m.group_size, m.in) <= 66000, name, "group_size", "at most 66000 columns (int32 sums)");
  const int64_t groups = layout.groups();
  if (int8) {
    check_tensor(m.values.defined() && m.values.scalar_type() == at::kChar && m.values.dim() == 2 &&
                     m.values.size(0) == m.out && m.values.size(1) == m.in,
                 name, "values", fmt::format("int8 [{}, {}]", m.out, m.in));
  } else {
    check_tensor(m.values.defined() && m.values.scalar_type() == at::kByte && m.values.dim() == 2 &&
                     m.values.size(0) == m.out && m.values.size(1) == (m.in + 1) / 2,
                 name, "values", fmt::format("uint8 [{}, {}]", m.out, (m.in + 1) / 2));
  }
  check_tensor(m.values.is_cpu() && m.values.is_contiguous(), name, "values", "a contiguous CPU tensor");
  check_tensor(m.scales.defined() && m.scales.scalar_type() == at::kFloat && m.scales.dim() == 2 &&
                   m.scales.size(0) == m.out && m.scales.size(1) == groups && m.scales.is_cpu(),
               name, "scales", fmt::format("float32 [{}, {}] on the CPU", m.out, groups));
  check_tensor(at::isfinite(m.scales).all().item<bool>(), name, "scales", "finite");
  if (int8) {
    check_tensor(!m.zeros.defined(), name, "zeros", "absent for int8 (symmetric)");
    check_tensor(m.values.min().item<int8_t>() >= -127, name, "values", "in [-127, 127]");
  } else if (m.zeros.defined()) {
    check_tensor(m.zeros.scalar_type() == at::kByte && m.zeros.dim() == 2 && m.zeros.size(0) == m.out &&
                     m.zeros.size(1) == groups && m.zeros.is_cpu(),
                 name, "zeros", fmt::format("uint8 [{}, {}] on the CPU", m.out, groups));
    check_tensor(m.zeros.max().item<uint8_t>() <= 15, name, "zeros", "in [0, 15]");
    layout.zeros = true;
  }
  if (m.column_order.defined()) {
    check_tensor(m.column_order.scalar_type() == at::kLong && m.column_order.dim() == 1 &&
                     m.column_order.size(0) == m.in && m.column_order.is_cpu(),
                 name, "column_order", fmt::format("int64 [{}] on the CPU", m.in));
    const at::Tensor sorted = std::get<0>(m.column_order.sort());
    check_tensor(sorted.equal(at::arange(m.in, sorted.options())), name, "column_order",
                 "a permutation of the columns");
  }
  return layout;
}

at::Tensor pack_quantized(const QuantizedMatrix& m, const QuantLayout& layout) {
  const int64_t panels = (m.out + kQuantPanelRows - 1) / kQuantPanelRows, panel_bytes = layout.panel_bytes();
  at::Tensor packed = at::empty({panels * panel_bytes}, at::TensorOptions().dtype(at::kByte));
  const at::Tensor scales = m.scales.contiguous();
  const at::Tensor zeros = layout.zeros ? m.zeros.contiguous() : at::Tensor();
  const Unsigned u(m);
  const int64_t groups = layout.groups(), block = layout.block_columns();
  at::parallel_for(0, panels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t panel = begin; panel < end; ++panel) {
      uint8_t* at = packed.data_ptr<uint8_t>() + panel * panel_bytes;
      const int64_t row0 = panel * kQuantPanelRows;
      for (int64_t g = 0; g < groups; ++g) {
        for (int64_t i = 0; i < kQuantPanelRows; ++i) {
          const int64_t row = row0 + i;
          const float scale = row < m.out ? scales.data_ptr<float>()[row * groups + g] : 0.0f;
          if (layout.format == WeightFormat::I8) {
            std::memcpy(at + 4 * i, &scale, sizeof(scale));
          } else {
            const uint16_t bits = c10::Half(scale).x;
            std::memcpy(at + 2 * i, &bits, sizeof(bits));
            if (layout.zeros) at[32 + i] = row < m.out ? zeros.data_ptr<uint8_t>()[row * groups + g] : 8;
          }
        }
        at += layout.header_bytes();
        const int64_t start = g * layout.group_size, blocks = layout.group_columns(g) / block;
        for (int64_t b = 0; b < blocks; ++b) {
          for (int64_t i = 0; i < kQuantPanelRows; ++i) {
            for (int64_t j = 0; j < 4; ++j) {
              const int64_t col = start + b * block + j;
              at[4 * i + j] = layout.format == WeightFormat::I8
                                  ? u(row0 + i, col)
                                  : static_cast<uint8_t>(u(row0 + i, col) | u(row0 + i, col + 4) << 4);
            }
          }
          at += kQuantBlockBytes;
        }
      }
    }
  });
  return packed;
}

void linear_quantized_cpu(const float* x, int64_t tokens, const int64_t* column_order, const uint8_t* packed,
                          const QuantLayout& layout, int64_t out, const float* bias, float* y,
                          const QuantKernels& kernels) {
  const OpTimer timer = linear_call_timer(tokens, layout.in, out);
  const int64_t in = layout.in, stride = layout.padded_in(), groups = layout.groups();
  thread_local std::vector<int8_t> x_values;
  thread_local std::vector<int32_t> x_sums;
  thread_local std::vector<float> x_scales;
  // Grown, never shrunk: a resize up again would zero the new part on every call.
  if (x_values.size() < static_cast<size_t>(tokens * stride)) x_values.resize(static_cast<size_t>(tokens * stride));
  if (x_sums.size() < static_cast<size_t>(tokens * groups)) x_sums.resize(static_cast<size_t>(tokens * groups));
  if (x_scales.size() < static_cast<size_t>(tokens)) x_scales.resize(static_cast<size_t>(tokens));
  int8_t* xq = x_values.data();
  int32_t* sums = x_sums.data();
  float* scales = x_scales.data();
  // Each token row to int8 with its own scale (max |x| / 127), in the packed columns' order.
  at::parallel_for(0, tokens, kTokensPerQuantizeTask, [&](int64_t begin, int64_t end) {
    std::vector<float> gathered(column_order != nullptr ? static_cast<size_t>(in) : 0);
    for (int64_t t = begin; t < end; ++t) {
      const float* row = x + t * in;
      if (column_order != nullptr) {
        for (int64_t k = 0; k < in; ++k) gathered[k] = row[column_order[k]];
        row = gathered.data();
      }
      float max_abs = 0.0f;
      for (int64_t k = 0; k < in; ++k) max_abs = std::max(max_abs, std::fabs(row[k]));
      const float inverse = max_abs > 0.0f ? 127.0f / max_abs : 0.0f;
      scales[t] = max_abs / 127.0f;
      int8_t* dst = xq + t * stride;
      for (int64_t k = 0; k < in; ++k) dst[k] = static_cast<int8_t>(std::nearbyint(row[k] * inverse));
      std::fill(dst + in, dst + stride, int8_t{0});
      for (int64_t g = 0; g < groups; ++g) {
        const int64_t start = g * layout.group_size, stop = groups == 1 ? in : std::min(in, start + layout.group_size);
        int32_t sum = 0;
        for (int64_t k = start; k < stop; ++k) sum += dst[k];
        sums[t * groups + g] = sum;
      }
    }
  });
  const QuantProduct product{xq, sums, scales, tokens, packed, layout, out, bias, y, out};
  const int64_t panels = (out + kQuantPanelRows - 1) / kQuantPanelRows;
  const int64_t threads = std::max(1, at::get_num_threads());
  // Each thread takes contiguous panels: one sequential stream through its share of the weights.
  at::parallel_for(0, panels, (panels + threads - 1) / threads,
                   [&](int64_t begin, int64_t end) { kernels.run(product, begin, end); });
}

void gather_quantized_rows(const uint8_t* packed, const QuantLayout& layout, const int64_t* column_order,
                           const int64_t* ids, int64_t n, float* dst) {
  const int64_t in = layout.in, groups = layout.groups(), block = layout.block_columns();
  for (int64_t j = 0; j < n; ++j) {
    const int64_t i = ids[j] % kQuantPanelRows;
    const uint8_t* at = packed + (ids[j] / kQuantPanelRows) * layout.panel_bytes();
    float* row = dst + j * in;
    for (int64_t g = 0; g < groups; ++g) {
      float scale;
      int zero = 128;
      if (layout.format == WeightFormat::I8) {
        std::memcpy(&scale, at + 4 * i, sizeof(scale));
      } else {
        uint16_t bits;
        std::memcpy(&bits, at + 2 * i, sizeof(bits));
        scale = static_cast<float>(c10::Half(bits, c10::Half::from_bits()));
        zero = layout.zeros ? at[32 + i] : 8;
      }
      at += layout.header_bytes();
      const int64_t start = g * layout.group_size, columns = layout.group_columns(g);
      for (int64_t c = 0; c < columns && start + c < in; ++c) {
        const uint8_t byte = at[(c / block) * kQuantBlockBytes + 4 * i + (c % block) % 4];
        const int value = layout.format == WeightFormat::I8 ? byte : (c % block) < 4 ? byte & 0x0F : byte >> 4;
        const int64_t k = start + c;
        row[column_order != nullptr ? column_order[k] : k] = scale * static_cast<float>(value - zero);
      }
      at += columns / block * kQuantBlockBytes;
    }
  }
}

const QuantKernels& quant_kernels_for(const PanelKernels& kernels) {
  const std::string name = kernels.name;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if ((name == "avx512_bf16" || name == "avx512") && __builtin_cpu_supports("avx512vnni")) {
    return quant_kernels_avx512_vnni();
  }
  // Every CPU with AVX-512 has AVX2 and F16C.
  if (name != "portable" && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c")) {
    return quant_kernels_avx2();
  }
#endif
  return quant_kernels_portable();
}

}  // namespace izwi
