#include <algorithm>

#include "kernels/cuda/attention_inputs_cuda.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/elements.cuh"
#include "kernels/cuda/online_softmax.cuh"
#include "kernels/cuda/rope_angles.cuh"

namespace izwi {

namespace {

constexpr int kWarpsPerBlock = 8;

// What one launch reads besides the heads: the norms and angles, whose dtypes are run-time flags.
struct HeadTransform {
  FloatOrBf16 q_norm, k_norm;  // data null: no norm
  float eps;
  FloatOrBf16 cos, sin;
  const float* inv_freq;
  bool bf16_angles;
  const int64_t* positions;
};

// One warp normalises (when `norm` is set) and rotates one head of D elements into `out`: the sum
// of squares as a warp reduction, then each lane rotates pairs (i, half + i), i = lane, lane + 32...
// The same float operations as rms_norm_row then rope_row.
template <typename A, typename Out>
__device__ void norm_and_rotate(const A* head, FloatOrBf16 norm, const HeadTransform& p, int64_t token, int64_t D,
                                int lane, Out* out) {
  float scale = 1.0f;
  if (norm.data != nullptr) {
    float sum = 0.0f;
    for (int64_t i = lane; i < D; i += 32) {
      const float v = to_float(head[i]);
      sum += v * v;
    }
    scale = 1.0f / sqrtf(warp_sum(sum) / static_cast<float>(D) + p.eps);
  }
  const int64_t half = D / 2, position = p.positions[token];
  for (int64_t i = lane; i < half; i += 32) {
    float a = to_float(head[i]), b = to_float(head[half + i]);
    if (norm.data != nullptr) {
      a = norm[i] * (a * scale);
      b = norm[half + i] * (b * scale);
    }
    float c, s;
    rope_cos_sin(p.cos, p.sin, p.inv_freq, p.bf16_angles, position, half, i, c, s);
    out[i] = from_float<Out>(a * c - b * s);
    out[half + i] = from_float<Out>(b * c + a * s);
  }
}

// One warp per head row (token t, head j of the heads + 2 kv_heads of the projection): a q head goes
// to q_out, a k head to key_pool[slots[t]], both normed and rotated; a v head is copied to
// value_pool[slots[t]]. A is the activations' storage, KV the pools'.
template <typename A, typename KV>
__global__ void attention_inputs_kernel(AttentionInputsCudaArgs a, HeadTransform p) {
  const int64_t H = a.shape.heads, KVH = a.shape.kv_heads, D = a.shape.head_dim;
  const int64_t per_token = H + 2 * KVH, rows = a.shape.tokens * per_token;
  const int lane = threadIdx.x % 32;
  const A* qkv = static_cast<const A*>(a.qkv);
  for (int64_t row = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32; row < rows;
       row += static_cast<int64_t>(gridDim.x) * blockDim.x / 32) {
    const int64_t t = row / per_token, j = row % per_token;
    const A* head = qkv + t * a.shape.qkv_stride + j * D;
    if (j < H) {
      norm_and_rotate(head, p.q_norm, p, t, D, lane, static_cast<A*>(a.q_out) + (t * H + j) * D);
      continue;
    }
    const bool is_key = j < H + KVH;
    const int64_t kv_head = is_key ? j - H : j - H - KVH;
    KV* dst = static_cast<KV*>(is_key ? a.key_pool : a.value_pool) + (a.slots[t] * KVH + kv_head) * D;
    if (is_key) {
      norm_and_rotate(head, p.k_norm, p, t, D, lane, dst);
    } else {
      for (int64_t i = lane; i < D; i += 32) dst[i] = from_float<KV>(to_float(head[i]));
    }
  }
}

template <typename A, typename KV>
void launch(const AttentionInputsCudaArgs& a, const HeadTransform& p, int64_t rows, cudaStream_t stream) {
  constexpr int kThreads = kWarpsPerBlock * 32;
  const int64_t blocks = std::min<int64_t>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock, 65535);
  attention_inputs_kernel<A, KV><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a, p);
}

template <typename A>
void launch_for_pools(const AttentionInputsCudaArgs& a, const HeadTransform& p, int64_t rows, cudaStream_t stream) {
  switch (a.pools) {
    case ElementDtype::Float32:
      return launch<A, float>(a, p, rows, stream);
    case ElementDtype::BFloat16:
      return launch<A, __nv_bfloat16>(a, p, rows, stream);
    case ElementDtype::Float16:
      return launch<A, __half>(a, p, rows, stream);
  }
}

bool float_or_bf16(ElementDtype d) { return d == ElementDtype::Float32 || d == ElementDtype::BFloat16; }

}  // namespace

void attention_inputs_cuda(const AttentionInputsCudaArgs& a, cudaStream_t stream) {
  constexpr const char* kName = "attention_inputs_kernel";
  const AttentionInputsShape& s = a.shape;
  require(s.head_dim % 2 == 0, kName, "head_dim must be even");
  require(s.qkv_stride >= (s.heads + 2 * s.kv_heads) * s.head_dim, kName, "qkv_stride shorter than the heads");
  require(float_or_bf16(a.activations), kName, "activations must be float32 or bf16");
  require(float_or_bf16(a.norms), kName, "norm weights must be float32 or bf16");
  require(float_or_bf16(a.angles), kName, "rotary tables must be float32 or bf16");
  require((a.cos != nullptr && a.sin != nullptr) || a.inv_freq != nullptr, kName, "neither rotary tables nor inv_freq");
  const int64_t rows = s.tokens * (s.heads + 2 * s.kv_heads);
  if (rows == 0) return;
  const bool bf16_norms = a.norms == ElementDtype::BFloat16, bf16_angles = a.angles == ElementDtype::BFloat16;
  // With tables the angles are read as they are; without, inv_freq's are rounded to `angles`.
  const HeadTransform p{{a.q_norm, bf16_norms},
                        {a.k_norm, bf16_norms},
                        a.eps,
                        {a.cos, bf16_angles},
                        {a.sin, bf16_angles},
                        a.cos != nullptr ? nullptr : a.inv_freq,
                        bf16_angles,
                        a.positions};
  if (a.activations == ElementDtype::BFloat16) {
    launch_for_pools<__nv_bfloat16>(a, p, rows, stream);
  } else {
    launch_for_pools<float>(a, p, rows, stream);
  }
  check_launch(kName);
}

}  // namespace izwi
