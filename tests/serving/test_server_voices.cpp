// Voices over HTTP (/v1/audio/voices) on a Qwen3-TTS Base model (common/qwen3_tts_base_model.h,
// with a byte-level tokenizer): a voice made over HTTP speaks in /v1/audio/speech exactly as the
// library's create_voice of the same recording does with the same seed, before and after a
// restart with the same --voices-dir; a second request in a voice hits the prefix cache; bad
// uploads and ids are named, and the server goes on serving.

#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/qwen3_tts_base_model.h"
#include "common/reference.h"
#include "common/speech_model_folders.h"
#include "common/temp_dir.h"
#include "common/text_model.h"
#include "izwi/audio.h"
#include "izwi/engine.h"
#include "server/audio_encoding.h"
#include "serving/running_server.h"

namespace izwi {
namespace {

using nlohmann::json;

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

/// A Base (voice-cloning) model with a speech-tokenizer encoder, a CustomVoice model and a text
/// model, written once for the suite; and a reference recording as a float WAV.
class ServerVoices : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dirs_ = new Dirs;
    testing::make_qwen3_tts_base_model(dirs_->base, /*codec_encoder=*/true);
    testing::write_qwen3_tts_with_tokenizer(dirs_->tts.path());
    std::filesystem::copy_file(dirs_->tts.file("tokenizer.json"), dirs_->base.file("tokenizer.json"));
    testing::write_text_model(dirs_->text.path());
    const at::Tensor wave = testing::ReferenceTensors("qwen3-tts-speaker-encoder-tiny").get("case0.waveform_24k");
    const at::Tensor samples = wave.to(at::kFloat).contiguous();
    write_wav(dirs_->audio.file("reference.wav"),
              std::vector<float>(samples.data_ptr<float>(), samples.data_ptr<float>() + samples.numel()), 24000);
  }
  static void TearDownTestSuite() {
    delete dirs_;
    dirs_ = nullptr;
  }
  static EngineConfig engine_config() {
    EngineConfig config;
    config.block_size = 4;  // the x-vector prompt's head fills whole blocks that the prefix cache keeps
    return config;
  }
  static server::ServerOptions options(const std::string& voices_dir) {
    server::ServerOptions o;
    o.models = {{"base", dirs_->base.path()}, {"tts", dirs_->tts.path()}, {"text", dirs_->text.path()}};
    o.engine = engine_config();
    o.voices_dir = voices_dir;
    return o;
  }
  static std::string reference_path() { return dirs_->audio.file("reference.wav"); }
  static json error_of(const httplib::Result& r) { return json::parse(r->body).at("error"); }
  static httplib::Result create(httplib::Client& client, const httplib::MultipartFormDataItems& form) {
    return client.Post("/v1/audio/voices", form);
  }
  static json speech(const std::string& voice) {
    return {{"model", "base"}, {"input", "hello"}, {"voice", voice},
            {"seed", 7},       {"max_frames", 6},  {"response_format", "pcm"}};
  }
  static uint64_t prefix_cache_hits(httplib::Client& client) {
    const std::string metrics = client.Get("/metrics")->body;
    const std::string key = "vllm:prefix_cache_hits_total{model_name=\"base\"} ";
    const size_t at = metrics.find(key);
    EXPECT_NE(at, std::string::npos) << metrics.substr(0, 800);
    return at == std::string::npos ? 0 : std::stoull(metrics.substr(at + key.size()));
  }

  struct Dirs {
    testing::TempDir base, tts, text, audio;
  };
  static Dirs* dirs_;
};

ServerVoices::Dirs* ServerVoices::dirs_ = nullptr;

TEST_F(ServerVoices, AVoiceMadeOverHttpSpeaksAsTheLibrarysVoiceBeforeAndAfterARestart) {
  // The library: the same recording, read as the server reads it, and the same seed.
  Engine engine(dirs_->base.path(), engine_config());
  const AudioBuffer reference = read_audio(reference_path());
  const auto library_pcm = [&](const VoiceTranscript& transcript) {
    SpeechRequest r;
    r.text = "hello";
    r.voice = engine.create_voice(to_mono(reference), reference.sample_rate, transcript);
    r.params.seed = 7;
    r.params.max_frames = 6;
    const Output out = engine.synthesize(r);
    EXPECT_FALSE(out.audio.empty());
    return out.audio;
  };
  const std::vector<float> xvector_audio = library_pcm({});
  const std::vector<float> in_context_audio = library_pcm({"hello there"});
  const int32_t rate = engine.model_info().output_sample_rate;

  testing::TempDir voices_dir;
  auto server = std::make_unique<testing::RunningServer>(options(voices_dir.path()));
  httplib::Client client(server->url());
  client.set_read_timeout(120, 0);
  const std::string wav = file_bytes(reference_path());
  // No `model`: the only voice-cloning model served.
  const httplib::Result plain = create(client, {{"file", wav, "reference.wav", "audio/wav"}, {"name", "plain"}});
  ASSERT_EQ(plain->status, 200) << plain->body;
  const json made = json::parse(plain->body);
  EXPECT_EQ(made["object"], "audio.voice");
  EXPECT_EQ(made["name"], "plain");
  EXPECT_EQ(made["model"], "base");
  EXPECT_GT(made["created_at"].get<int64_t>(), 0);
  const std::string id = made["id"];
  EXPECT_EQ(id.rfind("voice_", 0), 0u) << id;
  const httplib::Result cloned = create(client, {{"file", wav, "reference.wav", "audio/wav"},
                                                 {"name", "cloned"},
                                                 {"transcript", "hello there"},
                                                 {"model", "base"}});
  ASSERT_EQ(cloned->status, 200) << cloned->body;
  const std::string in_context_id = json::parse(cloned->body)["id"];

  const auto check_speech = [&](httplib::Client& client, const char* when) {
    for (const auto& [voice, audio] : {std::pair{id, xvector_audio}, std::pair{in_context_id, in_context_audio}}) {
      json body = speech(voice);
      const httplib::Result pcm = client.Post("/v1/audio/speech", body.dump(), "application/json");
      ASSERT_EQ(pcm->status, 200) << when << ": " << pcm->body;
      EXPECT_EQ(pcm->body, server::pcm16(audio.data(), audio.size())) << when << ", " << voice;
      body["response_format"] = "wav";
      const httplib::Result file = client.Post("/v1/audio/speech", body.dump(), "application/json");
      EXPECT_EQ(file->body, server::encode_audio(audio, rate, server::AudioFormat::Wav)) << when << ", " << voice;
    }
  };
  check_speech(client, "before the restart");
  const json listed = json::parse(client.Get("/v1/audio/voices")->body);
  ASSERT_EQ(listed["data"].size(), 2u) << listed;
  EXPECT_EQ(json::parse(client.Get("/v1/audio/voices/" + id)->body), made);

  // A restart with the same --voices-dir (and a file there that is no voice: logged, skipped).
  server.reset();
  std::ofstream(voices_dir.file("voice_0123456789abcdef.meta.json")) << "{not json";
  std::ofstream(voices_dir.file("notes.txt")) << "hello";
  server = std::make_unique<testing::RunningServer>(options(voices_dir.path()));
  httplib::Client restarted(server->url());
  restarted.set_read_timeout(120, 0);
  EXPECT_EQ(json::parse(restarted.Get("/v1/audio/voices")->body), listed);
  check_speech(restarted, "after the restart");

  // Deleted: gone from the list, the speech route and the directory.
  const httplib::Result deleted = restarted.Delete("/v1/audio/voices/" + id);
  ASSERT_EQ(deleted->status, 200) << deleted->body;
  EXPECT_EQ(json::parse(deleted->body), (json{{"id", id}, {"object", "audio.voice.deleted"}, {"deleted", true}}));
  EXPECT_EQ(restarted.Get("/v1/audio/voices/" + id)->status, 404);
  EXPECT_EQ(json::parse(restarted.Get("/v1/audio/voices")->body)["data"].size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(voices_dir.file(id + ".voice.json")));
  EXPECT_FALSE(std::filesystem::exists(voices_dir.file(id + ".meta.json")));
  const httplib::Result gone = restarted.Post("/v1/audio/speech", speech(id).dump(), "application/json");
  EXPECT_EQ(gone->status, 400);
  EXPECT_EQ(error_of(gone)["param"], "voice");
}

TEST_F(ServerVoices, ASecondRequestInAVoiceHitsThePrefixCache) {
  testing::RunningServer server(options(""));
  httplib::Client client(server.url());
  client.set_read_timeout(120, 0);
  const httplib::Result made =
      create(client, {{"file", file_bytes(reference_path()), "reference.wav", "audio/wav"}, {"name", "v"}});
  ASSERT_EQ(made->status, 200) << made->body;
  json body = speech(json::parse(made->body)["id"]);
  const uint64_t before = prefix_cache_hits(client);
  ASSERT_EQ(client.Post("/v1/audio/speech", body.dump(), "application/json")->status, 200);
  const uint64_t after_first = prefix_cache_hits(client);
  // Another sentence in the same voice reuses the prompt up to and including the voice.
  body["input"] = "another sentence";
  ASSERT_EQ(client.Post("/v1/audio/speech", body.dump(), "application/json")->status, 200);
  EXPECT_GE(prefix_cache_hits(client) - after_first, 8u) << "before " << before << ", after the first " << after_first;
}

TEST_F(ServerVoices, BadUploadsAndUnknownVoicesAreNamedAndServingGoesOn) {
  server::ServerOptions o = options("");
  o.voices.max_seconds = 3.0;  // the reference recording is 2.5 s
  o.voices.max_upload_bytes = 1u << 20;
  o.voices.max_voices = 1;
  testing::RunningServer server(o);
  httplib::Client client(server.url());
  client.set_read_timeout(120, 0);
  const std::string wav = file_bytes(reference_path());
  const auto expect_error = [&](const httplib::Result& r, int status, const std::string& param, const std::string& says,
                                const std::string& what) {
    ASSERT_TRUE(r) << what;
    EXPECT_EQ(r->status, status) << what << ": " << r->body;
    const json error = error_of(r);
    EXPECT_EQ(error["param"], param.empty() ? json(nullptr) : json(param)) << what << ": " << r->body;
    EXPECT_NE(error["message"].get<std::string>().find(says), std::string::npos) << what << ": " << r->body;
  };
  expect_error(client.Post("/v1/audio/voices", "{}", "application/json"), 400, "file", "multipart/form-data",
               "a JSON body");
  expect_error(client.Post("/v1/audio/voices", "--x\r\nContent-Disposition: form-data; name=\"file\"\r\n",
                           "multipart/form-data; boundary=x"),
               400, "file", "malformed", "malformed multipart");
  expect_error(create(client, {{"name", "v"}}), 400, "file", "'file' is required", "no file");
  expect_error(create(client, {{"file", "", "a.wav", "audio/wav"}, {"name", "v"}}), 400, "file", "empty", "empty");
  expect_error(create(client, {{"file", "not audio at all", "a.wav", "audio/wav"}, {"name", "v"}}), 400, "file",
               "a.wav", "unreadable audio");
  testing::TempDir long_audio;
  write_wav(long_audio.file("long.wav"), std::vector<float>(24000 * 4, 0.1f), 24000, WavFormat::Pcm16);
  expect_error(
      create(client, {{"file", file_bytes(long_audio.file("long.wav")), "long.wav", "audio/wav"}, {"name", "v"}}), 400,
      "file", "at most 3.0 s", "too long");
  write_wav(long_audio.file("big.wav"), std::vector<float>(300000, 0.1f), 192000);  // 1.2 MB, 1.6 s
  expect_error(
      create(client, {{"file", file_bytes(long_audio.file("big.wav")), "big.wav", "audio/wav"}, {"name", "v"}}), 413,
      "file", "--max-voice-upload-mb", "too large");
  write_wav(long_audio.file("short.wav"), std::vector<float>(2400, 0.1f), 24000);
  expect_error(
      create(client, {{"file", file_bytes(long_audio.file("short.wav")), "short.wav", "audio/wav"}, {"name", "v"}}),
      400, "file", "at least", "0.1 s");
  expect_error(create(client, {{"file", wav, "a.wav", "audio/wav"}}), 400, "name", "'name' is required", "no name");
  expect_error(create(client, {{"file", wav, "a.wav", "audio/wav"}, {"name", std::string(200, 'n')}}), 400, "name",
               "at most 128", "long name");
  expect_error(create(client, {{"file", wav, "a.wav", "audio/wav"}, {"name", "v"}, {"model", "text"}}), 400, "model",
               "'text' is not a voice-cloning model", "a text model");
  expect_error(create(client, {{"file", wav, "a.wav", "audio/wav"}, {"name", "v"}, {"model", "tts"}}), 400, "model",
               "'tts' is not a voice-cloning model", "a CustomVoice model");
  expect_error(create(client, {{"file", wav, "a.wav", "audio/wav"}, {"name", "v"}, {"model", "nope"}}), 404, "model",
               "nope", "an unknown model");
  // Unknown ids.
  expect_error(client.Get("/v1/audio/voices/voice_00000000000000aa"), 404, "voice_id", "voice_00000000000000aa",
               "GET of an unknown id");
  expect_error(client.Delete("/v1/audio/voices/voice_00000000000000aa"), 404, "voice_id", "voice_00000000000000aa",
               "DELETE of an unknown id");
  expect_error(client.Post("/v1/audio/speech", speech("voice_00000000000000aa").dump(), "application/json"), 400,
               "voice", "voice_00000000000000aa", "speech in an unknown voice");
  // The cap on voices.
  const httplib::Result made = create(client, {{"file", wav, "a.wav", "audio/wav"}, {"name", "v"}});
  ASSERT_EQ(made->status, 200) << made->body;
  expect_error(create(client, {{"file", wav, "a.wav", "audio/wav"}, {"name", "w"}}), 400, "", "--max-voices",
               "over the cap");
  // A DELETE with a body is refused (its body is never read) and the voice stays.
  const std::string id = json::parse(made->body)["id"];
  expect_error(client.Delete("/v1/audio/voices/" + id, "a body", "text/plain"), 400, "", "no request body",
               "DELETE with a body");
  EXPECT_EQ(client.Get("/v1/audio/voices/" + id)->status, 200);
  EXPECT_EQ(client.Get("/health")->status, 200);
  EXPECT_EQ(client.Post("/v1/audio/speech", speech(id).dump(), "application/json")->status, 200);
}

TEST_F(ServerVoices, WithSeveralVoiceCloningModelsTheFormNamesOne) {
  testing::TempDir second;
  server::ServerOptions o = options("");
  o.models.push_back({"base2", testing::make_qwen3_tts_base_model(second)});
  testing::RunningServer server(o);
  httplib::Client client(server.url());
  client.set_read_timeout(120, 0);
  const std::string wav = file_bytes(reference_path());
  const httplib::Result unnamed = create(client, {{"file", wav, "a.wav", "audio/wav"}, {"name", "v"}});
  EXPECT_EQ(unnamed->status, 400);
  EXPECT_EQ(error_of(unnamed)["param"], "model") << unnamed->body;
  const httplib::Result named =
      create(client, {{"file", wav, "a.wav", "audio/wav"}, {"name", "v"}, {"model", "base2"}});
  ASSERT_EQ(named->status, 200) << named->body;
  // A voice speaks only with the model that made it.
  const httplib::Result other =
      client.Post("/v1/audio/speech", speech(json::parse(named->body)["id"]).dump(), "application/json");
  EXPECT_EQ(other->status, 400);
  EXPECT_EQ(error_of(other)["param"], "voice") << other->body;
}

TEST_F(ServerVoices, VoicesMadeAndDeletedAtOnceFromManyClientsAreAllKept) {
  testing::TempDir voices_dir;
  testing::RunningServer server(options(voices_dir.path()));
  const std::string wav = file_bytes(reference_path());
  constexpr int kClients = 6;
  std::vector<std::future<std::string>> made;
  for (int i = 0; i < kClients; ++i) {
    made.push_back(std::async(std::launch::async, [&, i] {
      httplib::Client client(server.url());
      client.set_read_timeout(120, 0);
      const httplib::Result r = create(client, {{"file", wav, "a.wav", "audio/wav"}, {"name", std::to_string(i)}});
      const std::string id = r && r->status == 200 ? json::parse(r->body)["id"].get<std::string>() : "";
      // Every other client deletes its voice while the others are still making theirs.
      if (i % 2 == 1 && !id.empty()) EXPECT_EQ(client.Delete("/v1/audio/voices/" + id)->status, 200);
      return id;
    }));
  }
  std::set<std::string> kept;
  for (int i = 0; i < kClients; ++i) {
    const std::string id = made[i].get();
    ASSERT_FALSE(id.empty()) << "client " << i;
    if (i % 2 == 0) kept.insert(id);
  }
  httplib::Client client(server.url());
  std::set<std::string> listed;
  const json list = json::parse(client.Get("/v1/audio/voices")->body);
  for (const json& voice : list["data"]) listed.insert(voice["id"].get<std::string>());
  EXPECT_EQ(listed, kept);
  // Two files per voice kept, none of the deleted ones.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(voices_dir.path()), {}),
            static_cast<std::ptrdiff_t>(2 * kept.size()));
}

TEST_F(ServerVoices, AVoicesDirThatIsNotADirectoryIsNamed) {
  testing::TempDir dir;
  const std::string file = dir.write("plain-file", "x");
  try {
    testing::RunningServer server(options(file));
    ADD_FAILURE() << "the server started";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--voices-dir " + file), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace izwi
