#include "executor/torch_executor.h"

#include <ATen/Context.h>
#include <c10/core/InferenceMode.h>

#include "common/check.h"
#include "common/logging.h"
#include "common/op_profile.h"
#include "executor/cuda_decode_graphs.h"
#include "executor/graph_capture_failed.h"
#include "layers/index_tensor.h"

namespace izwi {

TorchExecutor::TorchExecutor(std::unique_ptr<CausalLM> model, std::shared_ptr<const Backend> backend)
    : backend_(std::move(backend)), model_(std::move(model)) {
  IZWI_CHECK(backend_ != nullptr, "TorchExecutor needs a backend");
}

TorchExecutor::~TorchExecutor() = default;

void TorchExecutor::allocate_cache(int32_t num_blocks, int32_t block_size, int32_t num_state_slots) {
  // CUDA graphs pad their batches with sequences that write one block and one state slot beyond
  // what the engine manages.
  IZWI_CHECK(!(spec().graph_safe_decode && spec().graph_safe_decode_from_embeddings),
             "{}: a spec is graph-safe from its tokens or from its embeddings, not both", spec().model_type);
  const bool graphs =
      backend_->max_graph_batch() > 0 && (spec().graph_safe_decode || spec().graph_safe_decode_from_embeddings);
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
    settings.from_embeddings = spec().graph_safe_decode_from_embeddings;
    graphs_ = make_cuda_decode_graphs(settings);
  }
#endif
}

TorchExecutor::Forwarded TorchExecutor::forward(const StepBatch& batch) {
  IZWI_CHECK(cache_ != nullptr, "allocate_cache() must run before execute()");
  for (const BlockCopy& copy : batch.block_copies) cache_->copy_block(copy.src, copy.dst);
  const OpTimer timer(ProfiledOp::Forward, batch.num_tokens());
#if IZWI_WITH_CUDA
  if (graphs_ != nullptr && graphs_->replays(batch)) {
    try {
      const OpTimer replay(ProfiledOp::GraphReplay, batch.num_tokens());
      auto [ctx, out] = graphs_->run(batch, *model_, *cache_);
      // From embeddings the graph ends at the hidden states: the model's own head samples them.
      if (spec().graph_safe_decode_from_embeddings) return {std::move(ctx), std::move(out), at::Tensor()};
      return {std::move(ctx), at::Tensor(), std::move(out)};
    } catch (const GraphCaptureFailed& e) {
      // Nothing of the step has run (a capture writes only the padding block and slot).
      logger()->warn("{}: {}; decode steps run without CUDA graphs from now on", spec().model_type, e.what());
      graphs_.reset();
    }
  }
#endif
  ForwardContext ctx = make_forward_context(batch, cache_->block_size(), *backend_);
  at::Tensor hidden = model_->forward(ctx, *cache_);
  return {std::move(ctx), std::move(hidden), at::Tensor()};
}

TorchExecutor::PromptScores TorchExecutor::prompt_scores(const StepBatch& batch) {
  PromptScores scores;
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
        scores.rows.push_back(offset + i);
        scores.targets.push_back(s.token_ids[i + 1]);
        scores.top.push_back(s.scoring->prompt_logprobs);
        scores.owners.push_back(s.scoring);
      }
    }
    offset += s.num_tokens;
  }
  return scores;
}

namespace {

// Rows 0..n-1 are a narrow of the step's output, which needs no index on the device.
bool leading_rows(const std::vector<int64_t>& rows) {
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// The first `count` rows of `out`, or those `index` names.
at::Tensor pick_rows(const at::Tensor& out, int64_t count, const at::Tensor& index) {
  return index.defined() ? out.index_select(0, index) : out.narrow(0, 0, count);
}

}  // namespace

at::Tensor TorchExecutor::logits_of(const Forwarded& step, int64_t count, const at::Tensor& index) const {
  if (step.logits.defined()) return pick_rows(step.logits, count, index);
  return model_->logits(pick_rows(step.hidden, count, index), step.ctx);
}

std::vector<StepOutput> TorchExecutor::execute(const StepBatch& batch) {
  c10::InferenceMode guard;
  const Forwarded step = forward(batch);
  const PromptScores scores = prompt_scores(batch);
  std::vector<int64_t> last_rows;
  std::vector<SampleRow> rows;
  int64_t offset = 0;
  for (const StepSequence& s : batch.seqs) {
    offset += s.num_tokens;
    if (s.sampling == nullptr) continue;
    last_rows.push_back(offset - 1);
    rows.push_back(SampleRow{s.sampling, s.state});
  }
  // The row indices the head needs go up in one pinned copy that does not wait for the device
  // (none for a decode step, whose rows are leading: a narrow).
  const bool score_leading = leading_rows(scores.rows), sample_leading = leading_rows(last_rows);
  std::vector<const std::vector<int64_t>*> lists;
  if (!score_leading) lists.push_back(&scores.rows);
  if (!sample_leading) lists.push_back(&last_rows);
  const std::vector<at::Tensor> uploaded =
      lists.empty() ? std::vector<at::Tensor>{} : index_tensors(lists, backend_->device());
  const at::Tensor score_index = score_leading ? at::Tensor() : uploaded.front();
  const at::Tensor sample_index = sample_leading ? at::Tensor() : uploaded.back();
  if (!scores.rows.empty()) {
    std::vector<TokenLogprob> records =
        pick_logprobs(log_softmax_rows(logits_of(step, static_cast<int64_t>(scores.rows.size()), score_index)),
                      scores.targets, scores.top);
    for (size_t i = 0; i < records.size(); ++i) scores.owners[i]->prompt_logprobs_out.push_back(std::move(records[i]));
  }
  if (rows.empty()) return {};
  const OpTimer timer(ProfiledOp::Sample, static_cast<int64_t>(rows.size()));
  const int64_t count = static_cast<int64_t>(rows.size());
  // A graph ran the default head's logits (spec().graph_safe_decode): only its draw is left.
  if (step.logits.defined())
    return sample_tokens(pick_rows(step.logits, count, sample_index), rows, *backend_, sampler_);
  return model_->sample(pick_rows(step.hidden, count, sample_index), rows, step.ctx, *cache_, sampler_);
}

at::Tensor TorchExecutor::execute_logits(const StepBatch& batch) {
  c10::InferenceMode guard;
  const Forwarded step = forward(batch);
  // A graph's logits hold padding rows after the batch's own.
  return logits_of(step, batch.num_tokens(), at::Tensor()).to(at::kCPU, at::kFloat).contiguous();
}

}  // namespace izwi
