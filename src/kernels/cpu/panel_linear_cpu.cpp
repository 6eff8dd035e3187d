#include "kernels/cpu/panel_linear_cpu.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/linear_profile.h"

namespace izwi {

namespace {

template <typename Bits>
void pack_typed(const Bits* weight, int64_t out, int64_t in, Bits* packed, int64_t panel_rows) {
  const int64_t panels = (out + panel_rows - 1) / panel_rows;
  at::parallel_for(0, panels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t panel = begin; panel < end; ++panel) {
      Bits* dst = packed + panel * panel_rows * in;
      for (int64_t i = 0; i < panel_rows; ++i) {
        const int64_t row = panel * panel_rows + i;
        const Bits* src = weight + row * in;
        for (int64_t k = 0; k < in; ++k) dst[k * panel_rows + i] = row < out ? src[k] : Bits{0};
      }
    }
  });
}

template <typename Bits>
float bits_to_float(Bits bits) {
  const uint32_t widened = sizeof(Bits) == sizeof(float) ? bits : static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &widened, sizeof(f));
  return f;
}

template <typename Bits>
void gather_typed(const Bits* packed, int64_t in, const int64_t* ids, int64_t n, float* dst, int64_t panel_rows) {
  for (int64_t j = 0; j < n; ++j) {
    const Bits* src = packed + (ids[j] / panel_rows) * panel_rows * in + ids[j] % panel_rows;
    for (int64_t k = 0; k < in; ++k) dst[j * in + k] = bits_to_float(src[k * panel_rows]);
  }
}

}  // namespace

int64_t packed_elements(int64_t out, int64_t in, const PanelKernels& kernels) {
  const int64_t rows = kernels.panel_rows;
  return (out + rows - 1) / rows * rows * in;
}

void pack_panels(const void* weight, WeightFormat format, int64_t out, int64_t in, void* packed,
                 const PanelKernels& kernels) {
  const int64_t rows = kernels.panel_rows;
  if (format == WeightFormat::F32) {
    pack_typed(static_cast<const uint32_t*>(weight), out, in, static_cast<uint32_t*>(packed), rows);
  } else {
    pack_typed(static_cast<const uint16_t*>(weight), out, in, static_cast<uint16_t*>(packed), rows);
  }
}

void linear_packed_cpu(const float* x, int64_t tokens, int64_t in, const void* packed, WeightFormat format, int64_t out,
                       const float* bias, float* y, const PanelKernels& kernels) {
  const LinearCallTimer timer(tokens, in, out);
  const float* inputs = x;
  thread_local std::vector<float> packed_inputs;
  if (tokens > 1) {
    packed_inputs.resize(static_cast<size_t>(tokens * in));
    kernels.pack_inputs(x, tokens, in, packed_inputs.data());
    inputs = packed_inputs.data();
  }
  const PanelProduct product{inputs, tokens, in, packed, format, out, bias, y};
  const int64_t panels = (out + kernels.panel_rows - 1) / kernels.panel_rows;
  // Each thread takes contiguous panels: one sequential stream through its share of the weights.
  const int64_t threads = std::max(1, at::get_num_threads());
  at::parallel_for(0, panels, (panels + threads - 1) / threads,
                   [&](int64_t begin, int64_t end) { kernels.run(product, begin, end); });
}

void gather_packed_rows(const void* packed, WeightFormat format, int64_t in, const int64_t* ids, int64_t n, float* dst,
                        const PanelKernels& kernels) {
  const int64_t rows = kernels.panel_rows;
  if (format == WeightFormat::F32) {
    gather_typed(static_cast<const uint32_t*>(packed), in, ids, n, dst, rows);
  } else {
    gather_typed(static_cast<const uint16_t*>(packed), in, ids, n, dst, rows);
  }
}

}  // namespace izwi
