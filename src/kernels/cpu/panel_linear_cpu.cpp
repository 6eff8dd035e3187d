#include "kernels/cpu/panel_linear_cpu.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/op_profile.h"
#include "kernels/cpu/bf16.h"

namespace izwi {

namespace {

// Tokens per thread below which splitting the tokens is not worth a thread's own pass over the
// weights.
constexpr int64_t kMinTokensPerBlock = 64;
// Input floats below which arranging them for the kernels stays on one thread (a fork costs a few
// microseconds; copying 64K floats about as much).
constexpr int64_t kMinArrangedPerThread = int64_t{64} << 10;

// Where a panel of one weight format keeps W[row][k] (kernels/cpu/panel_kernels.h).
struct PanelLayout {
  int64_t rows;    ///< rows per panel
  int64_t group;   ///< columns kept together per row
  bool row_pairs;  ///< rows i and i + rows / 2 side by side

  int64_t padded_in(int64_t in) const { return (in + group - 1) / group * group; }
  /// Offset of the panel's row i, column k.
  int64_t offset(int64_t i, int64_t k) const {
    const int64_t slot = row_pairs ? 2 * (i % (rows / 2)) + i / (rows / 2) : i * group;
    return (k / group) * rows * group + slot + k % group;
  }
};

PanelLayout layout_of(WeightFormat format, const PanelKernels& kernels) {
  const bool bf16 = format == WeightFormat::BF16;
  return {kernels.panel_rows, bf16 ? kernels.bf16_group : 1, bf16 && kernels.bf16_row_pairs};
}

template <typename Bits>
void pack_typed(const Bits* weight, int64_t out, int64_t in, Bits* packed, const PanelLayout& layout) {
  const int64_t rows = layout.rows, panels = (out + rows - 1) / rows, padded_in = layout.padded_in(in);
  at::parallel_for(0, panels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t panel = begin; panel < end; ++panel) {
      Bits* dst = packed + panel * rows * padded_in;
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t row = panel * rows + i;
        const Bits* src = weight + row * in;
        for (int64_t k = 0; k < padded_in; ++k) dst[layout.offset(i, k)] = row < out && k < in ? src[k] : Bits{0};
      }
    }
  });
}

inline float bits_to_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}
inline float bits_to_float(uint16_t bits) { return bf16_to_float(bits); }

template <typename Bits>
void gather_typed(const Bits* packed, int64_t in, const int64_t* ids, int64_t n, float* dst,
                  const PanelLayout& layout) {
  const int64_t rows = layout.rows, padded_in = layout.padded_in(in);
  for (int64_t j = 0; j < n; ++j) {
    const Bits* panel = packed + (ids[j] / rows) * rows * padded_in;
    const int64_t i = ids[j] % rows;
    for (int64_t k = 0; k < in; ++k) dst[j * in + k] = bits_to_float(panel[layout.offset(i, k)]);
  }
}

}  // namespace

int64_t packed_elements(int64_t out, int64_t in, WeightFormat format, const PanelKernels& kernels) {
  const PanelLayout layout = layout_of(format, kernels);
  return (out + layout.rows - 1) / layout.rows * layout.rows * layout.padded_in(in);
}

void pack_panels(const void* weight, WeightFormat format, int64_t out, int64_t in, void* packed,
                 const PanelKernels& kernels) {
  const PanelLayout layout = layout_of(format, kernels);
  if (format == WeightFormat::F32) {
    pack_typed(static_cast<const uint32_t*>(weight), out, in, static_cast<uint32_t*>(packed), layout);
  } else {
    pack_typed(static_cast<const uint16_t*>(weight), out, in, static_cast<uint16_t*>(packed), layout);
  }
}

void linear_packed_cpu(const PanelInputs& x, int64_t tokens, int64_t in, const void* packed, WeightFormat format,
                       int64_t out, const float* bias, const PanelOutputs& y, const PanelKernels& kernels) {
  const OpTimer timer = linear_call_timer(tokens, in, out);
  const int64_t panels = (out + kernels.panel_rows - 1) / kernels.panel_rows;
  const int64_t threads = std::max(1, at::get_num_threads());
  // A channels-first signal's columns (token stride 1) hold each column's tokens consecutively, as
  // the arrangement would: the float32 kernels read them in place.
  const bool in_place = format == WeightFormat::F32 && x.token_stride == 1 && x.column_offsets != nullptr;
  thread_local std::vector<float> packed_inputs;
  // Grown, never shrunk: a resize up again would zero the new part on every call.
  if (!in_place && packed_inputs.size() < static_cast<size_t>(tokens * in)) {
    packed_inputs.resize(static_cast<size_t>(tokens * in));
  }
  float* arranged = packed_inputs.data();
  // Few panels (a narrow output, as in the codec's convolutions) over many tokens: whole panels
  // per thread would leave cores idle, so each thread takes a block of tokens and every panel,
  // and arranges its own block's inputs.
  if (panels < 4 * threads && tokens >= kMinTokensPerBlock * threads) {
    at::parallel_for(0, threads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t block = begin; block < end; ++block) {
        const int64_t t0 = tokens * block / threads, n = tokens * (block + 1) / threads - t0;
        const PanelOutputs own_y{y.data + t0 * y.token_stride, y.token_stride, y.out_stride};
        if (in_place) {
          kernels.run(PanelProduct{x.data + t0, n, in, packed, format, out, bias, own_y, x.column_offsets}, 0, panels);
          continue;
        }
        const PanelInputs own{x.data + t0 * x.token_stride, x.token_stride, x.column_offsets};
        kernels.pack_inputs(own, n, in, format, arranged + t0 * in, 0, tile_count(n, kernels.max_tile_tokens));
        kernels.run(PanelProduct{arranged + t0 * in, n, in, packed, format, out, bias, own_y}, 0, panels);
      }
    });
    return;
  }
  PanelProduct product{x.data, tokens, in, packed, format, out, bias, y};
  if (in_place) {
    product.column_offsets = x.column_offsets;
  } else if (tokens > 1 || layout_of(format, kernels).group > 1 || x.token_stride != in ||
             x.column_offsets != nullptr) {
    const int64_t tiles = tile_count(tokens, kernels.max_tile_tokens);
    // A tile's arrangement is a copy of tokens x in floats: split among the threads when there is
    // enough of it to pay for a fork.
    at::parallel_for(
        0, tiles, std::max<int64_t>(1, kMinArrangedPerThread / std::max<int64_t>(1, in * kernels.max_tile_tokens)),
        [&](int64_t begin, int64_t end) { kernels.pack_inputs(x, tokens, in, format, arranged, begin, end); });
    product.x = arranged;
  }
  // Each thread takes contiguous panels: one sequential stream through its share of the weights.
  at::parallel_for(0, panels, (panels + threads - 1) / threads,
                   [&](int64_t begin, int64_t end) { kernels.run(product, begin, end); });
}

void linear_packed_cpu(const float* x, int64_t tokens, int64_t in, const void* packed, WeightFormat format, int64_t out,
                       const float* bias, float* y, const PanelKernels& kernels) {
  linear_packed_cpu(PanelInputs{x, in, nullptr}, tokens, in, packed, format, out, bias, PanelOutputs{y, out, 1},
                    kernels);
}

void gather_packed_rows(const void* packed, WeightFormat format, int64_t in, const int64_t* ids, int64_t n, float* dst,
                        const PanelKernels& kernels) {
  const PanelLayout layout = layout_of(format, kernels);
  if (format == WeightFormat::F32) {
    gather_typed(static_cast<const uint32_t*>(packed), in, ids, n, dst, layout);
  } else {
    gather_typed(static_cast<const uint16_t*>(packed), in, ids, n, dst, layout);
  }
}

}  // namespace izwi
