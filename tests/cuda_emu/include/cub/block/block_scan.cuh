#pragma once
// The emulator's cub::BlockScan: every thread's inclusive prefix sum over the block's values in
// thread order, and the block's total. Like cub it leaves no barrier after itself.

#include "cuda_emu.h"

namespace cub {

template <typename T, int BlockThreads>
class BlockScan {
 public:
  struct TempStorage {
    T slots[BlockThreads];
  };

  explicit BlockScan(TempStorage& storage) : storage_(storage) {}

  void InclusiveSum(T input, T& output, T& block_aggregate) {
    const unsigned thread = threadIdx.x;
    storage_.slots[thread] = input;
    __syncthreads();
    T sum = storage_.slots[0];
    for (unsigned i = 1; i <= thread; ++i) sum = sum + storage_.slots[i];
    output = sum;
    for (int i = static_cast<int>(thread) + 1; i < BlockThreads; ++i) sum = sum + storage_.slots[i];
    block_aggregate = sum;
  }

 private:
  TempStorage& storage_;
};

}  // namespace cub
