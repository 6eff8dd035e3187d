// The izwi-server binary: it prints where it listens, a bad command line or model folder is an
// error naming it (exit 1), SIGTERM lets a running stream finish, then exits 0, --kv-events
// publishes what its engines cache to a real subscriber, it logs each model's load and each
// request on stderr (--no-log-requests turns the requests' lines off), and --model-config gives
// one model an engine config of its own.

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/kv_event_checks.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "serving/child_process.h"
#include "serving/server_process.h"

namespace izwi {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::line_with;
using testing::port_after;
using testing::start_server;

TEST(ServerProcess, SigtermLetsTheRunningStreamFinishThenExitsZero) {
  // A grace far beyond the stream's length: on 2 cores shared with other tests' servers and a
  // browser, libgomp's spin-waits stretched these 300 tokens past the default 10 s (0.1 s alone).
  ChildProcess server =
      start_server({"--model", "q=" + testing::fixture_dir("qwen3-tiny"), "--port", "0", "--shutdown-grace", "60"});
  const int port = port_after(server, "listening on http://127.0.0.1:");
  ASSERT_GT(port, 0);
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(120, 0);
  std::string streamed;
  bool signalled = false;
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.body = R"({"model": "q", "prompt": [1, 2, 3], "max_tokens": 300, "temperature": 0, "stream": true})";
  req.set_header("Content-Type", "application/json");
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    streamed.append(data, n);
    if (!signalled) server.send_signal(SIGTERM);  // mid-stream
    signalled = true;
    return true;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  client.send(req, res, error);
  EXPECT_NE(streamed.find("\"finish_reason\":\"length\""), std::string::npos) << streamed.substr(0, 300);
  EXPECT_NE(streamed.find("data: [DONE]"), std::string::npos);
  EXPECT_NE(line_with(server, "SIGTERM, shutting down"), "");
  EXPECT_EQ(server.wait(60s), 0);
}

TEST(ServerProcess, KvEventsTellASubscriberWhatEachModelCaches) {
  ChildProcess server = start_server({"--model", "q=" + testing::fixture_dir("qwen3-tiny"), "--port", "0",
                                      "--kv-events", "tcp://127.0.0.1:*", "--pod-name", "pod-a"});
  const int port = port_after(server, "listening on http://127.0.0.1:");
  const int kv_port = port_after(server, "KV events on tcp://127.0.0.1:");
  ASSERT_GT(port, 0);
  ASSERT_GT(kv_port, 0);
  ChildProcess subscriber({IZWI_PYTHON3, std::string(IZWI_SERVING_DIR) + "/kv_events_subscriber.py", "--endpoint",
                           "tcp://127.0.0.1:" + std::to_string(kv_port), "--topic", "kv@pod-a@q"});
  ASSERT_EQ(subscriber.read_line(10s).value_or("").rfind("ready ", 0), 0u);

  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(60, 0);
  const auto complete = [&](const std::vector<int32_t>& prompt) {
    const nlohmann::json body = {{"model", "q"}, {"prompt", prompt}, {"max_tokens", 1}, {"temperature", 0}};
    const httplib::Result res = client.Post("/v1/completions", body.dump(), "application/json");
    return res && res->status == 200;
  };
  // A PUB socket drops what it sends before the subscription reaches it (ZeroMQ's slow joiner):
  // prompts the engine has not cached yet go in until the subscriber receives their events.
  std::vector<int32_t> prompt(40);
  bool receiving = false;
  for (int32_t round = 0; round < 100 && !receiving; ++round) {
    for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = 1 + (round * 41 + static_cast<int32_t>(i)) % 500;
    ASSERT_TRUE(complete(prompt));
    receiving = subscriber.read_line(100ms).value_or("") == "receiving";
  }
  ASSERT_TRUE(receiving) << "no KV event reached the subscriber";
  std::vector<int32_t> last(40);
  for (size_t i = 0; i < last.size(); ++i) last[i] = 500 - static_cast<int32_t>(i);  // unlike the rounds' prompts
  ASSERT_TRUE(complete(last));

  // The subscriber's set now holds the last prompt's two full blocks, chained from the root, as
  // an indexer would compute them from the token ids.
  std::this_thread::sleep_for(500ms);  // the batch is sent at the end of the engine's step
  subscriber.send_signal(SIGTERM);
  const nlohmann::json report = nlohmann::json::parse(subscriber.read_line(10s).value_or("{}"));
  ASSERT_EQ(subscriber.wait(10s), 0) << "the subscriber failed (its stderr says why)";
  std::vector<uint64_t> held = report.value("blocks", std::vector<uint64_t>{});
  for (const uint64_t hash : testing::chain_hashes(last, 16, 2)) {
    EXPECT_NE(std::find(held.begin(), held.end(), hash), held.end()) << hash;
  }
  server.send_signal(SIGTERM);
  EXPECT_EQ(server.wait(60s), 0);
}

TEST(ServerProcess, LogsEachModelLoadAndOneLinePerRequest) {
  // Model "short" gets a context of 16 tokens from its own config; "q" keeps --config's (none).
  testing::TempDir dir;
  const std::string config = dir.write("short.json", R"({"max_seq_len": 16})");
  const std::string llama = testing::fixture_dir("llama-tiny");
  ChildProcess server = start_server({"--model", "q=" + llama, "--model", "short=" + llama, "--model-config",
                                      "short=" + config, "--port", "0", "--realtime-port", "-1"});
  const std::string loaded = line_with(server, "loaded 'q' in ");
  EXPECT_NE(loaded.find("[info]"), std::string::npos) << loaded;
  EXPECT_NE(loaded.find("llama (text model)"), std::string::npos) << loaded;
  EXPECT_NE(loaded.find("MiB of weights"), std::string::npos) << loaded;
  const int port = port_after(server, "listening on http://127.0.0.1:");
  ASSERT_GT(port, 0);
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(60, 0);
  const std::string body = R"({"model": "MODEL", "prompt": [1, 2, 3], "max_tokens": 20, "temperature": 0})";
  const auto complete = [&](const std::string& model) {
    std::string request = body;
    request.replace(request.find("MODEL"), 5, model);
    return client.Post("/v1/completions", request, "application/json");
  };
  const httplib::Result full = complete("q");
  ASSERT_TRUE(full);
  EXPECT_EQ(full->status, 200) << full->body;
  const httplib::Result cut = complete("short");  // 3 + 20 tokens do not fit its 16
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->status, 400);
  EXPECT_NE(cut->body.find("exceeds the model's context of 16 tokens"), std::string::npos) << cut->body;

  // A streamed reply's line comes when its stream is released, which may be after the next
  // request's: the two lines in either order.
  std::string ok, refused;
  while (ok.empty() || refused.empty()) {
    const std::optional<std::string> line = server.read_line(60s);
    if (!line) break;
    if (line->find("POST /v1/completions model=q status=200") != std::string::npos) ok = *line;
    if (line->find("POST /v1/completions model=short status=400") != std::string::npos) refused = *line;
  }
  EXPECT_NE(ok.find("[info]"), std::string::npos) << ok;
  EXPECT_NE(ok.find("prompt_tokens=3 completion_tokens=20 finish=length"), std::string::npos) << ok;
  EXPECT_NE(ok.find(" ms"), std::string::npos) << ok;
  EXPECT_NE(refused, "");
  server.send_signal(SIGTERM);
  EXPECT_EQ(server.wait(60s), 0);
}

TEST(ServerProcess, NoLogRequestsLeavesOnlyTheLoadLines) {
  ChildProcess server = start_server({"--model", "q=" + testing::fixture_dir("llama-tiny"), "--port", "0",
                                      "--realtime-port", "-1", "--no-log-requests"});
  const int port = port_after(server, "listening on http://127.0.0.1:");
  ASSERT_GT(port, 0);
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(60, 0);
  const httplib::Result res =
      client.Post("/v1/completions", R"({"model": "q", "prompt": [1, 2], "max_tokens": 2})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  server.send_signal(SIGTERM);
  std::string rest;
  while (std::optional<std::string> line = server.read_line(60s)) rest += *line + "\n";
  EXPECT_EQ(rest.find("POST /v1/completions"), std::string::npos) << rest;
  EXPECT_NE(rest.find("SIGTERM, shutting down"), std::string::npos) << rest;
  EXPECT_EQ(server.wait(60s), 0);
}

TEST(ServerProcess, BadArgumentsAreNamed) {
  {
    ChildProcess server = start_server({"--model", "q"});
    EXPECT_NE(server.read_line(60s).value_or("").find("--model 'q' must be NAME=DIR"), std::string::npos);
    EXPECT_EQ(server.wait(60s), 1);
  }
  {
    ChildProcess server = start_server({"--model", "q=/m", "--model-config", "x=/c.json"});
    EXPECT_NE(server.read_line(60s).value_or("").find("--model-config 'x=/c.json': no --model is named 'x'"),
              std::string::npos);
    EXPECT_EQ(server.wait(60s), 1);
  }
  {
    ChildProcess server = start_server({"--model", "q=/no/such/folder"});
    // The error line, after the log's "loading 'q' from /no/such/folder".
    EXPECT_NE(line_with(server, "izwi-server: ").find("/no/such/folder"), std::string::npos);
    EXPECT_EQ(server.wait(60s), 1);
  }
  {
    ChildProcess server = start_server({"--model", "q=" + testing::fixture_dir("qwen3-tiny"), "--kv-events", "bad"});
    EXPECT_NE(server.read_line(60s).value_or("").find("cannot connect a ZeroMQ PUB socket to 'bad'"),
              std::string::npos);
    EXPECT_EQ(server.wait(60s), 1);
  }
}

}  // namespace
}  // namespace izwi
