// The emulator's scheduler (a block's threads as fibers) and the part of the CUDA runtime API the
// kernels and their tests call. Memory is host memory; streams are one synchronous queue.

#include <boost/context/fiber.hpp>
#include <boost/context/pooled_fixedsize_stack.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_emu.h"

namespace ctx = boost::context;

namespace izwi_emu {

namespace {

// The device the kernels are planned for: an H100 / H200 (sm_90, 132 multiprocessors).
constexpr int kMultiprocessors = 132;
constexpr size_t kDefaultDynamicShared = 48 * 1024;
constexpr size_t kMaxDynamicSharedOptIn = 227 * 1024;
constexpr int kWarp = 32;

enum class State { Runnable, AtBlockBarrier, AtWarpBarrier, Done };

}  // namespace

struct ThreadState {
  uint3 index;
  int warp = 0;
  int lane = 0;
  State state = State::Runnable;
  const char* barrier_file = nullptr;  // the __syncthreads() the thread waits at
  int barrier_line = 0;
  ctx::fiber fiber;
  ctx::fiber scheduler;  // where the thread returns at a barrier
};

ThreadState* current_thread = nullptr;
uint3 current_block;
dim3 current_block_dim;
dim3 current_grid_dim;

namespace {

struct WarpState {
  int arrived = 0;
  unsigned char slots[kWarp][16];
};

struct SharedRegion {
  void* data;
  size_t bytes;
};

struct Emulator {
  std::vector<SharedRegion> shared;
  std::vector<unsigned char> dynamic;
  std::vector<WarpState> warps;
  std::map<const void*, size_t> dynamic_shared_limit;  // cudaFuncSetAttribute per kernel
  std::map<uintptr_t, size_t> allocations;             // cudaMalloc's, by address
  cudaError_t last_error = cudaSuccess;
  ctx::pooled_fixedsize_stack stacks{256 * 1024};
};

Emulator& emulator() {
  static Emulator instance;
  return instance;
}

void yield(State state) {
  ThreadState* self = current_thread;
  self->state = state;
  self->scheduler = std::move(self->scheduler).resume();
}

[[noreturn]] void fail(const std::string& message) { throw std::logic_error(message); }

std::string where() {
  const ThreadState& t = *current_thread;
  return "block (" + std::to_string(current_block.x) + "," + std::to_string(current_block.y) + "," +
         std::to_string(current_block.z) + ") thread " + std::to_string(t.index.x);
}

// Runs one block to completion; throws what a thread threw or a barrier that cannot complete.
void run_block(const std::function<void()>& body) {
  Emulator& emu = emulator();
  for (const SharedRegion& region : emu.shared) std::memset(region.data, 0xff, region.bytes);
  std::fill(emu.dynamic.begin(), emu.dynamic.end(), 0xff);
  const int count = static_cast<int>(current_block_dim.x * current_block_dim.y * current_block_dim.z);
  emu.warps.assign((count + kWarp - 1) / kWarp, WarpState{});

  std::exception_ptr failure;
  std::vector<ThreadState> threads(count);
  for (int i = 0; i < count; ++i) {
    ThreadState& t = threads[i];
    t.index = uint3{i % current_block_dim.x, i / current_block_dim.x % current_block_dim.y,
                    i / (current_block_dim.x * current_block_dim.y)};
    t.warp = i / kWarp;
    t.lane = i % kWarp;
    t.fiber = ctx::fiber(std::allocator_arg, emu.stacks, [&t, &body, &failure](ctx::fiber&& scheduler) {
      t.scheduler = std::move(scheduler);
      try {
        body();
      } catch (const ctx::detail::forced_unwind&) {
        throw;
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
      t.state = State::Done;
      return std::move(t.scheduler);
    });
  }

  // Passes alternate between ascending and descending thread order, so a write that lacks its
  // barrier before another thread's read shows in one direction or the other.
  for (int pass = 0;; ++pass) {
    bool ran = false;
    for (int i = 0; i < count; ++i) {
      ThreadState& t = threads[pass % 2 == 0 ? i : count - 1 - i];
      if (t.state != State::Runnable) continue;
      current_thread = &t;
      t.fiber = std::move(t.fiber).resume();
      ran = true;
      if (failure) std::rethrow_exception(failure);  // the other fibers unwind as `threads` goes
    }
    int live = 0, at_barrier = 0;
    for (const ThreadState& t : threads) {
      live += t.state != State::Done;
      at_barrier += t.state == State::AtBlockBarrier;
    }
    if (live == 0) return;
    if (at_barrier == live) {  // exited threads do not hold a barrier up
      const ThreadState* first = nullptr;
      for (ThreadState& t : threads) {
        if (t.state != State::AtBlockBarrier) continue;
        if (first == nullptr) first = &t;
        // A device counts arrivals, whichever barrier; the programming model requires the same one.
        if (t.barrier_line != first->barrier_line || std::strcmp(t.barrier_file, first->barrier_file) != 0) {
          fail("divergent __syncthreads() in block (" + std::to_string(current_block.x) + "," +
               std::to_string(current_block.y) + "," + std::to_string(current_block.z) + "): thread " +
               std::to_string(first->index.x) + " at " + first->barrier_file + ":" +
               std::to_string(first->barrier_line) + ", thread " + std::to_string(t.index.x) + " at " + t.barrier_file +
               ":" + std::to_string(t.barrier_line));
        }
        t.state = State::Runnable;
      }
      continue;
    }
    if (!ran) {
      std::string waiting;
      for (const ThreadState& t : threads) {
        if (t.state == State::AtBlockBarrier) waiting += " " + std::to_string(t.index.x) + ":__syncthreads";
        if (t.state == State::AtWarpBarrier) waiting += " " + std::to_string(t.index.x) + ":shuffle";
        if (t.state == State::Done) waiting += " " + std::to_string(t.index.x) + ":exited";
      }
      fail("deadlock in block (" + std::to_string(current_block.x) + "," + std::to_string(current_block.y) + "," +
           std::to_string(current_block.z) + "): " + std::to_string(live) +
           " live threads; the threads:" + waiting.substr(0, 400));
    }
  }
}

}  // namespace

uint3 thread_index() { return current_thread->index; }

int lane_id() { return current_thread->lane; }

void sync_block(const char* file, int line) {
  current_thread->barrier_file = file;
  current_thread->barrier_line = line;
  yield(State::AtBlockBarrier);
}

void warp_exchange(const void* value, void* out, size_t bytes, int source) {
  Emulator& emu = emulator();
  ThreadState* self = current_thread;
  WarpState& warp = emu.warps[self->warp];
  const int first = self->warp * kWarp;
  const int count = static_cast<int>(current_block_dim.x * current_block_dim.y * current_block_dim.z);
  if (first + kWarp > count) fail(where() + ": a shuffle in a warp of fewer than 32 threads");
  std::memcpy(warp.slots[self->lane], value, bytes);
  // Two phases: all lanes have written, then all have read, before a slot is reused.
  for (int phase = 0; phase < 2; ++phase) {
    if (phase == 1) std::memcpy(out, warp.slots[source], bytes);
    if (++warp.arrived == kWarp) {
      warp.arrived = 0;
      // The last lane in releases the others; it goes on without waiting.
      ThreadState* lanes = self - self->lane;
      for (int l = 0; l < kWarp; ++l) {
        if (&lanes[l] != self) lanes[l].state = State::Runnable;
      }
    } else {
      yield(State::AtWarpBarrier);
    }
  }
}

void* dynamic_shared() { return emulator().dynamic.data(); }

void* register_shared(size_t bytes) {
  void* data = std::aligned_alloc(16, (bytes + 15) / 16 * 16);
  std::memset(data, 0xff, bytes);
  emulator().shared.push_back({data, bytes});
  return data;
}

void run_grid(const void* kernel, dim3 grid, dim3 block, size_t dynamic_shared_bytes,
              const std::function<void()>& body) {
  Emulator& emu = emulator();
  const uint64_t threads = uint64_t{block.x} * block.y * block.z;
  const auto limit = emu.dynamic_shared_limit.find(kernel);
  const size_t allowed = limit == emu.dynamic_shared_limit.end() ? kDefaultDynamicShared : limit->second;
  if (threads == 0 || threads > 1024 || block.z > 64 || grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.y > 65535 ||
      grid.z > 65535) {
    std::fprintf(stderr, "cuda_emu: invalid launch configuration (grid %u x %u x %u, block %u x %u x %u)\n", grid.x,
                 grid.y, grid.z, block.x, block.y, block.z);
    emu.last_error = cudaErrorInvalidConfiguration;
    return;
  }
  if (dynamic_shared_bytes > allowed) {
    std::fprintf(stderr, "cuda_emu: %zu bytes of dynamic shared memory, the kernel allows %zu\n", dynamic_shared_bytes,
                 allowed);
    emu.last_error = cudaErrorInvalidValue;
    return;
  }
  emu.dynamic.assign(dynamic_shared_bytes, 0xff);
  current_grid_dim = grid;
  current_block_dim = block;
  try {
    for (unsigned z = 0; z < grid.z; ++z) {
      for (unsigned y = 0; y < grid.y; ++y) {
        for (unsigned x = 0; x < grid.x; ++x) {
          current_block = uint3{x, y, z};
          run_block(body);
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda_emu: kernel failed: %s\n", e.what());
    emu.last_error = cudaErrorLaunchFailure;
  }
  current_thread = nullptr;
}

bool device_range(const void* pointer, size_t bytes) {
  const auto& allocations = emulator().allocations;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(pointer);
  auto it = allocations.upper_bound(begin);
  if (it == allocations.begin()) return false;
  --it;
  return begin + bytes <= it->first + it->second;
}

}  // namespace izwi_emu

using izwi_emu::emulator;

extern "C" {

cudaError_t cudaGetLastError() {
  const cudaError_t error = emulator().last_error;
  emulator().last_error = cudaSuccess;
  return error;
}

cudaError_t cudaPeekAtLastError() { return emulator().last_error; }

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return "cudaSuccess";
    case cudaErrorInvalidValue:
      return "cudaErrorInvalidValue";
    case cudaErrorInvalidConfiguration:
      return "cudaErrorInvalidConfiguration";
    case cudaErrorLaunchFailure:
      return "cudaErrorLaunchFailure";
    default:
      return "cudaError";
  }
}

const char* cudaGetErrorString(cudaError_t error) { return cudaGetErrorName(error); }

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attribute, int) {
  switch (attribute) {
    case cudaDevAttrMultiProcessorCount:
      *value = izwi_emu::kMultiprocessors;
      return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor:
      *value = 9;
      return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor:
      *value = 0;
      return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      *value = static_cast<int>(izwi_emu::kMaxDynamicSharedOptIn);
      return cudaSuccess;
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t cudaFuncSetAttribute(const void* kernel, cudaFuncAttribute attribute, int value) {
  if (attribute != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 ||
      static_cast<size_t>(value) > izwi_emu::kMaxDynamicSharedOptIn) {
    return cudaErrorInvalidValue;
  }
  emulator().dynamic_shared_limit[kernel] = static_cast<size_t>(value);
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() { return emulator().last_error; }

cudaError_t cudaStreamSynchronize(cudaStream_t) { return emulator().last_error; }

// Aligned as cudaMalloc's, and exactly `bytes` long, so an address sanitizer sees a read past the end.
cudaError_t cudaMalloc(void** pointer, size_t bytes) {
  if (posix_memalign(pointer, 256, std::max<size_t>(bytes, 1)) != 0) return cudaErrorMemoryAllocation;
  emulator().allocations[reinterpret_cast<uintptr_t>(*pointer)] = bytes;
  return cudaSuccess;
}

cudaError_t cudaFree(void* pointer) {
  emulator().allocations.erase(reinterpret_cast<uintptr_t>(pointer));
  std::free(pointer);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* destination, const void* source, size_t bytes, cudaMemcpyKind) {
  if (bytes > 0) std::memcpy(destination, source, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* destination, const void* source, size_t bytes, cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpy(destination, source, bytes, kind);
}

cudaError_t cudaMemset(void* pointer, int value, size_t bytes) {
  if (bytes > 0) std::memset(pointer, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* pointer, int value, size_t bytes, cudaStream_t) {
  return cudaMemset(pointer, value, bytes);
}

}  // extern "C"
