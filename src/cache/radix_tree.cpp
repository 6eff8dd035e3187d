#include "cache/radix_tree.h"

#include <algorithm>

#include "cache/block_hash.h"
#include "common/check.h"

namespace izwi {

size_t TokenChunkHash::operator()(const std::vector<int32_t>& chunk) const noexcept {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the ids
  for (int32_t id : chunk) {
    h ^= static_cast<uint32_t>(id);
    h *= 1099511628211ull;
  }
  return static_cast<size_t>(h);
}

RadixTree::RadixTree(int32_t block_size) : block_size_(block_size), events_(block_size) {
  IZWI_CHECK(block_size > 0, "block_size {} must be positive", block_size);
}

std::vector<RadixNode*> RadixTree::match(const int32_t* tokens, int32_t max_blocks) const {
  std::vector<RadixNode*> path;
  const RadixNode* node = &root_;
  std::vector<int32_t> key(static_cast<size_t>(block_size_));
  for (int32_t b = 0; b < max_blocks; ++b) {
    key.assign(tokens + static_cast<ptrdiff_t>(b) * block_size_, tokens + static_cast<ptrdiff_t>(b + 1) * block_size_);
    auto it = node->children.find(key);
    if (it == node->children.end()) break;
    node = it->second.get();
    path.push_back(const_cast<RadixNode*>(node));
  }
  return path;
}

RadixNode* RadixTree::insert(RadixNode* parent, const int32_t* chunk, int32_t block, bool* inserted) {
  RadixNode* p = parent == nullptr ? &root_ : parent;
  std::vector<int32_t> key(chunk, chunk + block_size_);
  auto it = p->children.find(key);
  if (it != p->children.end()) {
    *inserted = false;
    return it->second.get();
  }
  if (is_evictable_leaf(p)) evictable_leaves_.erase({p->last_access, p});
  auto node = std::make_unique<RadixNode>();
  node->tokens = key;
  node->block = block;
  node->hash = block_hash(p == &root_ ? kRootBlockHash : p->hash, chunk, block_size_);
  node->parent = p;
  node->last_access = ++clock_;
  RadixNode* raw = node.get();
  p->children.emplace(std::move(key), std::move(node));
  evictable_leaves_.insert({raw->last_access, raw});
  ++num_nodes_;
  ++unlocked_nodes_;
  events_.stored(parent_hash(*raw), raw->hash, raw->tokens);
  *inserted = true;
  return raw;
}

void RadixTree::lock(RadixNode* node) {
  if (node->lock_count == 0) {
    if (is_evictable_leaf(node)) evictable_leaves_.erase({node->last_access, node});
    --unlocked_nodes_;
  }
  ++node->lock_count;
  node->last_access = ++clock_;
}

void RadixTree::unlock(RadixNode* node) {
  IZWI_CHECK(node->lock_count > 0, "unlock of node (block {}) below zero", node->block);
  --node->lock_count;
  node->last_access = ++clock_;
  if (node->lock_count == 0) {
    ++unlocked_nodes_;
    if (node->children.empty()) evictable_leaves_.insert({node->last_access, node});
  }
}

std::vector<int32_t> RadixTree::evict(int32_t n) {
  std::vector<int32_t> freed;
  while (static_cast<int32_t>(freed.size()) < n && !evictable_leaves_.empty()) {
    RadixNode* leaf = evictable_leaves_.begin()->second;
    evictable_leaves_.erase(evictable_leaves_.begin());
    freed.push_back(leaf->block);
    events_.removed(leaf->hash);
    RadixNode* parent = leaf->parent;
    parent->children.erase(leaf->tokens);  // destroys leaf
    --num_nodes_;
    --unlocked_nodes_;
    if (is_evictable_leaf(parent)) evictable_leaves_.insert({parent->last_access, parent});
  }
  return freed;
}

void RadixTree::for_each_node(const std::function<void(const RadixNode&)>& visit) const {
  std::vector<const RadixNode*> stack{&root_};
  while (!stack.empty()) {
    const RadixNode* node = stack.back();
    stack.pop_back();
    if (node != &root_) visit(*node);
    for (const auto& [key, child] : node->children) stack.push_back(child.get());
  }
}

std::vector<uint64_t> RadixTree::block_hashes() const {
  std::vector<uint64_t> hashes;
  hashes.reserve(static_cast<size_t>(num_nodes_));
  for_each_node([&](const RadixNode& node) { hashes.push_back(node.hash); });
  std::sort(hashes.begin(), hashes.end());
  return hashes;
}

void RadixTree::record_events(bool on) {
  if (on == events_.enabled()) return;
  events_.set_enabled(on);
  if (!on || num_nodes_ == 0) return;
  events_.cleared();
  for_each_node([&](const RadixNode& node) { events_.stored(parent_hash(node), node.hash, node.tokens); });
}

std::optional<uint64_t> RadixTree::parent_hash(const RadixNode& node) const {
  if (node.parent == &root_) return std::nullopt;
  return node.parent->hash;
}

bool RadixTree::is_evictable_leaf(const RadixNode* node) const {
  return node != &root_ && node->lock_count == 0 && node->children.empty();
}

}  // namespace izwi
