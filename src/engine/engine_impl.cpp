#include "engine/engine_impl.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <filesystem>
#include <future>

#include "common/check.h"
#include "common/json_fields.h"
#include "common/logging.h"
#include "executor/torch_executor.h"
#include "io/hf_config.h"
#include "io/weight_loader.h"
#include "models/model_registry.h"

namespace izwi::detail {

namespace {

// EOS ids from config.json, extended by generation_config.json when the folder has one.
std::vector<int32_t> collect_eos_ids(const std::string& model_dir, std::vector<int32_t> ids) {
  const std::string path = (std::filesystem::path(model_dir) / "generation_config.json").string();
  if (std::filesystem::exists(path)) {
    const nlohmann::json doc = read_json_file(path);
    for (int32_t id : read_token_ids(JsonFields(doc, path), "eos_token_id")) {
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
  }
  return ids;
}

}  // namespace

EngineImpl::EngineImpl(const std::string& model_dir, const EngineConfig& config) : config_(config) {
  config_.validate();
  set_log_level(config_.log_level);
  TorchExecutorOptions options;
  options.device = parse_device(config_.device);
  options.dtype = parse_dtype(config_.dtype);
  const at::ScalarType weight_dtype =
      config_.weight_dtype == "auto" ? options.dtype : parse_dtype(config_.weight_dtype, "weight_dtype");
  options.fast_kernels = config_.use_fast_kernels;
  // libtorch's intra-op pool is process-wide; it defaults to one thread in Debian's build.
  const int threads = config_.num_threads > 0 ? config_.num_threads
                                              : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(threads);

  std::unique_ptr<CausalLM> model = load_causal_lm(model_dir, options.dtype, weight_dtype, options.device);
  const ModelSpec& spec = model->spec();
  if (config_.max_seq_len > spec.max_positions) {
    fail(ErrorCode::InvalidArgument, "EngineConfig.max_seq_len {} exceeds the model's max_position_embeddings {}",
         config_.max_seq_len, spec.max_positions);
  }
  info_.model_type = spec.model_type;
  info_.vocab_size = spec.vocab_size;
  info_.max_positions = config_.max_seq_len > 0 ? config_.max_seq_len : spec.max_positions;
  info_.eos_token_ids = collect_eos_ids(model_dir, spec.eos_token_ids);
  info_.bos_token_id = spec.bos_token_id;
  info_.decode_weight_bytes = spec.decode_weight_bytes;
  limits_.vocab_size = spec.vocab_size;
  limits_.max_seq_len = info_.max_positions;
  limits_.block_size = config_.block_size;
  limits_.num_kv_blocks = config_.num_kv_blocks;

  auto executor = std::make_unique<TorchExecutor>(std::move(model), options);
  core_ = std::make_unique<EngineCore>(std::move(executor), config_, metrics_, [this](const std::string& id) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_ids_.erase(id);
  });
  worker_ = std::thread(&EngineImpl::worker_loop, this);
  logger()->info("engine ready: {} ({} threads, {} KV blocks of {})", model_dir, threads, config_.num_kv_blocks,
                 config_.block_size);
}

EngineImpl::~EngineImpl() { shutdown(); }

std::shared_ptr<RequestChannel> EngineImpl::submit(const Request& request, RequestChannel::Mode mode,
                                                   RequestChannel::Callback callback) {
  Request r = request;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!accepting_) fail(ErrorCode::Aborted, "the engine is shut down");
    if (r.id.empty()) r.id = "req-" + std::to_string(next_request_number_++);
  }
  validate_request(r, limits_);

  auto active = std::make_unique<ActiveRequest>();
  active->id = r.id;
  active->params = r.params;
  active->eos_ids = info_.eos_token_ids;
  active->seq.priority = r.priority;
  active->seq.tokens = r.prompt_ids;
  active->seq.prompt_len = static_cast<int32_t>(r.prompt_ids.size());
  active->sampling = make_sampling_state(r.params, info_.eos_token_ids);
  active->channel = std::make_shared<RequestChannel>(r.id, mode, std::move(callback));
  active->submitted = Clock::now();
  std::shared_ptr<RequestChannel> channel = active->channel;

  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!accepting_) fail(ErrorCode::Aborted, "the engine is shut down");
    if (!live_ids_.insert(r.id).second) {
      fail(ErrorCode::InvalidArgument, "request id '{}' is already in use by a live request", r.id);
    }
    commands_.push_back(Command{Command::Kind::Add, std::move(active), r.id, {}});
  }
  wake_.notify_one();
  return channel;
}

bool EngineImpl::abort(const std::string& request_id) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (live_ids_.count(request_id) == 0) return false;
    commands_.push_back(Command{Command::Kind::Abort, nullptr, request_id, {}});
  }
  wake_.notify_one();
  return true;
}

int32_t EngineImpl::pending_requests() {
  const int32_t running = metrics_.snapshot().running_requests;
  std::lock_guard<std::mutex> lock(mutex_);
  return std::max<int32_t>(0, static_cast<int32_t>(live_ids_.size()) - running);
}

void EngineImpl::run_on_worker(const std::function<void(EngineCore&)>& fn) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> result = done->get_future();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!accepting_) fail(ErrorCode::Aborted, "the engine is shut down");
    commands_.push_back(Command{Command::Kind::Call, nullptr, {}, [fn, done](EngineCore& core) {
                                  try {
                                    fn(core);
                                    done->set_value();
                                  } catch (...) {
                                    done->set_exception(std::current_exception());
                                  }
                                }});
  }
  wake_.notify_one();
  result.get();
}

void EngineImpl::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (accepting_) {
      accepting_ = false;
      commands_.push_back(Command{Command::Kind::Shutdown, nullptr, {}, {}});
    }
  }
  wake_.notify_one();
  if (worker_.joinable() && std::this_thread::get_id() != worker_.get_id()) worker_.join();
}

void EngineImpl::worker_loop() {
  bool wait_for_command = false;  // the last step found nothing to do
  while (true) {
    std::vector<Command> batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return !commands_.empty() || (core_->has_unfinished() && !wait_for_command); });
      batch.swap(commands_);
    }
    for (Command& command : batch) {
      switch (command.kind) {
        case Command::Kind::Add: core_->add(std::move(command.request)); break;
        case Command::Kind::Abort: core_->abort(command.request_id); break;
        case Command::Kind::Call: command.call(*core_); break;
        case Command::Kind::Shutdown: core_->abort_all(); return;
      }
    }
    if (!batch.empty()) wait_for_command = false;
    if (!core_->has_unfinished()) continue;
    try {
      wait_for_command = !core_->step();
    } catch (const std::exception& e) {
      logger()->error("engine step failed: {}", e.what());
      core_->fail_all(Error(ErrorCode::Internal, std::string("engine step failed: ") + e.what()));
    }
  }
}

}  // namespace izwi::detail
