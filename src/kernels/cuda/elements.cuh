#pragma once
// Device-side element access shared by the kernels: float32 math on float32, bf16 or f16 storage,
// and packs of 16 bytes (4 floats, 8 bf16) loaded in one instruction where the address allows.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace izwi {

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }

/// float32 -> T, rounded to nearest even (as libtorch's .to(dtype)).
template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}

/// Elements of T in one 16-byte load.
template <typename T>
constexpr int kPack = 16 / sizeof(T);

/// N elements of T loaded or stored as one (or, past 16 bytes, a few) vector accesses.
template <typename T, int N>
struct alignas(sizeof(T) * N >= 16 ? 16 : sizeof(T) * N) Pack {
  T v[N];
};

template <typename T, int N>
__device__ __forceinline__ bool pack_aligned(const T* p) {
  return reinterpret_cast<uintptr_t>(p) % alignof(Pack<T, N>) == 0;
}

/// out[k] = p[k] for k < n (n <= N), as floats: one pack load when n == N and p is aligned for it,
/// element loads otherwise (a row's unaligned start or its tail). out[k >= n] is left as it was.
template <int N, typename T>
__device__ __forceinline__ void load_floats(const T* p, int n, float (&out)[N]) {
  if (n == N && pack_aligned<T, N>(p)) {
    const Pack<T, N> pack = *reinterpret_cast<const Pack<T, N>*>(p);
#pragma unroll
    for (int k = 0; k < N; ++k) out[k] = to_float(pack.v[k]);
  } else {
    for (int k = 0; k < n; ++k) out[k] = to_float(p[k]);
  }
}

/// p[k] = in[k] rounded to T for k < n, as load_floats reads.
template <int N, typename T>
__device__ __forceinline__ void store_floats(T* p, int n, const float (&in)[N]) {
  if (n == N && pack_aligned<T, N>(p)) {
    Pack<T, N> pack;
#pragma unroll
    for (int k = 0; k < N; ++k) pack.v[k] = from_float<T>(in[k]);
    *reinterpret_cast<Pack<T, N>*>(p) = pack;
  } else {
    for (int k = 0; k < n; ++k) p[k] = from_float<T>(in[k]);
  }
}

/// A float32 or bf16 array whose type is known only at run time (norm weights, rotary tables):
/// one warp-uniform branch per element read.
struct FloatOrBf16 {
  const void* data;
  bool bf16;
  __device__ __forceinline__ float operator[](int64_t i) const {
    return bf16 ? __bfloat162float(static_cast<const __nv_bfloat16*>(data)[i]) : static_cast<const float*>(data)[i];
  }
};

}  // namespace izwi
