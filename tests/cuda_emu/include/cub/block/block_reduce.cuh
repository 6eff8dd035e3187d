#pragma once
// The emulator's cub::BlockReduce: the block's values meet in shared slots behind one barrier,
// and, as in cub, only thread 0's result is the reduction (the others get their own input back).
// Like cub it leaves no barrier after itself: storage reused without a __syncthreads() races.

#include "cuda_emu.h"

namespace cub {

template <typename T, int BlockThreads>
class BlockReduce {
 public:
  struct TempStorage {
    T slots[BlockThreads];
  };

  explicit BlockReduce(TempStorage& storage) : storage_(storage) {}

  template <typename Op>
  T Reduce(T input, Op op) {
    const unsigned thread = threadIdx.x;
    storage_.slots[thread] = input;
    __syncthreads();
    if (thread != 0) return input;
    T result = storage_.slots[0];
    for (int i = 1; i < BlockThreads; ++i) result = op(result, storage_.slots[i]);
    return result;
  }

  T Sum(T input) {
    return Reduce(input, [](const T& a, const T& b) { return a + b; });
  }

 private:
  TempStorage& storage_;
};

}  // namespace cub
