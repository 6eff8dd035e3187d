#include "structured/stack_pool.h"

namespace izwi::structured {

int32_t StackPool::push(int32_t return_node, int32_t parent) {
  const uint64_t key =
      (static_cast<uint64_t>(static_cast<uint32_t>(return_node)) << 32) | static_cast<uint32_t>(parent);
  const auto [it, inserted] = index_.try_emplace(key, static_cast<int32_t>(frames_.size()));
  if (inserted) frames_.push_back({return_node, parent});
  return it->second;
}

}  // namespace izwi::structured
