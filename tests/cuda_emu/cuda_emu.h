#pragma once
// A CUDA emulator for the kernel tests on a machine without a GPU. Each kernel source is compiled
// as host C++ (tests/cuda_emu/emulate_cuda_source.py rewrites its launches and __shared__
// declarations, then this header stands in for the device built-ins). A launch runs its blocks one
// after another; a block's threads are fibers (Boost.Context) that switch only at
// __syncthreads() and warp shuffles, so barriers and shuffles keep their CUDA meaning: a
// barrier some live thread never reaches, two barriers waited at by one block, or a full-mask
// shuffle with a lane that has exited, is reported as the launch's error instead of hanging. Shared and dynamic shared
// memory are filled with 0xff bytes (NaN, -1) at every block's start, so a read before a write shows. It checks the
// kernels' logic (indexing, reductions, partitions, rounding), not their speed, and not what the CUDA memory model
// leaves undefined between unsynchronised threads.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <curand_kernel.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <tuple>
#include <type_traits>

namespace izwi_emu {

struct ThreadState;
extern ThreadState* current_thread;
extern uint3 current_block;
extern dim3 current_block_dim;
extern dim3 current_grid_dim;

uint3 thread_index();
/// `file` and `line` name the barrier: the block's live threads must all wait at the same one.
void sync_block(const char* file, int line);
/// Every lane of the caller's warp writes `bytes` of its value, then reads lane `source`'s.
void warp_exchange(const void* value, void* out, size_t bytes, int source);
int lane_id();
void* dynamic_shared();
/// A block-shared variable's storage, registered once, refilled with 0xff at each block's start.
void* register_shared(size_t bytes);

template <typename T, int Id>
T& shared_var() {
  static void* storage = register_shared(sizeof(T));
  return *static_cast<T*>(storage);
}

template <typename T>
T shfl_xor(unsigned mask, T value, int lane_mask, int width = 32) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 16, "shuffle of a register-sized value");
  if (mask != 0xffffffffu) throw std::logic_error("__shfl_xor_sync: the emulator takes full-warp masks only");
  const int lane = lane_id();
  const int source = (lane & ~(width - 1)) | ((lane ^ lane_mask) & (width - 1));
  T out;
  warp_exchange(&value, &out, sizeof(T), source);
  return out;
}

// Fibers of one block share an OS thread and switch only at barriers: an atomic is a plain
// read-modify-write that returns the old value.
template <typename T, typename Op>
T atomic_update(T* address, T value, Op op) {
  const T old = *address;
  *address = op(old, value);
  return old;
}

template <typename To, typename From>
To bit_cast(From value) {
  static_assert(sizeof(To) == sizeof(From));
  To out;
  std::memcpy(&out, &value, sizeof(To));
  return out;
}

/// True when [pointer, pointer + bytes) lies inside one live cudaMalloc allocation: device memory,
/// as a library call that takes device pointers (cuBLASLt's) requires.
bool device_range(const void* pointer, size_t bytes);

/// Runs `body` for every thread of every block; a failure is kept as the last error
/// (cudaGetLastError), as a launch's or a kernel's failure is on a device.
void run_grid(const void* kernel, dim3 grid, dim3 block, size_t dynamic_shared_bytes,
              const std::function<void()>& body);

template <typename... Params, typename... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t dynamic_shared_bytes, cudaStream_t,
            Args&&... args) {
  // The arguments converted to the parameters once, as a launch copies them; each thread gets its own copy.
  const std::tuple<std::decay_t<Params>...> params(std::forward<Args>(args)...);
  run_grid(reinterpret_cast<const void*>(kernel), grid, block, dynamic_shared_bytes,
           [&] { std::apply(kernel, params); });
}

}  // namespace izwi_emu

// nvcc's C++ form of the runtime call, for a kernel named by its function.
template <typename... Params>
cudaError_t cudaFuncSetAttribute(void (*kernel)(Params...), cudaFuncAttribute attribute, int value) {
  return cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), attribute, value);
}

using std::max;
using std::min;

#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __launch_bounds__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)

#undef threadIdx
#undef blockIdx
#undef blockDim
#undef gridDim
#define threadIdx (::izwi_emu::thread_index())
#define blockIdx (::izwi_emu::current_block)
#define blockDim (::izwi_emu::current_block_dim)
#define gridDim (::izwi_emu::current_grid_dim)

#define __syncthreads() ::izwi_emu::sync_block(__FILE__, __LINE__)
#define __shfl_xor_sync ::izwi_emu::shfl_xor
#define atomicMax(address, value) ::izwi_emu::atomic_update(address, value, [](auto a, auto b) { return max(a, b); })
#define atomicMin(address, value) ::izwi_emu::atomic_update(address, value, [](auto a, auto b) { return min(a, b); })
#define atomicOr(address, value) ::izwi_emu::atomic_update(address, value, [](auto a, auto b) { return a | b; })
#define atomicAdd(address, value) ::izwi_emu::atomic_update(address, value, [](auto a, auto b) { return a + b; })
#define __float_as_uint(v) ::izwi_emu::bit_cast<unsigned>(static_cast<float>(v))
#define __float_as_int(v) ::izwi_emu::bit_cast<int>(static_cast<float>(v))
