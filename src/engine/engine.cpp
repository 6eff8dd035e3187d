// The public Engine and StreamHandle: thin forwards to EngineImpl.

#include "izwi/engine.h"

#include "audio/sample_checks.h"
#include "engine/audio_feed.h"
#include "engine/engine_impl.h"

namespace izwi {

using detail::EngineImpl;
using detail::RequestChannel;

StreamHandle::StreamHandle(std::shared_ptr<RequestChannel> channel, std::weak_ptr<EngineImpl> engine)
    : channel_(std::move(channel)), engine_(std::move(engine)) {}

StreamHandle::StreamHandle(StreamHandle&&) noexcept = default;

StreamHandle& StreamHandle::operator=(StreamHandle&& other) noexcept {
  if (this != &other) {
    abort();
    channel_ = std::move(other.channel_);
    engine_ = std::move(other.engine_);
  }
  return *this;
}

StreamHandle::~StreamHandle() { abort(); }

const std::string& StreamHandle::id() const {
  static const std::string empty;
  return channel_ ? channel_->request_id() : empty;
}

std::optional<StreamChunk> StreamHandle::next() {
  if (!channel_) return std::nullopt;
  if (auto engine = engine_.lock(); engine && !channel_->ready()) engine->check_not_on_worker("StreamHandle::next");
  return channel_->next();
}

void StreamHandle::abort() {
  if (!channel_ || channel_->finished()) return;
  if (auto engine = engine_.lock()) engine->abort(channel_->request_id());
}

TranscriptionStream::TranscriptionStream(StreamHandle stream, std::unique_ptr<detail::AudioFeed> feed)
    : stream_(std::move(stream)), feed_(std::move(feed)) {}

TranscriptionStream::TranscriptionStream(TranscriptionStream&&) noexcept = default;

TranscriptionStream& TranscriptionStream::operator=(TranscriptionStream&&) noexcept = default;

TranscriptionStream::~TranscriptionStream() = default;

void TranscriptionStream::push_audio(const float* samples, size_t count, int32_t sample_rate) {
  if (!feed_) throw Error(ErrorCode::InvalidArgument, "push_audio on a moved-from TranscriptionStream");
  feed_->push(samples, count, sample_rate);
}

void TranscriptionStream::finish_audio() {
  if (feed_) feed_->finish();
}

Engine::Engine(const std::string& model_dir, const EngineConfig& config)
    : impl_(EngineImpl::create(model_dir, config)) {}

// On the worker thread (an Engine dropped in its own stream callback) this only asks the loop to
// stop; the worker frees the engine when the loop has returned.
Engine::~Engine() { impl_->shutdown(); }

Output Engine::generate(const Request& request) {
  impl_->check_not_on_worker("Engine::generate");
  return impl_->submit(request, RequestChannel::Mode::Unary)->wait();
}

StreamHandle Engine::generate_streaming(const Request& request) {
  return StreamHandle(impl_->submit(request, RequestChannel::Mode::Stream), impl_);
}

std::string Engine::generate_streaming(const Request& request, ChunkCallback on_chunk) {
  if (!on_chunk) throw Error(ErrorCode::InvalidArgument, "generate_streaming: on_chunk callback is empty");
  return impl_->submit(request, RequestChannel::Mode::Callback, std::move(on_chunk))->request_id();
}

TranscriptionStream Engine::start_transcription(const TranscriptionOptions& options) {
  std::shared_ptr<RequestChannel> channel = impl_->submit_transcription(options);
  auto feed = std::make_unique<detail::AudioFeed>(impl_, channel->request_id(), impl_->model_info().audio_sample_rate);
  return TranscriptionStream(StreamHandle(channel, impl_), std::move(feed));
}

Output Engine::transcribe(const std::vector<float>& samples, int32_t sample_rate, const TranscriptionOptions& options) {
  impl_->check_not_on_worker("Engine::transcribe");
  check_samples(samples.data(), samples.size(), "transcribe");
  TranscriptionStream stream = start_transcription(options);
  stream.push_audio(samples.data(), samples.size(), sample_rate);
  stream.finish_audio();
  Output out;
  out.request_id = stream.id();
  while (std::optional<StreamChunk> chunk = stream.next()) {
    out.tokens.insert(out.tokens.end(), chunk->tokens.begin(), chunk->tokens.end());
    out.text += chunk->text;
    if (!chunk->finished) continue;
    if (chunk->finish_reason == FinishReason::Error) throw Error(chunk->error_code, chunk->error);
    out.finish_reason = chunk->finish_reason;
    out.timings = chunk->timings;
  }
  return out;
}

Output Engine::synthesize(const SpeechRequest& request) {
  impl_->check_not_on_worker("Engine::synthesize");
  return impl_->submit_speech(request, RequestChannel::Mode::Unary)->wait();
}

StreamHandle Engine::synthesize_streaming(const SpeechRequest& request) {
  return StreamHandle(impl_->submit_speech(request, RequestChannel::Mode::Stream), impl_);
}

Output Engine::audio_chat(const AudioChatRequest& request) {
  impl_->check_not_on_worker("Engine::audio_chat");
  return impl_->submit_audio_chat(request, RequestChannel::Mode::Unary)->wait();
}

StreamHandle Engine::audio_chat_streaming(const AudioChatRequest& request) {
  return StreamHandle(impl_->submit_audio_chat(request, RequestChannel::Mode::Stream), impl_);
}

Voice Engine::create_voice(const std::vector<float>& samples, int32_t sample_rate, const VoiceTranscript& transcript) {
  return impl_->create_voice(samples, sample_rate, transcript);
}

bool Engine::abort(const std::string& request_id) { return impl_->abort(request_id); }

MetricsSnapshot Engine::metrics() const { return impl_->metrics(); }

int32_t Engine::pending_requests() const { return impl_->pending_requests(); }

int32_t Engine::running_requests() const { return impl_->metrics().running_requests; }

void Engine::set_kv_event_listener(KvEventListener listener) { impl_->set_kv_event_listener(std::move(listener)); }

std::vector<uint64_t> Engine::kv_cached_block_hashes() const { return impl_->kv_cached_block_hashes(); }

void Engine::shutdown() {
  impl_->check_not_on_worker("Engine::shutdown");
  impl_->shutdown();
}

const ModelInfo& Engine::model_info() const { return impl_->model_info(); }

const Tokenizer* Engine::tokenizer() const { return impl_->tokenizer(); }

const EngineConfig& Engine::config() const { return impl_->config(); }

}  // namespace izwi
