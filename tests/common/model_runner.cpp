#include "common/model_runner.h"

#include <ATen/Parallel.h>

#include <stdexcept>

#include "common/reference.h"
#include "common/test_device.h"
#include "models/model_registry.h"

namespace izwi::testing {

ModelRunner::ModelRunner(const std::string& fixture, bool fast_kernels, bool prefix_cache, int32_t num_blocks,
                         int32_t block_size, at::ScalarType kv_dtype, const std::string& weight_dtype,
                         const std::string& dtype)
    : cache_(num_blocks, block_size, prefix_cache, 8) {
  BackendOptions options;
  options.device = test_device().str();
  options.dtype = dtype;
  options.weight_dtype = weight_dtype;
  options.kv_cache_dtype = kv_dtype == at::kBFloat16 ? "bfloat16" : "float32";
  options.fast_kernels = fast_kernels;
  options.threads = at::get_num_threads();  // as the test binary has it
  const auto backend = std::make_shared<const Backend>(options);
  const std::string dir = fixture.front() == '/' ? fixture : fixture_dir(fixture);
  executor_ = std::make_unique<TorchExecutor>(load_causal_lm(dir, backend), backend);
  executor_->allocate_cache(num_blocks, block_size, 8);
}

StepBatch ModelRunner::batch_of(const std::vector<FeedRequest>& requests) {
  StepBatch batch;
  for (const FeedRequest& r : requests) {
    if (!cache_.allocate(r.seq, r.start, r.start + r.count, nullptr, &batch.block_copies)) {
      throw std::runtime_error("ModelRunner: KV pool too small");
    }
    StepSequence s;
    s.seq_id = r.seq;
    s.start_pos = r.start;
    s.num_tokens = r.count;
    s.token_ids = r.tokens->data() + r.start;
    s.block_table = &cache_.block_table(r.seq);
    s.state_slot = cache_.state_slot(r.seq);
    s.fresh_state = started_.insert(r.seq).second;
    auto restore = restore_block_.find(r.seq);
    s.restore_block = restore == restore_block_.end() ? -1 : restore->second;
    s.state = r.state;
    s.sampling = r.sampling;
    batch.seqs.push_back(s);
  }
  return batch;
}

std::vector<StepOutput> ModelRunner::sample(const std::vector<FeedRequest>& requests) {
  return executor_->execute(batch_of(requests));
}

std::vector<at::Tensor> ModelRunner::feed(const std::vector<FeedRequest>& requests) {
  at::Tensor logits = executor_->execute_logits(batch_of(requests));
  std::vector<at::Tensor> out;
  int64_t offset = 0;
  for (const FeedRequest& r : requests) {
    out.push_back(logits.narrow(0, offset, r.count));
    offset += r.count;
  }
  return out;
}

at::Tensor ModelRunner::feed(uint64_t seq, const std::vector<int32_t>& tokens, int32_t start, int32_t count) {
  return feed({FeedRequest{seq, &tokens, start, count}})[0];
}

int32_t ModelRunner::start_with_prefix(uint64_t seq, const std::vector<int32_t>& tokens) {
  PrefixMatch match = cache_.match_prefix(tokens);
  std::vector<BlockCopy> copies;
  if (!cache_.allocate(seq, match.num_tokens, match.num_tokens, &match, &copies)) {
    throw std::runtime_error("ModelRunner: cannot adopt prefix");
  }
  restore_block_[seq] = match.last_block();
  return match.num_tokens;
}

void ModelRunner::commit(uint64_t seq, const std::vector<int32_t>& tokens, int32_t computed) {
  cache_.commit(seq, tokens, computed);
}

void ModelRunner::free(uint64_t seq) {
  cache_.free(seq);
  started_.erase(seq);
  restore_block_.erase(seq);
}

at::Tensor teacher_forced_logits(ModelRunner& runner, const std::vector<int32_t>& tokens) {
  static uint64_t next_seq = 1u << 30;
  const uint64_t seq = next_seq++;
  at::Tensor logits = runner.feed(seq, tokens, 0, static_cast<int32_t>(tokens.size()));
  runner.free(seq);
  return logits;
}

}  // namespace izwi::testing
