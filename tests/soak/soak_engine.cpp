// izwi-soak: N random public-API operations from several threads on long-lived engines, to find
// leaks, hangs and broken invariants that short tests miss. Not part of ctest; see
// scripts/soak.sh and docs/testing.md#soak-test.
//
// Engines: llama-tiny with a 24-block pool and batch 4 (forces preemption), voxtral-realtime-tiny
// (live transcription streams) and qwen3-tts-tiny (streamed synthesis). Each thread draws
// operations from a seeded RNG: blocking generate, streams read partly and dropped or held across
// operations, callback streams whose callbacks sometimes throw, aborts of random live ids,
// invalid requests (which must be refused), metrics, transcription streams fed in random chunks
// (finished, dropped or aborted), synthesis streams dropped early. Every round (default 2,000
// operations) the threads stop, every engine must become idle with no block in use and every
// cache invariant held (testing::check_idle), the metrics must account for every accepted
// request, and VmRSS is recorded.
//
// Exit status: 0 all held; 1 an invariant broke, a call hung (a watchdog aborts any call running
// longer than --hang-s), an Internal error was raised, or RSS grew beyond --max-rss-growth-mb
// between the end of the first round and the end of the last.

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/engine_checks.h"
#include "common/reference.h"
#include "izwi/audio.h"
#include "izwi/engine.h"
#include "izwi/errors.h"

namespace {

using namespace izwi;
using Clock = std::chrono::steady_clock;

struct Options {
  uint64_t ops = 100000;
  uint32_t seed = 1;
  int threads = 4;
  uint64_t round = 2000;
  double hang_s = 30;
  double max_rss_growth_mb = 64;
  bool speech = true;
  bool tts = true;
  // Live transcription streams each thread may keep open without pushing (fed by later
  // operations), and the transcription engine's batch. A stream waiting for audio keeps its batch
  // slot, so held streams >= the batch starve every other stream: the defaults stay below it
  // (4 threads x 1 < 8); --held-transcriptions 2 --asr-max-batch 4 reproduces the starvation.
  size_t held_transcriptions = 1;
  int32_t asr_max_batch = 8;
  bool repro_starvation = false;  // run only the deterministic reproducer of that starvation
  int32_t paused = -1;            // paused streams in the reproducer; -1 = asr_max_batch
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--ops N] [--seed S] [--threads T] [--round R] [--hang-s X] [--max-rss-growth-mb M]\n"
               "          [--no-speech] [--no-tts] [--held-transcriptions N] [--asr-max-batch B]\n"
               "          [--repro-starvation [--paused N]]\n",
               argv0);
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(argv[0]);
      return argv[++i];
    };
    try {
      if (a == "--ops")
        o.ops = std::stoull(value());
      else if (a == "--seed")
        o.seed = static_cast<uint32_t>(std::stoul(value()));
      else if (a == "--threads")
        o.threads = std::stoi(value());
      else if (a == "--round")
        o.round = std::stoull(value());
      else if (a == "--hang-s")
        o.hang_s = std::stod(value());
      else if (a == "--max-rss-growth-mb")
        o.max_rss_growth_mb = std::stod(value());
      else if (a == "--no-speech")
        o.speech = false;
      else if (a == "--no-tts")
        o.tts = false;
      else if (a == "--held-transcriptions")
        o.held_transcriptions = std::stoull(value());
      else if (a == "--asr-max-batch")
        o.asr_max_batch = std::stoi(value());
      else if (a == "--repro-starvation")
        o.repro_starvation = true;
      else if (a == "--paused")
        o.paused = std::stoi(value());
      else
        usage(argv[0]);
    } catch (const std::logic_error&) {
      usage(argv[0]);
    }
  }
  if (o.threads < 1 || o.round < static_cast<uint64_t>(o.threads) || o.hang_s <= 0) usage(argv[0]);
  return o;
}

double rss_mb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "izwi-soak: FAIL: %s\n", what.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  std::_Exit(1);
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

// What each worker thread is doing, for the watchdog: a call running longer than hang_s is a hang.
struct Activity {
  std::atomic<int64_t> since_ms{0};  // 0 = between calls
  std::atomic<const char*> op{""};
};

class Watch {
 public:
  Watch(Activity& a, const char* op) : a_(a) {
    a_.op = op;
    a_.since_ms = now_ms();
  }
  ~Watch() { a_.since_ms = 0; }

 private:
  Activity& a_;
};

// Counters; each thread keeps its own and they are merged after every round.
struct Stats {
  std::map<std::string, uint64_t> ops;
  std::map<std::string, uint64_t> errors;                          // by ErrorCode name
  std::map<std::string, uint64_t> finishes;                        // by FinishReason name
  uint64_t accepted_text = 0, accepted_asr = 0, accepted_tts = 0;  // requests the engines took

  void merge(const Stats& o) {
    for (const auto& [k, v] : o.ops) ops[k] += v;
    for (const auto& [k, v] : o.errors) errors[k] += v;
    for (const auto& [k, v] : o.finishes) finishes[k] += v;
    accepted_text += o.accepted_text;
    accepted_asr += o.accepted_asr;
    accepted_tts += o.accepted_tts;
  }
};

// Ids of recent requests on the text engine, for aborts from any thread.
class IdPool {
 public:
  void add(const std::string& id) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ids_.size() < 64) {
      ids_.push_back(id);
    } else {
      ids_[next_++ % ids_.size()] = id;
    }
  }
  std::string pick(std::mt19937_64& rng) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ids_.empty() || rng() % 8 == 0) return "no-such-request";
    return ids_[rng() % ids_.size()];
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> ids_;
  size_t next_ = 0;
};

struct World {
  Options options;
  std::unique_ptr<Engine> text, asr, tts;
  std::vector<float> audio;  // 16 kHz mono
  IdPool ids;
  std::vector<Activity> activity;
  std::atomic<bool> stop_watchdog{false};
  std::atomic<uint64_t> callback_calls{0}, callback_throws{0};
  std::mutex examples_mutex;
  std::map<std::string, std::string> error_examples;  // first message seen per error code
};

void check_finish(const std::string& where, FinishReason reason, size_t tokens, int32_t max_tokens) {
  if (reason == FinishReason::None || reason == FinishReason::Error) {
    die(where + ": finished with reason " + to_string(reason));
  }
  if (static_cast<int64_t>(tokens) > max_tokens) {
    die(where + ": " + std::to_string(tokens) + " tokens > max_tokens " + std::to_string(max_tokens));
  }
  if (reason == FinishReason::Length && static_cast<int64_t>(tokens) != max_tokens) {
    die(where + ": finish reason length with " + std::to_string(tokens) + " of " + std::to_string(max_tokens) +
        " tokens");
  }
}

// A valid text request: prompts share prefixes (prefix cache) and take up to 10 of the 24 blocks,
// so four running at once can run out of blocks (preemption).
Request text_request(std::mt19937_64& rng, const std::string& id, int32_t vocab) {
  Request r;
  r.id = id;
  const int32_t len = 1 + static_cast<int32_t>(rng() % 120);
  const int32_t family = static_cast<int32_t>(rng() % 4);
  for (int32_t i = 0; i < len; ++i) {
    r.prompt_ids.push_back(i < 16 ? (family * 97 + i * 13) % vocab : static_cast<int32_t>(rng() % vocab));
  }
  r.params.max_tokens = 1 + static_cast<int32_t>(rng() % 40);
  r.params.min_tokens = static_cast<int32_t>(rng() % (r.params.max_tokens + 1));
  r.params.ignore_eos = rng() % 4 == 0;
  if (rng() % 2 == 0) {
    r.params.sampling.temperature = 0.7f;
    r.params.sampling.top_k = static_cast<int32_t>(rng() % 50);
    r.params.sampling.top_p = 0.9f;
    r.params.seed = rng();
  }
  if (rng() % 4 == 0) r.params.sampling.repetition_penalty = 1.2f;
  if (rng() % 4 == 0) r.params.stop_token_ids = {static_cast<int32_t>(rng() % vocab)};
  r.priority = static_cast<int32_t>(rng() % 3);
  return r;
}

// An invalid request and the error code it must raise.
Request invalid_request(std::mt19937_64& rng, const std::string& id, int32_t vocab, ErrorCode& expected) {
  Request r = text_request(rng, id, vocab);
  expected = ErrorCode::InvalidArgument;
  switch (rng() % 8) {
    case 0:
      r.prompt_ids.clear();
      break;
    case 1:
      r.prompt_ids.back() = vocab;
      break;
    case 2:
      r.params.max_tokens = 0;
      break;
    case 3:
      r.params.sampling.temperature = std::numeric_limits<float>::quiet_NaN();
      break;
    case 4:
      r.params.sampling.top_p = 0.0f;
      break;
    case 5:
      r.params.sampling.repetition_penalty = -std::numeric_limits<float>::infinity();
      break;
    case 6:
      r.params.min_tokens = r.params.max_tokens + 1;
      break;
    default:  // 400 positions > 24 blocks of 16
      r.prompt_ids.assign(300, 5);
      r.params.max_tokens = 100;
      r.params.min_tokens = 0;
      expected = ErrorCode::ResourceExhausted;
      break;
  }
  return r;
}

SpeechRequest speech_request(std::mt19937_64& rng, const std::string& id) {
  SpeechRequest r;
  r.id = id;
  r.text_ids = {590, 77, 198};  // <|im_start|>assistant\n as the fixture frames them (values < 600)
  for (int n = 1 + static_cast<int>(rng() % 8); n > 0; --n) r.text_ids.push_back(static_cast<int32_t>(rng() % 580));
  r.text_ids.insert(r.text_ids.end(), {591, 198, 590, 77, 198});
  static const char* const kSpeakers[] = {"alice", "bob", ""};
  static const char* const kLanguages[] = {"auto", "english", "chinese"};
  r.speaker = kSpeakers[rng() % 3];
  r.language = kLanguages[rng() % 3];
  r.text_mode = static_cast<SpeechTextMode>(rng() % 3);
  r.params.max_frames = 1 + static_cast<int32_t>(rng() % 6);
  r.params.seed = rng();
  r.first_chunk_frames = 1 + static_cast<int32_t>(rng() % 2);
  r.chunk_frames = 1 + static_cast<int32_t>(rng() % 3);
  return r;
}

class Worker {
 public:
  Worker(World& world, int index) : w_(world), index_(index), rng_(world.options.seed * 1000003ULL + index) {}

  void run(uint64_t count) {
    for (uint64_t i = 0; i < count; ++i) one_op();
    release_held();
  }

  Stats take_stats() {
    Stats s = std::move(stats_);
    stats_ = Stats{};
    return s;
  }

 private:
  Activity& act() { return w_.activity[static_cast<size_t>(index_)]; }
  std::string next_id() { return "t" + std::to_string(index_) + "-" + std::to_string(serial_++); }
  void count_error(const Error& e) {
    ++stats_.errors[to_string(e.code())];
    std::lock_guard<std::mutex> lock(w_.examples_mutex);
    w_.error_examples.emplace(to_string(e.code()), e.what());
  }

  void internal_check(const Error& e, const char* where) {
    count_error(e);
    if (e.code() == ErrorCode::Internal) die(std::string(where) + ": Internal error: " + e.what());
  }

  void release_held() {
    Watch watch(act(), "drop held handles");
    held_streams_.clear();
    held_transcriptions_.clear();
  }

  void one_op() {
    const int32_t vocab = w_.text->model_info().vocab_size;
    const unsigned kinds = 10 + (w_.asr ? 2 : 0) + (w_.tts ? 1 : 0);
    unsigned kind = static_cast<unsigned>(rng_() % kinds);
    if (kind >= 10 && !w_.asr) kind += 2;  // no speech engine: 10, 11 become tts
    try {
      switch (kind) {
        case 0:
        case 1:
          op_generate(vocab);
          break;
        case 2:
        case 3:
          op_stream(vocab);
          break;
        case 4:
          op_callback(vocab);
          break;
        case 5:
          op_abort();
          break;
        case 6:
          op_invalid(vocab);
          break;
        case 7:
          op_metrics();
          break;
        case 8:
          op_drop_held();
          break;
        case 9:
          op_duplicate_id(vocab);
          break;
        case 10:
        case 11:
          op_transcribe();
          break;
        default:
          op_synthesize();
          break;
      }
    } catch (const Error& e) {
      internal_check(e, "operation");
    }
  }

  void op_generate(int32_t vocab) {
    ++stats_.ops["generate"];
    const Request r = text_request(rng_, next_id(), vocab);
    w_.ids.add(r.id);
    Watch watch(act(), "generate");
    const Output out = w_.text->generate(r);
    ++stats_.accepted_text;
    ++stats_.finishes[to_string(out.finish_reason)];
    check_finish("generate " + r.id, out.finish_reason, out.tokens.size(), r.params.max_tokens);
  }

  void op_stream(int32_t vocab) {
    ++stats_.ops["generate_streaming"];
    const Request r = text_request(rng_, next_id(), vocab);
    w_.ids.add(r.id);
    Watch watch(act(), "generate_streaming");
    StreamHandle h = w_.text->generate_streaming(r);
    ++stats_.accepted_text;
    const unsigned mode = static_cast<unsigned>(rng_() % 4);
    if (mode == 0) {  // dropped at once: aborts
      return;
    }
    if (mode == 1 && held_streams_.size() < 3) {  // held across operations, dropped later
      held_streams_.push_back(std::move(h));
      return;
    }
    size_t tokens = 0;
    const unsigned limit = mode == 2 ? static_cast<unsigned>(rng_() % 4) : std::numeric_limits<unsigned>::max();
    for (unsigned k = 0; k < limit; ++k) {
      std::optional<StreamChunk> chunk = h.next();
      if (!chunk) break;
      tokens += chunk->tokens.size();
      if (chunk->finished) {
        ++stats_.finishes[to_string(chunk->finish_reason)];
        check_finish("stream " + r.id, chunk->finish_reason, tokens, r.params.max_tokens);
      }
    }
  }

  void op_callback(int32_t vocab) {
    ++stats_.ops["generate_streaming(callback)"];
    const Request r = text_request(rng_, next_id(), vocab);
    w_.ids.add(r.id);
    const uint64_t throw_at = rng_() % 4 == 0 ? rng_() % 4 : std::numeric_limits<uint64_t>::max();
    auto calls = std::make_shared<uint64_t>(0);
    World& world = w_;
    Watch watch(act(), "generate_streaming(callback)");
    w_.text->generate_streaming(r, [calls, throw_at, &world](const StreamChunk&) {
      ++world.callback_calls;
      if ((*calls)++ == throw_at) {
        ++world.callback_throws;
        throw std::runtime_error("soak: a throwing callback");
      }
    });
    ++stats_.accepted_text;
  }

  void op_abort() {
    ++stats_.ops["abort"];
    const std::string id = w_.ids.pick(rng_);
    Watch watch(act(), "abort");
    w_.text->abort(id);
  }

  void op_invalid(int32_t vocab) {
    ++stats_.ops["invalid request"];
    ErrorCode expected;
    const Request r = invalid_request(rng_, next_id(), vocab, expected);
    Watch watch(act(), "invalid request");
    try {
      if (rng_() % 2 == 0) {
        w_.text->generate(r);
      } else {
        StreamHandle h = w_.text->generate_streaming(r);
      }
    } catch (const Error& e) {
      count_error(e);
      if (e.code() != expected)
        die(std::string("invalid request refused with ") + to_string(e.code()) + ": " + e.what());
      return;
    }
    die("an invalid request was accepted: " + r.id);
  }

  void op_metrics() {
    ++stats_.ops["metrics"];
    Watch watch(act(), "metrics");
    const MetricsSnapshot m = w_.text->metrics();
    if (m.kv_blocks_total != 24 || m.kv_blocks_free < 0 || m.kv_blocks_cached < 0 ||
        m.kv_blocks_free + m.kv_blocks_cached > m.kv_blocks_total || m.running_requests > 4 || m.waiting_requests < 0) {
      die("metrics out of range: free " + std::to_string(m.kv_blocks_free) + " cached " +
          std::to_string(m.kv_blocks_cached) + " running " + std::to_string(m.running_requests));
    }
    (void)w_.text->pending_requests();
    (void)w_.text->running_requests();
  }

  void op_drop_held() {
    ++stats_.ops["drop held"];
    if (!held_streams_.empty()) {
      Watch watch(act(), "drop held stream");
      held_streams_.erase(held_streams_.begin() + static_cast<std::ptrdiff_t>(rng_() % held_streams_.size()));
    }
    if (!held_transcriptions_.empty() && rng_() % 2 == 0) {
      Watch watch(act(), "drop held transcription");
      held_transcriptions_.erase(held_transcriptions_.begin() +
                                 static_cast<std::ptrdiff_t>(rng_() % held_transcriptions_.size()));
    }
  }

  void op_duplicate_id(int32_t vocab) {
    ++stats_.ops["duplicate id"];
    // Two streams with one id: the second must be refused while the first lives.
    Request r = text_request(rng_, next_id(), vocab);
    r.params.max_tokens = 32;
    r.params.min_tokens = 32;
    Watch watch(act(), "duplicate id");
    StreamHandle first = w_.text->generate_streaming(r);
    ++stats_.accepted_text;
    try {
      StreamHandle second = w_.text->generate_streaming(r);
      ++stats_.accepted_text;
      ++stats_.ops["duplicate id accepted (first had finished)"];
      // Accepted only if the first had already finished (an id is unique among live requests).
      std::optional<StreamChunk> c = first.next();
      while (c && !c->finished) c = first.next();
      if (!c || c->tokens.size() > 32) die("duplicate id: first stream ended oddly");
    } catch (const Error& e) {
      count_error(e);
      if (e.code() != ErrorCode::InvalidArgument) die(std::string("duplicate id refused with ") + to_string(e.code()));
    }
  }

  void push_some(TranscriptionStream& s, size_t& pos) {
    const size_t n = std::min<size_t>(1 + rng_() % 8000, w_.audio.size() - pos);
    if (n == 0) return;
    Watch watch(act(), "push_audio");
    s.push_audio(w_.audio.data() + pos, n, 16000);
    pos += n;
  }

  void op_transcribe() {
    ++stats_.ops["transcription"];
    if (!held_transcriptions_.empty() && rng_() % 2 == 0) {  // feed a held stream
      auto& [stream, pos] = held_transcriptions_[rng_() % held_transcriptions_.size()];
      push_some(stream, pos);
      return;
    }
    TranscriptionOptions options;
    options.id = "asr-" + next_id();
    options.pad_token_id = 32;  // the fixture's stand-in for the streaming pad token (it has no tokenizer)
    if (rng_() % 4 == 0) options.continue_after_audio = true, options.max_tokens_after_audio = 4;
    std::optional<TranscriptionStream> stream;
    {
      Watch watch(act(), "start_transcription");
      stream.emplace(w_.asr->start_transcription(options));
    }
    ++stats_.accepted_asr;
    size_t pos = 0;
    const unsigned mode = static_cast<unsigned>(rng_() % 5);
    if (mode == 0) {  // a non-finite chunk must be refused
      std::vector<float> bad(100, 0.1f);
      bad[static_cast<size_t>(rng_() % 100)] = std::numeric_limits<float>::quiet_NaN();
      try {
        Watch watch(act(), "push_audio(NaN)");
        stream->push_audio(bad.data(), bad.size(), 16000);
        die("a NaN audio chunk was accepted");
      } catch (const Error& e) {
        count_error(e);
        if (e.code() != ErrorCode::InvalidArgument) die(std::string("NaN audio refused with ") + to_string(e.code()));
      }
      return;  // dropped
    }
    if (mode == 1 &&
        held_transcriptions_.size() < w_.options.held_transcriptions) {  // fed by later operations, dropped later
      push_some(*stream, pos);
      held_transcriptions_.emplace_back(std::move(*stream), pos);
      return;
    }
    // A short clip, pushed in random chunks then finished; read to the end (or aborted).
    const size_t end = std::min<size_t>(w_.audio.size(), 4000 + rng_() % 16000);
    while (pos < end) push_some(*stream, pos);
    {
      Watch watch(act(), "finish_audio");
      stream->finish_audio();
    }
    if (mode == 2) {
      Watch watch(act(), "transcription abort");
      stream->abort();
    }
    Watch watch(act(), "transcription next");
    while (std::optional<StreamChunk> chunk = stream->next()) {
      if (chunk->finished) {
        ++stats_.finishes[to_string(chunk->finish_reason)];
        if (chunk->finish_reason == FinishReason::Error || chunk->finish_reason == FinishReason::None) {
          die("transcription finished with " + std::string(to_string(chunk->finish_reason)) + ": " + chunk->error);
        }
      }
    }
  }

  void op_synthesize() {
    ++stats_.ops["synthesize_streaming"];
    const SpeechRequest r = speech_request(rng_, "tts-" + next_id());
    Watch watch(act(), "synthesize_streaming");
    StreamHandle h = w_.tts->synthesize_streaming(r);
    ++stats_.accepted_tts;
    const unsigned limit = rng_() % 2 == 0 ? static_cast<unsigned>(rng_() % 3) : std::numeric_limits<unsigned>::max();
    size_t frames = 0;
    for (unsigned k = 0; k < limit; ++k) {
      std::optional<StreamChunk> chunk = h.next();
      if (!chunk) break;
      frames += chunk->audio_codes.size();
      for (float x : chunk->audio) {
        if (!std::isfinite(x)) die("synthesized audio holds a non-finite sample");
      }
      if (chunk->finished) {
        ++stats_.finishes[to_string(chunk->finish_reason)];
        check_finish("synthesis " + r.id, chunk->finish_reason, frames, r.params.max_frames);
      }
    }
  }

  World& w_;
  int index_;
  std::mt19937_64 rng_;
  uint64_t serial_ = 0;
  Stats stats_;
  std::vector<StreamHandle> held_streams_;
  std::vector<std::pair<TranscriptionStream, size_t>> held_transcriptions_;
};

void check_engine(const char* name, Engine& engine, uint64_t accepted) {
  const std::string problem = testing::check_idle(engine);
  if (!problem.empty()) die(std::string(name) + " engine not idle after draining: " + problem);
  const MetricsSnapshot m = engine.metrics();
  if (m.requests_failed != 0) die(std::string(name) + ": " + std::to_string(m.requests_failed) + " requests failed");
  const uint64_t ended = m.requests_finished + m.requests_aborted + m.requests_failed;
  if (ended != accepted) {
    die(std::string(name) + ": metrics count " + std::to_string(ended) + " ended requests, " +
        std::to_string(accepted) + " were accepted");
  }
  const int32_t used = m.kv_blocks_total - m.kv_blocks_free - m.kv_blocks_cached;
  if (used != 0) die(std::string(name) + ": " + std::to_string(used) + " KV blocks leaked");
}

// --paused (default --asr-max-batch) live streams each get 0.1 s of audio and then nothing (a paused client); one more
// stream gets 1 s of audio and finish_audio(). Its transcript must still arrive: a stream waiting
// for audio is meant not to block others (docs/architecture.md). Exits 1 (through the watchdog)
// when it does not.
int repro_starvation(World& world) {
  std::vector<TranscriptionStream> paused;
  TranscriptionOptions options;
  options.pad_token_id = 32;
  const int32_t paused_count = world.options.paused >= 0 ? world.options.paused : world.options.asr_max_batch;
  for (int32_t i = 0; i < paused_count; ++i) {
    paused.push_back(world.asr->start_transcription(options));
    paused.back().push_audio(world.audio.data(), 1600, 16000);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // let them be admitted and catch up
  TranscriptionStream late = world.asr->start_transcription(options);
  late.push_audio(world.audio.data(), 16000, 16000);
  late.finish_audio();
  Watch watch(world.activity[0], "next() of a finished stream while the batch holds paused streams");
  size_t tokens = 0;
  while (std::optional<StreamChunk> chunk = late.next()) tokens += chunk->tokens.size();
  std::printf("repro-starvation: the late stream finished with %zu tokens beside %d paused streams (batch %d): OK\n",
              tokens, paused_count, world.options.asr_max_batch);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  World world;
  world.options = parse_options(argc, argv);
  const Options& o = world.options;
  const auto t0 = Clock::now();

  EngineConfig text_config;
  text_config.num_kv_blocks = 24;
  text_config.max_batch_size = 4;
  text_config.max_tokens_per_step = 32;
  text_config.num_threads = 1;
  text_config.log_level = "off";
  world.text = std::make_unique<Engine>(testing::fixture_dir("llama-tiny"), text_config);
  if (o.speech) {
    EngineConfig c;
    c.max_batch_size = o.asr_max_batch;
    c.num_kv_blocks = 256;
    c.num_threads = 1;
    c.log_level = "off";
    world.asr = std::make_unique<Engine>(testing::fixture_dir("voxtral-realtime-tiny"), c);
    world.audio = load_audio_mono(testing::fixture_dir("voxtral-realtime-tiny") + "/audio.wav", 16000);
  }
  if (o.tts) {
    EngineConfig c;
    c.max_batch_size = 4;
    c.num_kv_blocks = 64;
    c.num_threads = 1;
    c.log_level = "off";
    world.tts = std::make_unique<Engine>(testing::fixture_dir("qwen3-tts-tiny"), c);
  }
  world.activity = std::vector<Activity>(static_cast<size_t>(o.threads));

  std::thread watchdog([&world, hang_ms = static_cast<int64_t>(o.hang_s * 1000)] {
    while (!world.stop_watchdog) {
      for (size_t t = 0; t < world.activity.size(); ++t) {
        const int64_t since = world.activity[t].since_ms;
        if (since != 0 && now_ms() - since > hang_ms) {
          die("hang: thread " + std::to_string(t) + " has been in '" + world.activity[t].op.load() + "' for " +
              std::to_string((now_ms() - since) / 1000) + " s");
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });

  if (o.repro_starvation) {
    if (!world.asr) usage(argv[0]);
    const int status = repro_starvation(world);
    world.stop_watchdog = true;
    watchdog.join();
    return status;
  }

  std::vector<std::unique_ptr<Worker>> workers;
  for (int t = 0; t < o.threads; ++t) workers.push_back(std::make_unique<Worker>(world, t));
  Stats total;
  std::vector<double> rss;
  uint64_t done = 0;
  std::printf("izwi-soak: %llu operations, %d threads, seed %u, rounds of %llu; engines: text%s%s\n",
              static_cast<unsigned long long>(o.ops), o.threads, o.seed, static_cast<unsigned long long>(o.round),
              o.speech ? ", transcription" : "", o.tts ? ", speech" : "");
  while (done < o.ops) {
    const uint64_t this_round = std::min(o.round, o.ops - done);
    std::vector<std::thread> threads;
    for (int t = 0; t < o.threads; ++t) {
      const uint64_t n = this_round / o.threads + (static_cast<uint64_t>(t) < this_round % o.threads ? 1 : 0);
      threads.emplace_back([&workers, t, n] { workers[static_cast<size_t>(t)]->run(n); });
    }
    for (std::thread& t : threads) t.join();
    done += this_round;
    for (auto& w : workers) total.merge(w->take_stats());
    check_engine("text", *world.text, total.accepted_text);
    if (world.asr) check_engine("transcription", *world.asr, total.accepted_asr);
    if (world.tts) check_engine("speech", *world.tts, total.accepted_tts);
    rss.push_back(rss_mb());
    const MetricsSnapshot m = world.text->metrics();
    std::printf(
        "round %zu: %llu ops, %.0f s, RSS %.1f MB, text: %llu finished %llu aborted %llu preemptions, "
        "%d/%d blocks cached\n",
        rss.size(), static_cast<unsigned long long>(done), std::chrono::duration<double>(Clock::now() - t0).count(),
        rss.back(), static_cast<unsigned long long>(m.requests_finished),
        static_cast<unsigned long long>(m.requests_aborted), static_cast<unsigned long long>(m.preemptions),
        m.kv_blocks_cached, m.kv_blocks_total);
    std::fflush(stdout);
  }
  world.stop_watchdog = true;
  watchdog.join();

  std::printf("\noperations: %llu in %.0f s\n", static_cast<unsigned long long>(done),
              std::chrono::duration<double>(Clock::now() - t0).count());
  for (const auto& [k, v] : total.ops) std::printf("  %-30s %llu\n", k.c_str(), static_cast<unsigned long long>(v));
  std::printf("errors by code (all expected refusals):\n");
  for (const auto& [k, v] : total.errors) {
    std::printf("  %-30s %llu (e.g. %s)\n", k.c_str(), static_cast<unsigned long long>(v),
                world.error_examples[k].substr(0, 160).c_str());
  }
  std::printf("finish reasons seen by readers:\n");
  for (const auto& [k, v] : total.finishes)
    std::printf("  %-30s %llu\n", k.c_str(), static_cast<unsigned long long>(v));
  std::printf("callbacks: %llu calls, %llu threw\n", static_cast<unsigned long long>(world.callback_calls.load()),
              static_cast<unsigned long long>(world.callback_throws.load()));
  std::printf("accepted requests: text %llu, transcription %llu, speech %llu\n",
              static_cast<unsigned long long>(total.accepted_text), static_cast<unsigned long long>(total.accepted_asr),
              static_cast<unsigned long long>(total.accepted_tts));
  std::printf("preemptions (text): %llu\n", static_cast<unsigned long long>(world.text->metrics().preemptions));
  std::printf("hung calls: 0 (limit %.0f s)\nleaked blocks: 0\n", o.hang_s);
  const double growth = rss.back() - rss.front();
  std::printf("RSS: first round %.1f MB, last round %.1f MB, growth %.1f MB (bound %.0f MB)\n", rss.front(), rss.back(),
              growth, o.max_rss_growth_mb);
  if (growth > o.max_rss_growth_mb) die("RSS grew beyond the bound");
  std::printf("izwi-soak: OK\n");
  return 0;
}
