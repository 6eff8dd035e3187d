#include "engine/engine_impl.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <limits>
#include <utility>

#include "common/check.h"
#include "common/json_fields.h"
#include "common/logging.h"
#include "common/retain_freed_memory.h"
#include "executor/executor_factory.h"

namespace izwi::detail {

namespace {

// EngineConfig::kv_cache_memory_fraction of the memory left after the weights, in whole blocks.
int32_t kv_blocks_in_free_memory(const CausalLM& model, const EngineConfig& config, const Backend& backend) {
  const int64_t available = backend.available_memory_bytes();
  const int64_t block_bytes =
      CacheBuffers::block_bytes(model.cache_layout(), config.block_size, backend.dtype(), backend.kv_dtype());
  const auto budget = static_cast<int64_t>(static_cast<double>(available) * config.kv_cache_memory_fraction);
  const int64_t blocks = block_bytes > 0 ? budget / block_bytes : INT32_MAX;
  if (blocks < 1) {
    fail(ErrorCode::ResourceExhausted,
         "EngineConfig.kv_cache_memory_fraction {} of the {} bytes free on {} is less than one KV block ({} bytes)",
         config.kv_cache_memory_fraction, available, backend.device().str(), block_bytes);
  }
  // Positions in the pool are int32 (EngineConfig::validate).
  return static_cast<int32_t>(std::min<int64_t>(blocks, INT32_MAX / config.block_size));
}

void add_unique(std::vector<int32_t>& ids, const std::vector<int32_t>& more) {
  for (int32_t id : more) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
}

std::optional<Tokenizer> load_tokenizer(const std::string& model_dir) {
  const std::filesystem::path dir(model_dir);
  if (!std::filesystem::exists(dir / "tokenizer.json") && !std::filesystem::exists(dir / "tekken.json") &&
      !std::filesystem::exists(dir / "vocab.json")) {
    return std::nullopt;
  }
  return Tokenizer::from_dir(model_dir);
}

constexpr const char* kStreamingPadToken = "[STREAMING_PAD]";
constexpr int32_t kMaxDelayTokens = 512;  ///< 41 s of delay; the released model uses 6.

}  // namespace

namespace {
// The engine whose worker loop runs on this thread (null on host threads).
thread_local const EngineImpl* current_worker = nullptr;
}  // namespace

std::shared_ptr<EngineImpl> EngineImpl::create(const std::string& model_dir, const EngineConfig& config) {
  auto engine = std::make_shared<EngineImpl>(config);
  engine->start(model_dir);
  return engine;
}

EngineImpl::EngineImpl(const EngineConfig& config) : config_(config) {
  config_.validate();
  set_log_level(config_.log_level);
}

void EngineImpl::start(const std::string& model_dir) {
  // The model loads on the worker thread so that all of the engine's libtorch work starts OpenMP
  // regions from that one thread. libgomp keeps a thread pool per thread that starts parallel work,
  // and once it manages more threads than there are cores it stops spinning between regions: every
  // kernel then waits for a futex wake-up (a fifth of the decode speed on 2 cores, docs/benchmarks.md).
  std::promise<void> loaded;
  std::future<void> ready = loaded.get_future();
  // The worker keeps the engine alive while its loop runs: a callback that drops the last Engine
  // only asks the loop to stop, and the engine is freed on the worker once the loop has returned.
  worker_ = std::thread([self = shared_from_this(), model_dir, loaded = std::move(loaded)]() mutable {
    current_worker = self.get();
    try {
      self->load(model_dir);
    } catch (...) {
      loaded.set_exception(std::current_exception());
      return;
    }
    loaded.set_value();
    self->worker_loop();
  });
  try {
    ready.get();
  } catch (...) {
    worker_.join();
    throw;
  }
}

bool EngineImpl::on_worker_thread() const { return current_worker == this; }

void EngineImpl::check_not_on_worker(const char* what) const {
  if (on_worker_thread()) {
    fail(ErrorCode::InvalidArgument,
         "{} called from a stream callback (the engine's worker thread): this would deadlock; "
         "use generate_streaming, abort or metrics there, or hand the work to another thread",
         what);
  }
}

void EngineImpl::load(const std::string& model_dir) {
  LoadedExecutor loaded = make_executor(model_dir, config_);
  // After the load: its temporaries (float32 copies of tables being packed, converted tensors) are
  // not the shape of a step's, and kept in the heap between the weights they only raise the peak.
  if (config_.retain_freed_memory && retain_freed_memory()) logger()->debug("malloc keeps freed memory for reuse");
  const Backend& backend = *loaded.backend;
  const CausalLM& model = loaded.executor->model();
  const ModelSpec& spec = model.spec();
  capabilities_ = model.capabilities();
  if (config_.max_seq_len > spec.max_positions) {
    fail(ErrorCode::InvalidArgument, "EngineConfig.max_seq_len {} exceeds the model's max_position_embeddings {}",
         config_.max_seq_len, spec.max_positions);
  }
  info_.model_type = spec.model_type;
  info_.vocab_size = spec.vocab_size;
  info_.max_positions = config_.max_seq_len > 0 ? config_.max_seq_len : spec.max_positions;
  info_.eos_token_ids = loaded.eos_token_ids;
  tokenizer_ = load_tokenizer(model_dir);
  if (tokenizer_ && capabilities_.speech == nullptr) {
    // tokenizer_config.json's eos_token ends chat turns (e.g. <|im_end|>) even where config.json names another.
    std::vector<int32_t> in_vocab;
    for (int32_t id : tokenizer_->eos_ids()) {
      if (id < spec.vocab_size) in_vocab.push_back(id);
    }
    add_unique(info_.eos_token_ids, in_vocab);
  }
  info_.has_tokenizer = tokenizer_.has_value();
  constraints_ = std::make_unique<structured::ConstraintFactory>(tokenizer(), spec.vocab_size, info_.eos_token_ids);
  info_.bos_token_id = spec.bos_token_id;
  info_.decode_weight_bytes = spec.decode_weight_bytes;
  info_.weight_bytes = spec.weight_bytes;
  info_.accepts_audio = capabilities_.transcriber != nullptr;
  info_.audio_sample_rate = spec.audio_sample_rate;
  info_.produces_audio = capabilities_.speech != nullptr;
  info_.output_sample_rate = spec.output_sample_rate;
  info_.num_codebooks = spec.num_codebooks;
  info_.speakers = spec.speakers;
  info_.languages = spec.languages;
  info_.clones_voices = capabilities_.voice_cloner != nullptr;
  info_.audio_chat = capabilities_.audio_chat != nullptr;
  info_.default_sampling = spec.default_sampling;
  info_.default_codebook_sampling = spec.default_codebook_sampling;
  if (config_.kv_cache_memory_fraction > 0) {
    config_.num_kv_blocks = kv_blocks_in_free_memory(model, config_, backend);
  }
  info_.kv_cache_blocks = config_.num_kv_blocks;
  info_.kv_cache_bytes =
      static_cast<int64_t>(config_.num_kv_blocks) *
      CacheBuffers::block_bytes(model.cache_layout(), config_.block_size, backend.dtype(), backend.kv_dtype());
  model_ = &model;
  limits_.vocab_size = spec.vocab_size;
  limits_.has_tokenizer = tokenizer_.has_value();
  limits_.max_seq_len = info_.max_positions;
  limits_.block_size = config_.block_size;
  limits_.num_kv_blocks = config_.num_kv_blocks;

  core_ = std::make_unique<EngineCore>(std::move(loaded.executor), config_, metrics_, [this](const std::string& id) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_ids_.erase(live_ids_.find(id));
  });
  logger()->info("engine ready: {} ({} threads, {} kernels, {} KV blocks of {})", model_dir, at::get_num_threads(),
                 backend.kernels_name(), config_.num_kv_blocks, config_.block_size);
}

EngineImpl::~EngineImpl() {
  shutdown();
  // Only the worker itself can drop the last reference while it runs (after its loop returned):
  // a thread cannot join itself, and nothing of the engine is touched after this.
  if (worker_.joinable()) worker_.detach();
}

std::string EngineImpl::next_id() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!accepting_) fail(ErrorCode::Aborted, "the engine is shut down");
  return "req-" + std::to_string(next_request_number_++);
}

void EngineImpl::enqueue(std::unique_ptr<ActiveRequest> request) {
  std::vector<std::unique_ptr<ActiveRequest>> one;
  one.push_back(std::move(request));
  enqueue_choices(std::move(one));
}

void EngineImpl::enqueue_choices(std::vector<std::unique_ptr<ActiveRequest>> choices) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!accepting_) fail(ErrorCode::Aborted, "the engine is shut down");
    const std::string id = choices.at(0)->id;
    if (live_ids_.count(id) != 0) {
      fail(ErrorCode::InvalidArgument, "request id '{}' is already in use by a live request", id);
    }
    for (size_t i = 0; i < choices.size(); ++i) live_ids_.insert(id);
    // One drain adds them all, choice 0 first: the others find it live and wait for its prefill.
    for (auto& choice : choices) commands_.push_back(Command{Command::Kind::Add, std::move(choice), id, {}, {}});
  }
  wake_.notify_one();
}

void EngineImpl::enqueue_command(Command command) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!accepting_) return;  // shutting down: the request is being aborted anyway
    commands_.push_back(std::move(command));
  }
  wake_.notify_one();
}

std::unique_ptr<ActiveRequest> EngineImpl::make_active_request(const Request& r,
                                                               std::shared_ptr<RequestChannel> channel) const {
  auto active = std::make_unique<ActiveRequest>();
  active->id = r.id;
  active->params = r.params;
  active->eos_ids = info_.eos_token_ids;
  active->seq.priority = r.priority;
  active->seq.tokens = r.prompt_ids;
  active->seq.prompt_len = static_cast<int32_t>(r.prompt_ids.size());
  active->sampling = make_sampling_state(r.params, info_.default_sampling, info_.eos_token_ids);
  active->sampling.constraint = constraints_->make(r.params, r.id);  // null unless structured_output asks
  active->channel = std::move(channel);
  if (tokenizer_) active->text = std::make_unique<TextStream>(*tokenizer_, r.params.stop);
  active->submitted = Clock::now();
  return active;
}

template <class Interface>
const Interface& EngineImpl::require(const Interface* capability, const char* refusal) const {
  if (capability == nullptr) {
    fail(ErrorCode::Unsupported, "model_type '{}' is {}{}", info_.model_type, describe_model_kind(info_), refusal);
  }
  return *capability;
}

std::shared_ptr<RequestChannel> EngineImpl::submit(const Request& request, RequestChannel::Mode mode,
                                                   RequestChannel::Callback callback) {
  // A speech model's sequences are codec frames that need its speech prompt (synthesize).
  if (info_.produces_audio) {
    fail(ErrorCode::Unsupported, "model_type '{}' is {}: generate takes text models; use synthesize", info_.model_type,
         describe_model_kind(info_));
  }
  Request r = request;
  if (r.id.empty()) r.id = next_id();
  resolve_prompt(r, tokenizer());
  validate_request(r, limits_);
  auto channel = std::make_shared<RequestChannel>(r.id, mode, std::move(callback), r.params.n);
  std::vector<std::unique_ptr<ActiveRequest>> choices;
  for (int32_t i = 0; i < r.params.n; ++i) {
    // Each choice its own random stream: seed + i (wrapping), or a fresh random seed each.
    Request choice = r;
    if (r.params.seed) choice.params.seed = *r.params.seed + static_cast<uint64_t>(i);
    choices.push_back(make_active_request(choice, channel));
    choices.back()->choice = i;
  }
  enqueue_choices(std::move(choices));
  return channel;
}

std::shared_ptr<RequestChannel> EngineImpl::submit_transcription(const TranscriptionOptions& options) {
  const Transcriber& transcriber = require(capabilities_.transcriber, ": it does not transcribe audio");
  // Every option is checked before anything is sized from it: the prompt holds delay_tokens pads.
  if (options.delay_tokens < -1 || options.delay_tokens > kMaxDelayTokens) {
    fail(ErrorCode::InvalidArgument,
         "TranscriptionOptions.delay_tokens = {} must be -1 (the model's default) or in [0, {}]", options.delay_tokens,
         kMaxDelayTokens);
  }
  TranscriptionSettings settings;
  settings.delay_tokens = options.delay_tokens >= 0 ? options.delay_tokens : model_->spec().default_delay_tokens;
  if (settings.delay_tokens < 0 || settings.delay_tokens > kMaxDelayTokens) {
    fail(ErrorCode::InvalidArgument, "the model's default_num_delay_tokens = {} is outside [0, {}]",
         settings.delay_tokens, kMaxDelayTokens);
  }
  if (settings.delay_tokens + 1 > limits_.max_seq_len) {
    fail(ErrorCode::InvalidArgument,
         "TranscriptionOptions.delay_tokens = {}: the prompt of {} positions exceeds max_seq_len {}",
         settings.delay_tokens, settings.delay_tokens + 1, limits_.max_seq_len);
  }
  std::optional<int32_t> pad = options.pad_token_id;
  if (!pad && tokenizer_) pad = tokenizer_->token_to_id(kStreamingPadToken);
  if (!pad) {
    fail(ErrorCode::InvalidArgument, "TranscriptionOptions.pad_token_id is required: {}",
         tokenizer_ ? fmt::format("the model folder's tokenizer has no {} token", kStreamingPadToken)
                    : std::string("the model folder has no tokenizer to take it from"));
  }
  settings.pad_token_id = *pad;
  if (options.max_tokens_after_audio < 0) {
    fail(ErrorCode::InvalidArgument, "TranscriptionOptions.max_tokens_after_audio = {} must be >= 0",
         options.max_tokens_after_audio);
  }
  Request r;
  r.id = options.id.empty() ? next_id() : options.id;
  r.priority = options.priority;
  r.prompt_ids = transcriber.transcription_prompt(settings);
  r.params.sampling = options.sampling;
  r.params.seed = options.seed;
  r.params.max_tokens = limits_.max_seq_len - static_cast<int32_t>(r.prompt_ids.size());
  // A stream's length is unknown: only the prompt must fit now; a stream that outgrows the KV
  // pool fails with ResourceExhausted when it gets there.
  RequestLimits limits = limits_;
  limits.num_kv_blocks = std::numeric_limits<int32_t>::max();
  validate_request(r, limits, "TranscriptionOptions.sampling");

  std::unique_ptr<ActiveRequest> active =
      make_active_request(r, std::make_shared<RequestChannel>(r.id, RequestChannel::Mode::Stream));
  active->seq.cacheable_len = 0;  // positions carry audio, not just token ids
  active->state = transcriber.make_transcription_state(settings);
  active->continue_after_audio = options.continue_after_audio;
  active->max_positions_after_audio = options.max_tokens_after_audio;
  active->seq.input_limit = active->input_limit();
  std::shared_ptr<RequestChannel> channel = active->channel;
  enqueue(std::move(active));
  return channel;
}

std::shared_ptr<RequestChannel> EngineImpl::submit_audio_out(const AudioOutRequest& request,
                                                             const std::function<SpeechPrompt()>& resolve,
                                                             RequestChannel::Mode mode) {
  const std::string id = request.id.empty() ? next_id() : request.id;
  if (request.first_chunk_frames < 1 || request.chunk_frames < 1) {
    fail(ErrorCode::InvalidArgument, "{} '{}': first_chunk_frames = {} and chunk_frames = {} must be >= 1",
         request.what, id, request.first_chunk_frames, request.chunk_frames);
  }
  SpeechPrompt prompt;
  try {
    // The sampling is checked before the model does any work (audio chat encodes its audio).
    validate_sampling(request.sampling, request.sampling_field);
    validate_sampling_without_penalty(request.codebook_sampling, request.codebook_field);
    if (request.audio_chat) {
      // The text head's ids interleave with frame keys, which a penalty would misread as ids.
      validate_sampling_without_penalty(request.sampling, request.sampling_field);
    }
    prompt = resolve();
  } catch (const Error& e) {
    fail(e.code(), "{} '{}': {}", request.what, id, e.what());
  }
  IZWI_CHECK(prompt.codebook_sampling != nullptr, "the model's prompt has no per-frame sampling state");
  prompt.params.sampling = request.sampling;
  prompt.params.seed = request.seed;
  validate_params(id, prompt.params, static_cast<int32_t>(prompt.keys.size()), limits_);
  *prompt.codebook_sampling =
      make_codebook_sampling_state(request.codebook_sampling, info_.default_codebook_sampling, request.seed);
  Request r;
  r.id = id;
  r.priority = request.priority;
  r.params = prompt.params;
  r.prompt_ids = std::move(prompt.keys);
  std::unique_ptr<ActiveRequest> active = make_active_request(r, std::make_shared<RequestChannel>(r.id, mode));
  if (request.audio_chat) {
    active->audio_chat = true;  // text tokens and frames in one stream
  } else {
    active->text.reset();  // frames carry no text
    active->sampling.suppressed = model_->spec().suppressed_token_ids;
  }
  active->seq.cacheable_len = prompt.cacheable_positions.value_or(active->seq.prompt_len);
  active->sampling.history_begin = static_cast<size_t>(active->seq.prompt_len);  // penalty over generated ids only
  active->state = std::move(prompt.state);
  active->first_chunk_frames = request.first_chunk_frames;
  active->chunk_frames = request.chunk_frames;
  active->output_sample_rate = info_.output_sample_rate;
  std::shared_ptr<RequestChannel> channel = active->channel;
  enqueue(std::move(active));
  return channel;
}

std::shared_ptr<RequestChannel> EngineImpl::submit_speech(const SpeechRequest& request, RequestChannel::Mode mode) {
  const SpeechSynthesizer& synthesizer = require(capabilities_.speech, ", not a speech synthesis model");
  return submit_audio_out(
      {"speech request", request.id, request.priority, request.first_chunk_frames, request.chunk_frames, false,
       request.params.sampling, "SpeechParams.sampling", request.params.codebook_sampling,
       "SpeechParams.codebook_sampling", request.params.seed},
      [&] { return synthesizer.speech_prompt(request, tokenizer()); }, mode);
}

std::shared_ptr<RequestChannel> EngineImpl::submit_audio_chat(const AudioChatRequest& request,
                                                              RequestChannel::Mode mode) {
  const AudioChatter& chatter = require(capabilities_.audio_chat, ": it does not do audio chat");
  return submit_audio_out(
      {"audio chat request", request.id, request.priority, request.first_chunk_frames, request.chunk_frames, true,
       request.text_sampling, "AudioChatRequest.text_sampling", request.audio_sampling,
       "AudioChatRequest.audio_sampling", request.seed},
      [&] { return chatter.audio_chat_prompt(request, tokenizer()); }, mode);
}

Voice EngineImpl::create_voice(const std::vector<float>& samples, int32_t sample_rate,
                               const VoiceTranscript& transcript) const {
  return require(capabilities_.voice_cloner,
                 ": it does not clone voices (voice cloning needs a Qwen3-TTS Base model, which has a speaker encoder)")
      .create_voice(samples, sample_rate, transcript, tokenizer());
}

void EngineImpl::push_audio(const std::string& request_id, std::vector<float> samples) {
  Command command{Command::Kind::PushAudio, nullptr, request_id, {}, std::move(samples)};
  enqueue_command(std::move(command));
}

void EngineImpl::finish_audio(const std::string& request_id) {
  enqueue_command(Command{Command::Kind::FinishAudio, nullptr, request_id, {}, {}});
}

bool EngineImpl::abort(const std::string& request_id) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (live_ids_.count(request_id) == 0) return false;
    commands_.push_back(Command{Command::Kind::Abort, nullptr, request_id, {}, {}});
  }
  wake_.notify_one();
  return true;
}

int32_t EngineImpl::pending_requests() {
  const int32_t running = metrics_.snapshot().running_requests;
  std::lock_guard<std::mutex> lock(mutex_);
  return std::max<int32_t>(0, static_cast<int32_t>(live_ids_.size()) - running);
}

void EngineImpl::set_kv_event_listener(Engine::KvEventListener listener) {
  // A host thread waits until the worker has switched (listeners are adopted at the drain, before
  // commands), so the previous listener is done for good when this returns. The worker itself
  // cannot wait for its own drain, and a stopped worker never drains again.
  auto adopted = std::make_shared<std::promise<void>>();
  std::future<void> done = adopted->get_future();
  bool wait = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    new_kv_listener_ = listener ? std::make_shared<const Engine::KvEventListener>(std::move(listener)) : nullptr;
    kv_listener_changed_ = true;
    wait = accepting_ && !on_worker_thread();
    if (wait) {
      commands_.push_back(
          Command{Command::Kind::Call, nullptr, {}, [adopted](EngineCore&) { adopted->set_value(); }, {}});
    }
  }
  wake_.notify_one();
  if (wait) done.get();
}

std::vector<uint64_t> EngineImpl::kv_cached_block_hashes() {
  if (on_worker_thread()) return core_->cache().tree().block_hashes();
  auto hashes = std::make_shared<std::promise<std::vector<uint64_t>>>();
  std::future<std::vector<uint64_t>> result = hashes->get_future();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!accepting_) return {};  // the cache went away with the worker (AllBlocksCleared)
    commands_.push_back(Command{Command::Kind::Call,
                                nullptr,
                                {},
                                [hashes](EngineCore& core) { hashes->set_value(core.cache().tree().block_hashes()); },
                                {}});
  }
  wake_.notify_one();
  return result.get();
}

void EngineImpl::adopt_kv_listener(std::shared_ptr<const Engine::KvEventListener> listener) {
  // Off then on: a replaced listener also gets the cache as it is before any new event.
  core_->record_kv_events(false);
  kv_listener_ = std::move(listener);
  if (!kv_listener_) return;
  core_->record_kv_events(true);
  publish_kv_events();
}

void EngineImpl::publish_kv_events(bool closing) {
  if (!kv_listener_) return;
  KvEventBatch batch;
  batch.events = core_->take_kv_events();
  if (closing) batch.events.emplace_back(KvAllBlocksCleared{});
  if (batch.events.empty()) return;
  batch.timestamp = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  try {
    (*kv_listener_)(batch);
  } catch (const std::exception& e) {
    logger()->error("KV event listener failed, {} events dropped: {}", batch.events.size(), e.what());
  } catch (...) {
    logger()->error("KV event listener failed, {} events dropped", batch.events.size());
  }
}

void EngineImpl::run_on_worker(const std::function<void(EngineCore&)>& fn) {
  run_on_worker_until([&fn](EngineCore& core) {
    fn(core);
    return true;
  });
}

void EngineImpl::run_on_worker_until(const std::function<bool(EngineCore&)>& fn) {
  check_not_on_worker("run_on_worker");
  auto call = std::make_shared<RepeatedCall>();
  call->fn = fn;
  std::future<void> result = call->done.get_future();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!accepting_) fail(ErrorCode::Aborted, "the engine is shut down");
    commands_.push_back(repeated_call_command(call));
  }
  wake_.notify_one();
  result.get();
}

EngineImpl::Command EngineImpl::repeated_call_command(const std::shared_ptr<RepeatedCall>& call) {
  return Command{Command::Kind::Call,
                 nullptr,
                 {},
                 [this, call](EngineCore& core) {
                   try {
                     if (call->fn(core)) {
                       call->done.set_value();
                       return;
                     }
                     // Queued again from the worker: it runs after the next step, with no wait on the caller.
                     std::lock_guard<std::mutex> lock(mutex_);
                     if (!accepting_) fail(ErrorCode::Aborted, "the engine is shut down");
                     commands_.push_back(repeated_call_command(call));
                   } catch (...) {
                     call->done.set_exception(std::current_exception());
                   }
                 },
                 {}};
}

void EngineImpl::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (accepting_) {
      accepting_ = false;
      commands_.push_back(Command{Command::Kind::Shutdown, nullptr, {}, {}, {}});
    }
  }
  wake_.notify_one();
  if (on_worker_thread()) return;  // the loop stops at its next command drain; it cannot join itself
  if (worker_.joinable()) worker_.join();
}

void EngineImpl::worker_loop() {
  bool wait_for_command = false;  // the last step found nothing to do
  while (true) {
    std::vector<Command> batch;
    std::optional<std::shared_ptr<const Engine::KvEventListener>> new_listener;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto ready = [&] {
        return !commands_.empty() || kv_listener_changed_ || (core_->has_unfinished() && !wait_for_command);
      };
      // An idle live stream may have to give its batch slot to a waiting request at a set time.
      const std::optional<Clock::time_point> deadline = wait_for_command ? core_->next_deadline() : std::nullopt;
      if (deadline) {
        wake_.wait_until(lock, *deadline, ready);
      } else {
        wake_.wait(lock, ready);
      }
      batch.swap(commands_);
      if (kv_listener_changed_) new_listener = std::exchange(new_kv_listener_, nullptr);
      kv_listener_changed_ = false;
    }
    if (new_listener) adopt_kv_listener(std::move(*new_listener));
    for (Command& command : batch) {
      switch (command.kind) {
        case Command::Kind::Add:
          core_->add(std::move(command.request));
          break;
        case Command::Kind::Abort:
          core_->abort(command.request_id);
          break;
        case Command::Kind::PushAudio:
          core_->push_audio(command.request_id, command.samples);
          break;
        case Command::Kind::FinishAudio:
          core_->finish_audio(command.request_id);
          break;
        case Command::Kind::Call:
          command.call(*core_);
          break;
        case Command::Kind::Shutdown:
          core_->abort_all();
          publish_kv_events(/*closing=*/true);
          return;
      }
    }
    if (!batch.empty()) wait_for_command = false;
    if (core_->has_unfinished()) {
      try {
        wait_for_command = !core_->step();
      } catch (const std::exception& e) {
        logger()->error("engine step failed: {}", e.what());
        core_->fail_all(Error(ErrorCode::Internal, std::string("engine step failed: ") + e.what()));
      }
    }
    publish_kv_events();  // a failed step's events too: the tree changed all the same
  }
}

}  // namespace izwi::detail
