// attention_inputs_cuda (per-head q/k RMSNorm, RoPE and the K/V pool writes in one launch) against
// attention_inputs_cpu: float32 and bf16 activations, float32 / bf16 / f16 pools, with and without
// the per-head norms, from tables or from inv_freq, at head dims below and above a warp's pairs and
// with a padded projection row. The pools start filled, so slots the step does not own must keep
// their values. Rounded outputs must be within one ulp of the CPU result rounded the same way
// (expect_within_ulps says why one suffices).

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "cuda/cuda_test_util.h"
#include "cuda/low_precision_test_util.h"
#include "kernels/cpu/attention_inputs_cpu.h"
#include "kernels/cuda/attention_inputs_cuda.h"

namespace izwi {
namespace {

using cuda_test::DeviceBuffer;
using cuda_test::expect_close;
using cuda_test::expect_within_ulps;
using cuda_test::from_bf16;
using cuda_test::from_f16;
using cuda_test::kBf16Mantissa;
using cuda_test::kF16Mantissa;
using cuda_test::random_floats;
using cuda_test::round_bf16;
using cuda_test::to_bf16;
using cuda_test::to_f16;

// A rotated pair near zero is a difference of products of about 1: their float32 rounding, 1e-6 or
// so, is large against the ulp of the small result.
constexpr float kCancellation = 1e-5f;

struct Shape {
  int64_t tokens, heads, kv_heads, head_dim, padding;  // padding: elements after a token's heads
};

// head_dim 6: fewer pairs than a warp's lanes; 128: two pairs a lane; 256 with padding: four, and
// a row stride longer than the heads.
constexpr Shape kShapes[] = {{3, 3, 1, 6, 0}, {5, 4, 2, 128, 0}, {2, 2, 2, 256, 8}};

// The inputs of one case, as float32 (bf16 cases round them first, so the CPU sees the same values).
struct Inputs {
  AttentionInputsShape shape;
  int64_t num_slots = 0, max_positions = 64;
  std::vector<float> qkv, q_norm, k_norm, inv_freq, cos, sin, key_pool, value_pool;
  std::vector<int64_t> positions, slots;

  Inputs(const Shape& s, uint32_t seed, bool bf16) {
    const int64_t D = s.head_dim, half = D / 2;
    shape = {s.tokens, s.heads, s.kv_heads, D, (s.heads + 2 * s.kv_heads) * D + s.padding};
    num_slots = 2 * s.tokens + 3;
    qkv = random_floats(s.tokens * shape.qkv_stride, seed, -2.0f, 2.0f);
    q_norm = random_floats(D, seed + 1, 0.5f, 1.5f);
    k_norm = random_floats(D, seed + 2, 0.5f, 1.5f);
    key_pool = random_floats(num_slots * s.kv_heads * D, seed + 3, -9.0f, 9.0f);
    value_pool = random_floats(num_slots * s.kv_heads * D, seed + 4, -9.0f, 9.0f);
    inv_freq.resize(half);
    for (int64_t i = 0; i < half; ++i) inv_freq[i] = 1.0f / std::pow(10000.0f, static_cast<float>(2 * i) / D);
    cos.resize(max_positions * half);
    sin.resize(max_positions * half);
    for (int64_t p = 0; p < max_positions; ++p) {
      for (int64_t i = 0; i < half; ++i) {
        cos[p * half + i] = std::cos(static_cast<float>(p) * inv_freq[i]);
        sin[p * half + i] = std::sin(static_cast<float>(p) * inv_freq[i]);
      }
    }
    // Scattered slots, none shared, in no particular order.
    std::vector<int64_t> all(num_slots);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), std::mt19937(seed + 5));
    slots.assign(all.begin(), all.begin() + s.tokens);
    for (int64_t t = 0; t < s.tokens; ++t) positions.push_back((t * 37 + 11) % max_positions);
    if (bf16) {
      for (std::vector<float>* v : {&qkv, &q_norm, &k_norm, &cos, &sin, &key_pool, &value_pool}) *v = round_bf16(*v);
    }
  }

  AttentionInputsParams cpu_params(bool norms) const {
    AttentionInputsParams p;
    p.q_norm = norms ? q_norm.data() : nullptr;
    p.k_norm = norms ? k_norm.data() : nullptr;
    p.eps = 1e-6f;
    p.positions = positions.data();
    p.cos = cos.data();
    p.sin = sin.data();
    p.slots = slots.data();
    return p;
  }
  int64_t q_size() const { return shape.tokens * shape.heads * shape.head_dim; }
};

// The device side of one case: float32 or bf16 copies of the inputs as `args` names them.
struct DeviceInputs {
  DeviceBuffer<float> qkv32, q32, norms32_q, norms32_k, cos32, sin32, inv_freq;
  DeviceBuffer<uint16_t> qkv16, q16, norms16_q, norms16_k, cos16, sin16;
  DeviceBuffer<int64_t> positions, slots;

  explicit DeviceInputs(const Inputs& in)
      : qkv32(in.qkv),
        q32(in.q_size()),
        norms32_q(in.q_norm),
        norms32_k(in.k_norm),
        cos32(in.cos),
        sin32(in.sin),
        inv_freq(in.inv_freq),
        qkv16(to_bf16(in.qkv)),
        q16(in.q_size()),
        norms16_q(to_bf16(in.q_norm)),
        norms16_k(to_bf16(in.k_norm)),
        cos16(to_bf16(in.cos)),
        sin16(to_bf16(in.sin)),
        positions(in.positions),
        slots(in.slots) {}

  // bf16: activations, norms and tables all bf16; tables false: the angles from inv_freq.
  AttentionInputsCudaArgs args(const Inputs& in, bool bf16, bool norms, bool tables) const {
    AttentionInputsCudaArgs a;
    a.shape = in.shape;
    a.activations = bf16 ? ElementDtype::BFloat16 : ElementDtype::Float32;
    a.qkv = bf16 ? static_cast<const void*>(qkv16.get()) : qkv32.get();
    a.q_out = bf16 ? static_cast<void*>(q16.get()) : q32.get();
    a.slots = slots.get();
    a.positions = positions.get();
    a.norms = a.activations;
    if (norms) {
      a.q_norm = bf16 ? static_cast<const void*>(norms16_q.get()) : norms32_q.get();
      a.k_norm = bf16 ? static_cast<const void*>(norms16_k.get()) : norms32_k.get();
    }
    a.eps = 1e-6f;
    a.angles = a.activations;
    if (tables) {
      a.cos = bf16 ? static_cast<const void*>(cos16.get()) : cos32.get();
      a.sin = bf16 ? static_cast<const void*>(sin16.get()) : sin32.get();
    } else {
      a.inv_freq = inv_freq.get();
    }
    return a;
  }
};

TEST(AttentionInputsCuda, Float32MatchesCpuWithFloat32Pools) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  uint32_t seed = 1;
  for (const Shape& s : kShapes) {
    for (const bool norms : {false, true}) {
      for (const bool tables : {true, false}) {
        SCOPED_TRACE("head_dim " + std::to_string(s.head_dim) + (norms ? " normed" : "") + (tables ? "" : " angles"));
        const Inputs in(s, seed += 10, false);
        std::vector<float> q(in.q_size()), keys = in.key_pool, values = in.value_pool;
        attention_inputs_cpu(in.qkv.data(), in.shape, in.cpu_params(norms), q.data(), keys.data(), values.data());
        const DeviceInputs d(in);
        DeviceBuffer<float> d_keys(in.key_pool), d_values(in.value_pool);
        AttentionInputsCudaArgs a = d.args(in, false, norms, tables);
        a.key_pool = d_keys.get();
        a.value_pool = d_values.get();
        a.pools = ElementDtype::Float32;
        attention_inputs_cuda(a, nullptr);
        // Without tables: cosf / sinf on the GPU against the CPU's tables, as RopeCuda bounds them.
        expect_close(d.q32.to_host(), q, 1e-5f);
        expect_close(d_keys.to_host(), keys, 1e-5f);
        expect_close(d_values.to_host(), values, 0.0f);
      }
    }
  }
}

TEST(AttentionInputsCuda, Float32ActivationsIntoBf16AndF16Pools) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  uint32_t seed = 100;
  for (const Shape& s : kShapes) {
    SCOPED_TRACE("head_dim " + std::to_string(s.head_dim));
    Inputs in(s, seed += 10, false);
    const DeviceInputs d(in);

    // bf16 pools: the CPU kernel's own bf16 overload is the reference.
    const std::vector<uint16_t> keys16 = to_bf16(in.key_pool), values16 = to_bf16(in.value_pool);
    std::vector<uint16_t> keys = keys16, values = values16;
    std::vector<float> q(in.q_size());
    attention_inputs_cpu(in.qkv.data(), in.shape, in.cpu_params(true), q.data(), keys.data(), values.data());
    DeviceBuffer<uint16_t> d_keys(keys16), d_values(values16);
    AttentionInputsCudaArgs a = d.args(in, false, true, true);
    a.key_pool = d_keys.get();
    a.value_pool = d_values.get();
    a.pools = ElementDtype::BFloat16;
    attention_inputs_cuda(a, nullptr);
    expect_close(d.q32.to_host(), q, 1e-5f);
    expect_within_ulps(from_bf16(d_keys.to_host()), from_bf16(keys), kBf16Mantissa, 1.0f, kCancellation);
    EXPECT_EQ(d_values.to_host(), values);  // a copy rounded once, as the CPU rounds

    // f16 pools: the CPU kernel's float32 pools, rounded to f16.
    const std::vector<uint16_t> keys_h = to_f16(in.key_pool), values_h = to_f16(in.value_pool);
    std::vector<float> keys32 = from_f16(keys_h), values32 = from_f16(values_h);
    attention_inputs_cpu(in.qkv.data(), in.shape, in.cpu_params(true), q.data(), keys32.data(), values32.data());
    DeviceBuffer<uint16_t> d_keys_h(keys_h), d_values_h(values_h);
    a.key_pool = d_keys_h.get();
    a.value_pool = d_values_h.get();
    a.pools = ElementDtype::Float16;
    attention_inputs_cuda(a, nullptr);
    expect_within_ulps(from_f16(d_keys_h.to_host()), from_f16(to_f16(keys32)), kF16Mantissa, 1.0f, kCancellation);
    EXPECT_EQ(d_values_h.to_host(), to_f16(values32));
  }
}

TEST(AttentionInputsCuda, Bf16ActivationsNormsAndTablesMatchCpu) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  uint32_t seed = 200;
  for (const Shape& s : kShapes) {
    for (const bool norms : {false, true}) {
      SCOPED_TRACE("head_dim " + std::to_string(s.head_dim) + (norms ? " normed" : ""));
      const Inputs in(s, seed += 10, true);  // inputs rounded to bf16: the CPU widens them exactly
      std::vector<uint16_t> keys = to_bf16(in.key_pool), values = to_bf16(in.value_pool);
      std::vector<float> q(in.q_size());
      attention_inputs_cpu(in.qkv.data(), in.shape, in.cpu_params(norms), q.data(), keys.data(), values.data());
      const DeviceInputs d(in);
      DeviceBuffer<uint16_t> d_keys(to_bf16(in.key_pool)), d_values(to_bf16(in.value_pool));
      AttentionInputsCudaArgs a = d.args(in, true, norms, true);
      a.key_pool = d_keys.get();
      a.value_pool = d_values.get();
      a.pools = ElementDtype::BFloat16;
      attention_inputs_cuda(a, nullptr);
      expect_within_ulps(from_bf16(d.q16.to_host()), round_bf16(q), kBf16Mantissa, 1.0f, kCancellation);
      expect_within_ulps(from_bf16(d_keys.to_host()), from_bf16(keys), kBf16Mantissa, 1.0f, kCancellation);
      EXPECT_EQ(d_values.to_host(), values);
    }
  }
}

TEST(AttentionInputsCuda, NoTokensWritesNothing) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  const Inputs in(kShapes[1], 300, false);
  const DeviceInputs d(in);
  DeviceBuffer<float> d_keys(in.key_pool), d_values(in.value_pool);
  AttentionInputsCudaArgs a = d.args(in, false, true, true);
  a.shape.tokens = 0;
  a.key_pool = d_keys.get();
  a.value_pool = d_values.get();
  attention_inputs_cuda(a, nullptr);
  expect_close(d_keys.to_host(), in.key_pool, 0.0f);
  expect_close(d_values.to_host(), in.value_pool, 0.0f);
}

// The argument checks come before any launch, so they need no device.
TEST(AttentionInputsCuda, RejectsArgumentsItCannotServe) {
  AttentionInputsCudaArgs a;
  a.shape = {1, 2, 1, 8, 32};
  float table = 0.0f;
  a.cos = &table;
  a.sin = &table;
  const auto rejects = [](AttentionInputsCudaArgs bad, const char* why) {
    EXPECT_THROW(attention_inputs_cuda(bad, nullptr), std::invalid_argument) << why;
  };
  AttentionInputsCudaArgs odd = a;
  odd.shape = {1, 2, 1, 7, 28};
  rejects(odd, "odd head_dim");
  AttentionInputsCudaArgs short_rows = a;
  short_rows.shape.qkv_stride = 31;
  rejects(short_rows, "qkv_stride below (heads + 2 kv_heads) * head_dim");
  AttentionInputsCudaArgs f16 = a;
  f16.activations = ElementDtype::Float16;
  rejects(f16, "f16 activations");
  AttentionInputsCudaArgs no_angles = a;
  no_angles.cos = nullptr;
  rejects(no_angles, "neither tables nor inv_freq");
}

}  // namespace
}  // namespace izwi
