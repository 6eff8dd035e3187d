#include <curand_kernel.h>

#include <cfloat>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/sampler_cuda.h"

namespace izwi {

namespace {

constexpr int kThreads = 512;

struct ArgMax {
  float value;
  int32_t index;
};

// The first maximum wins, as the CPU argmax (and torch.argmax) does.
struct ArgMaxOp {
  __device__ ArgMax operator()(const ArgMax& a, const ArgMax& b) const {
    if (b.value > a.value || (b.value == a.value && b.index < a.index)) return b;
    return a;
  }
};

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// Float order as unsigned order, so thresholds can be searched bit by bit.
__device__ __forceinline__ uint32_t order_key(float v) {
  const uint32_t u = __float_as_uint(v);
  return (u & 0x80000000u) != 0 ? ~u : (u | 0x80000000u);
}

union Storage {
  cub::BlockReduce<double, kThreads>::TempStorage sum;
  cub::BlockReduce<float, kThreads>::TempStorage max;
  cub::BlockReduce<ArgMax, kThreads>::TempStorage argmax;
  cub::BlockScan<double, kThreads>::TempStorage scan;
};

// Block-wide results for every thread (cub leaves them in thread 0).
__device__ double block_sum(double v, Storage& storage, double& shared) {
  v = cub::BlockReduce<double, kThreads>(storage.sum).Sum(v);
  if (threadIdx.x == 0) shared = v;
  __syncthreads();
  const double result = shared;
  __syncthreads();
  return result;
}

__device__ float block_max(float v, Storage& storage, float& shared) {
  v = cub::BlockReduce<float, kThreads>(storage.max).Reduce(v, MaxOp());
  if (threadIdx.x == 0) shared = v;
  __syncthreads();
  const float result = shared;
  __syncthreads();
  return result;
}

__device__ int32_t block_argmax(const float* logits, int32_t vocab, Storage& storage, int32_t& shared) {
  ArgMax best{-FLT_MAX, vocab};
  for (int32_t i = threadIdx.x; i < vocab; i += kThreads) best = ArgMaxOp()(best, ArgMax{logits[i], i});
  best = cub::BlockReduce<ArgMax, kThreads>(storage.argmax).Reduce(best, ArgMaxOp());
  if (threadIdx.x == 0) shared = best.index < vocab ? best.index : 0;  // all -inf: id 0, as the CPU
  __syncthreads();
  return shared;
}

// The largest key K with weight(logits with key >= max(K, floor)) >= target, bit by bit from the
// top (the weight only falls as K grows). Sums in a fixed order, so the result is deterministic.
template <typename Weight>
__device__ uint32_t largest_key_reaching(const float* logits, int32_t vocab, uint32_t floor, double target,
                                         Weight weight, Storage& storage, double& shared) {
  uint32_t prefix = 0;
  for (int bit = 31; bit >= 0; --bit) {
    const uint32_t candidate = prefix | (1u << bit);
    double sum = 0.0;
    for (int32_t i = threadIdx.x; i < vocab; i += kThreads) {
      const uint32_t key = order_key(logits[i]);
      if (key >= candidate && key >= floor) sum += weight(logits[i]);
    }
    if (block_sum(sum, storage, shared) >= target) prefix = candidate;
  }
  return prefix;
}

__global__ void sample_kernel(SamplerCudaArgs a) {
  __shared__ Storage storage;
  __shared__ double shared_sum;
  __shared__ float shared_max;
  __shared__ int32_t shared_id;
  const int32_t row = blockIdx.x, vocab = a.vocab;
  const SamplingParamsCuda p = a.params[row];
  float* logits = a.logits + static_cast<int64_t>(row) * vocab;

  if (p.repetition_penalty != 1.0f && p.history_length > 0) {
    // Each distinct id is penalised once (as HF's gather/scatter): the thread that sets its bit.
    uint32_t* seen = a.workspace + static_cast<int64_t>(row) * ((vocab + 31) / 32);
    const int32_t* history = a.id_lists + p.history_offset;
    for (int64_t i = threadIdx.x; i < p.history_length; i += kThreads) {
      const int32_t id = history[i];
      if (id < 0 || id >= vocab) continue;
      const uint32_t bit = 1u << (id % 32);
      if ((atomicOr(&seen[id / 32], bit) & bit) != 0) continue;
      const float l = logits[id];
      logits[id] = l < 0 ? l * p.repetition_penalty : l / p.repetition_penalty;
    }
    __syncthreads();
    for (int64_t i = threadIdx.x; i < p.history_length; i += kThreads) {
      const int32_t id = history[i];
      if (id >= 0 && id < vocab) seen[id / 32] = 0;
    }
  }
  for (int64_t i = threadIdx.x; i < p.suppressed_length; i += kThreads) {
    const int32_t id = a.id_lists[p.suppressed_offset + i];
    if (id >= 0 && id < vocab) logits[id] = -INFINITY;
  }
  if (p.num_generated < p.min_tokens) {
    for (int64_t i = threadIdx.x; i < p.below_min_length; i += kThreads) {
      const int32_t id = a.id_lists[p.below_min_offset + i];
      if (id >= 0 && id < vocab) logits[id] = -INFINITY;
    }
  }
  __syncthreads();

  // Greedy, and temperatures so small that logit / temperature overflows (the limit is the argmax).
  bool greedy = !(p.temperature > 0.0f);
  if (!greedy) {
    float max_abs = 0.0f;
    for (int32_t i = threadIdx.x; i < vocab; i += kThreads) {
      if (isfinite(logits[i])) max_abs = fmaxf(max_abs, fabsf(logits[i]));
    }
    max_abs = block_max(max_abs, storage, shared_max);
    greedy = static_cast<double>(max_abs) / static_cast<double>(p.temperature) > static_cast<double>(FLT_MAX);
  }
  if (greedy) {
    const int32_t id = block_argmax(logits, vocab, storage, shared_id);
    if (threadIdx.x == 0) a.ids[row] = id;
    return;
  }

  float max_logit = -INFINITY;
  for (int32_t i = threadIdx.x; i < vocab; i += kThreads) {
    logits[i] /= p.temperature;
    max_logit = fmaxf(max_logit, logits[i]);
  }
  max_logit = block_max(max_logit, storage, shared_max);  // its barrier publishes the scaled logits
  auto prob = [max_logit](float l) { return static_cast<double>(expf(l - max_logit)); };

  // Top-k: keep every logit >= the k-th largest (ties with it included).
  uint32_t floor = 0;
  if (p.top_k > 0 && p.top_k < vocab) {
    floor = largest_key_reaching(
        logits, vocab, 0, static_cast<double>(p.top_k), [](float) { return 1.0; }, storage, shared_sum);
  }
  auto kept_total = [&](uint32_t threshold) {
    double sum = 0.0;
    for (int32_t i = threadIdx.x; i < vocab; i += kThreads) {
      if (order_key(logits[i]) >= threshold) sum += prob(logits[i]);
    }
    return block_sum(sum, storage, shared_sum);
  };
  double total = kept_total(floor);
  if (p.top_p < 1.0f) {
    // Top-p: the smallest set of the most likely tokens whose mass reaches top_p of the total, and
    // at least the most likely one (its probability here is exp(0) = 1), as on the CPU.
    const double mass_target = fmax(static_cast<double>(p.top_p) * total, 1.0);
    const uint32_t cut = largest_key_reaching(logits, vocab, floor, mass_target, prob, storage, shared_sum);
    if (cut > floor) {
      floor = cut;
      total = kept_total(floor);
    }
  }

  // The first kept id (in id order) where the running mass passes a uniform draw in (0, total].
  __shared__ double target;
  __shared__ int32_t chosen, last_kept;
  if (threadIdx.x == 0) {
    curandStatePhilox4_32_10_t rng;
    curand_init(p.seed, p.draw, 0, &rng);
    target = curand_uniform_double(&rng) * total;
    chosen = vocab;
    last_kept = 0;
  }
  __syncthreads();
  double carry = 0.0;
  for (int32_t base = 0; base < vocab; base += kThreads) {
    const int32_t i = base + threadIdx.x;
    const bool kept = i < vocab && order_key(logits[i]) >= floor;
    const double mass = kept ? prob(logits[i]) : 0.0;
    double running, chunk;
    cub::BlockScan<double, kThreads>(storage.scan).InclusiveSum(mass, running, chunk);
    if (mass > 0.0) {
      if (carry + running >= target) atomicMin(&chosen, i);
      atomicMax(&last_kept, i);
    }
    carry += chunk;
    __syncthreads();
    if (chosen < vocab) break;
  }
  // Rounding can leave the draw past the scanned mass: then the last candidate, as the CPU does.
  if (threadIdx.x == 0) a.ids[row] = chosen < vocab ? chosen : last_kept;
}

}  // namespace

size_t sampler_workspace_bytes(int32_t rows, int32_t vocab) {
  return static_cast<size_t>(rows) * static_cast<size_t>((vocab + 31) / 32) * sizeof(uint32_t);
}

void sample_cuda(const SamplerCudaArgs& a, cudaStream_t stream) {
  require(a.vocab > 0, "sample_kernel", "empty vocabulary");
  if (a.rows == 0) return;
  sample_kernel<<<static_cast<unsigned>(a.rows), kThreads, 0, stream>>>(a);
  check_launch("sample_kernel");
}

}  // namespace izwi
