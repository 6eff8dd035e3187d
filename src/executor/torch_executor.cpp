#include "executor/torch_executor.h"

#include <ATen/Context.h>
#include <c10/core/InferenceMode.h>

#include "common/check.h"
#include "common/op_profile.h"
#include "executor/cuda_decode_graphs.h"

namespace izwi {

TorchExecutor::TorchExecutor(std::unique_ptr<CausalLM> model, std::shared_ptr<const Backend> backend)
    : backend_(std::move(backend)), model_(std::move(model)) {
  IZWI_CHECK(backend_ != nullptr, "TorchExecutor needs a backend");
}

TorchExecutor::~TorchExecutor() = default;

void TorchExecutor::allocate_cache(int32_t num_blocks, int32_t block_size, int32_t num_state_slots) {
  // CUDA graphs pad their batches with sequences that write one block and one state slot beyond
  // what the engine manages.
  const bool graphs = backend_->max_graph_batch() > 0 && spec().graph_safe_decode;
  const int32_t extra = graphs ? 1 : 0;
  graphs_.reset();
  try {
    cache_ = std::make_unique<CacheBuffers>(model_->cache_layout(), num_blocks + extra, block_size,
                                            num_state_slots + (num_state_slots > 0 ? extra : 0), backend_->options(),
                                            backend_->kv_dtype());
  } catch (const c10::Error& e) {
    fail(ErrorCode::ResourceExhausted, "cannot allocate {} KV blocks of {} positions on {}: {}", num_blocks, block_size,
         backend_->device().str(), e.what_without_backtrace());
  }
#if IZWI_WITH_CUDA
  if (graphs) {
    DecodeGraphSettings settings;
    settings.backend = backend_;
    settings.block_size = block_size;
    settings.max_table_stride = (spec().max_positions + block_size - 1) / block_size;
    settings.max_bucket = backend_->max_graph_batch();
    settings.padding = DecodeGraphPadding{num_blocks, num_state_slots > 0 ? num_state_slots : -1};
    graphs_ = make_cuda_decode_graphs(settings);
  }
#endif
}

std::pair<ForwardContext, at::Tensor> TorchExecutor::forward(const StepBatch& batch) {
  IZWI_CHECK(cache_ != nullptr, "allocate_cache() must run before execute()");
  for (const BlockCopy& copy : batch.block_copies) cache_->copy_block(copy.src, copy.dst);
  const OpTimer timer(ProfiledOp::Forward, batch.num_tokens());
#if IZWI_WITH_CUDA
  if (graphs_ != nullptr && graphs_->replays(batch)) {
    const OpTimer replay(ProfiledOp::GraphReplay, batch.num_tokens());
    return graphs_->run(batch, *model_, *cache_);
  }
#endif
  ForwardContext ctx = make_forward_context(batch, cache_->block_size(), *backend_);
  at::Tensor hidden = model_->forward(ctx, *cache_);
  return {std::move(ctx), std::move(hidden)};
}

void TorchExecutor::score_prompts(const StepBatch& batch, const ForwardContext& ctx, const at::Tensor& hidden) {
  std::vector<int64_t> rows;
  std::vector<int32_t> targets, top;
  std::vector<SamplingState*> owners;
  int64_t offset = 0;
  for (const StepSequence& s : batch.seqs) {
    if (s.scoring != nullptr) {
      // Row i (position p) predicts the token at p + 1; positions scored before (a recompute after
      // preemption) are skipped, so each prompt token is recorded once.
      int32_t next = static_cast<int32_t>(s.scoring->prompt_logprobs_out.size());
      for (int32_t i = 0; i < s.num_tokens; ++i) {
        const int32_t p = s.start_pos + i;
        if (p < next || p + 1 >= s.prompt_len) continue;
        IZWI_CHECK(p == next, "prompt logprobs: position {} computed before position {}", p, next);
        ++next;
        rows.push_back(offset + i);
        targets.push_back(s.token_ids[i + 1]);
        top.push_back(s.scoring->prompt_logprobs);
        owners.push_back(s.scoring);
      }
    }
    offset += s.num_tokens;
  }
  if (rows.empty()) return;
  const at::Tensor index = at::tensor(rows, at::TensorOptions().dtype(at::kLong)).to(backend_->device());
  std::vector<TokenLogprob> records =
      pick_logprobs(log_softmax_rows(model_->logits(hidden.index_select(0, index), ctx)), targets, top);
  for (size_t i = 0; i < records.size(); ++i) owners[i]->prompt_logprobs_out.push_back(std::move(records[i]));
}

std::vector<StepOutput> TorchExecutor::execute(const StepBatch& batch) {
  c10::InferenceMode guard;
  const auto [ctx, hidden] = forward(batch);
  score_prompts(batch, ctx, hidden);
  std::vector<int64_t> last_rows;
  std::vector<SampleRow> rows;
  int64_t offset = 0;
  for (const StepSequence& s : batch.seqs) {
    offset += s.num_tokens;
    if (s.sampling == nullptr) continue;
    last_rows.push_back(offset - 1);
    rows.push_back(SampleRow{s.sampling, s.state});
  }
  if (rows.empty()) return {};
  const OpTimer timer(ProfiledOp::Sample, static_cast<int64_t>(rows.size()));
  at::Tensor index = at::tensor(last_rows, at::TensorOptions().dtype(at::kLong)).to(backend_->device());
  return model_->sample(hidden.index_select(0, index), rows, ctx, *cache_, sampler_);
}

at::Tensor TorchExecutor::execute_logits(const StepBatch& batch) {
  c10::InferenceMode guard;
  const auto [ctx, hidden] = forward(batch);
  // A graph's hidden states hold padding rows after the batch's own.
  return model_->logits(hidden.narrow(0, 0, batch.num_tokens()), ctx).to(at::kCPU, at::kFloat).contiguous();
}

}  // namespace izwi
