// KvEventsPublisher: the msgpack payload field by field, endpoint errors, and a real subscriber
// (tests/serving/kv_events_subscriber.py, pyzmq + msgpack) rebuilding an engine's prefix cache
// from the messages, in both topologies: the subscriber connecting to the publisher's bound
// socket (vLLM's default), and the publisher connecting to a bound subscriber (the llm-d indexer).

#include <gtest/gtest.h>
#include <msgpack.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <variant>

#include "common/engine_checks.h"
#include "common/kv_event_checks.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "izwi/engine.h"
#include "server/kv_events_publisher.h"
#include "server/kv_events_wire.h"
#include "serving/child_process.h"

namespace izwi {
namespace {

using namespace std::chrono_literals;
using server::KvEventsPublisher;
using testing::ChildProcess;

constexpr const char* kTopic = "kv@pod-a@llama-tiny";

double now_s() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

std::vector<int32_t> ids(int32_t n, int32_t start) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return v;
}

/// The subscriber, started with `args`, after it printed "ready ENDPOINT"; `endpoint` gets ENDPOINT.
std::unique_ptr<ChildProcess> start_subscriber(std::vector<std::string> args, std::string* endpoint) {
  args.insert(args.begin(), {IZWI_PYTHON3, std::string(IZWI_SERVING_DIR) + "/kv_events_subscriber.py"});
  auto child = std::make_unique<ChildProcess>(args);
  const std::optional<std::string> ready = child->read_line(10s);
  if (!ready || ready->rfind("ready ", 0) != 0) {
    ADD_FAILURE() << "the subscriber did not start: " << ready.value_or("(no output)");
    return nullptr;
  }
  *endpoint = ready->substr(6);
  return child;
}

/// PUB sockets drop what they send before a subscription has reached them (ZeroMQ's slow joiner):
/// harmless AllBlocksCleared batches go out until the subscriber reports it receives them.
bool wait_until_receiving(KvEventsPublisher& publisher, ChildProcess& subscriber) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    publisher.publish(kTopic, KvEventBatch{now_s(), {KvAllBlocksCleared{}}});
    if (std::optional<std::string> line = subscriber.read_line(50ms)) return *line == "receiving";
  }
  return false;
}

/// Tells the subscriber to stop after the last message sent, and returns its report.
nlohmann::json stop_subscriber(KvEventsPublisher& publisher, ChildProcess& subscriber, const testing::TempDir& dir) {
  // Written whole, then renamed: the subscriber never reads a half-written number.
  const std::string written = dir.write("stop.tmp", std::to_string(publisher.next_sequence(kTopic) - 1));
  EXPECT_EQ(std::rename(written.c_str(), dir.file("stop").c_str()), 0);
  const std::optional<std::string> report = subscriber.read_line(15s);
  EXPECT_EQ(subscriber.wait(5s), 0) << "the subscriber failed (its stderr says why)";
  if (!report) return nlohmann::json::object();
  return nlohmann::json::parse(*report);
}

std::vector<uint64_t> blocks_of(const nlohmann::json& report) {
  std::vector<uint64_t> blocks;
  for (const auto& hash : report.at("blocks")) blocks.push_back(hash.get<uint64_t>());
  return blocks;
}

TEST(KvEventsWire, EncodesBatchesAsVllmTaggedArrays) {
  KvEventBatch batch;
  batch.timestamp = 1700000000.25;
  batch.events.emplace_back(KvBlockStored{{0xfedcba9876543210ull, 7}, std::nullopt, {1, -2, 3, 4, 5, 6}, 3});
  batch.events.emplace_back(KvBlockStored{{9}, 0xfedcba9876543210ull, {7, 8, 9}, 3});
  batch.events.emplace_back(KvBlockRemoved{{9, 7}});
  batch.events.emplace_back(KvAllBlocksCleared{});
  const std::string payload = server::encode_kv_event_batch(batch);
  const msgpack::object_handle handle = msgpack::unpack(payload.data(), payload.size());
  const msgpack::object& root = handle.get();
  ASSERT_EQ(root.type, msgpack::type::ARRAY);
  ASSERT_EQ(root.via.array.size, 3u);
  EXPECT_EQ(root.via.array.ptr[0].type, msgpack::type::FLOAT64);
  EXPECT_EQ(root.via.array.ptr[0].as<double>(), 1700000000.25);
  EXPECT_TRUE(root.via.array.ptr[2].is_nil());  // data_parallel_rank
  const msgpack::object& events = root.via.array.ptr[1];
  ASSERT_EQ(events.type, msgpack::type::ARRAY);
  ASSERT_EQ(events.via.array.size, 4u);

  const msgpack::object* stored = events.via.array.ptr[0].via.array.ptr;
  ASSERT_EQ(events.via.array.ptr[0].via.array.size, 7u);
  EXPECT_EQ(stored[0].as<std::string>(), "BlockStored");
  EXPECT_EQ(stored[1].as<std::vector<uint64_t>>(), (std::vector<uint64_t>{0xfedcba9876543210ull, 7}));
  EXPECT_EQ(stored[1].via.array.ptr[0].type, msgpack::type::POSITIVE_INTEGER);
  EXPECT_TRUE(stored[2].is_nil());
  EXPECT_EQ(stored[3].as<std::vector<int32_t>>(), (std::vector<int32_t>{1, -2, 3, 4, 5, 6}));
  EXPECT_EQ(stored[4].as<int32_t>(), 3);
  EXPECT_TRUE(stored[5].is_nil());  // lora_id
  EXPECT_TRUE(stored[6].is_nil());  // medium
  const msgpack::object* child = events.via.array.ptr[1].via.array.ptr;
  EXPECT_EQ(child[2].as<uint64_t>(), 0xfedcba9876543210ull);

  const msgpack::object* removed = events.via.array.ptr[2].via.array.ptr;
  ASSERT_EQ(events.via.array.ptr[2].via.array.size, 3u);
  EXPECT_EQ(removed[0].as<std::string>(), "BlockRemoved");
  EXPECT_EQ(removed[1].as<std::vector<uint64_t>>(), (std::vector<uint64_t>{9, 7}));
  EXPECT_TRUE(removed[2].is_nil());  // medium

  ASSERT_EQ(events.via.array.ptr[3].via.array.size, 1u);
  EXPECT_EQ(events.via.array.ptr[3].via.array.ptr[0].as<std::string>(), "AllBlocksCleared");

  // Small hashes too go out in the 9-byte uint64 form (0xcf, big-endian): the llm-d indexer
  // accepts no narrower integer as a hash.
  const std::string nine = std::string("\xcf\0\0\0\0\0\0\0", 8) + '\x09';
  const std::string seven = std::string("\xcf\0\0\0\0\0\0\0", 8) + '\x07';
  EXPECT_NE(payload.find(nine), std::string::npos);
  EXPECT_NE(payload.find(seven), std::string::npos);
}

TEST(KvEventsPublisher, EndpointErrorsNameTheEndpoint) {
  KvEventsPublisher first("tcp://*:*");
  const std::string taken = first.endpoint();  // "tcp://0.0.0.0:PORT"
  EXPECT_EQ(taken.rfind("tcp://0.0.0.0:", 0), 0u) << taken;
  const std::string wildcard = "tcp://*:" + taken.substr(taken.rfind(':') + 1);
  for (const std::string& endpoint : {wildcard, std::string("nonsense://*")}) {
    try {
      KvEventsPublisher second(endpoint);
      ADD_FAILURE() << endpoint << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find("'" + endpoint + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(KvEventsPublisher, ASubscriberRebuildsTheEngineCacheExactly) {
  testing::TempDir dir;
  KvEventsPublisher publisher("tcp://127.0.0.1:*");
  std::string endpoint;
  std::unique_ptr<ChildProcess> subscriber = start_subscriber(
      {"--endpoint", publisher.endpoint(), "--topic", "kv@", "--strict", "--until-file", dir.file("stop")}, &endpoint);
  ASSERT_TRUE(subscriber);
  ASSERT_TRUE(wait_until_receiving(publisher, *subscriber));

  // 12 blocks of 4 under concurrent prompts from two stems: prefix hits, evictions, preemptions.
  int32_t removals = 0;  // counted on the worker, read after the engine is idle
  EngineConfig config;
  config.block_size = 4;
  config.num_kv_blocks = 12;
  config.max_batch_size = 3;
  Engine engine(testing::fixture_dir("llama-tiny"), config);
  engine.set_kv_event_listener([&](const KvEventBatch& batch) {
    for (const KvEvent& event : batch.events) removals += std::holds_alternative<KvBlockRemoved>(event) ? 1 : 0;
    publisher.publish(kTopic, batch);
  });
  std::vector<StreamHandle> streams;
  for (int32_t i = 0; i < 12; ++i) {
    Request r;
    r.prompt_ids = ids(6, i % 2 == 0 ? 10 : 300);
    for (int32_t k = 0; k < 4 + i % 5; ++k) r.prompt_ids.push_back(50 + (i * 7 + k) % 40);
    r.params.max_tokens = 8;
    r.params.ignore_eos = true;
    streams.push_back(engine.generate_streaming(r));
  }
  for (StreamHandle& stream : streams) testing::drain(stream);
  ASSERT_EQ(testing::check_idle(engine), "");
  const std::vector<uint64_t> cached = engine.kv_cached_block_hashes();  // after the last batch went out

  const nlohmann::json report = stop_subscriber(publisher, *subscriber, dir);
  ASSERT_TRUE(report.contains("blocks")) << report.dump();
  EXPECT_GT(report.at("events").get<int64_t>(), 0);
  EXPECT_GT(removals, 0);
  EXPECT_FALSE(cached.empty());
  EXPECT_EQ(blocks_of(report), cached);
}

TEST(KvEventsPublisher, ConnectsToASubscriberThatBindsAsTheLlmdIndexerDoes) {
  testing::TempDir dir;
  std::string endpoint;
  std::unique_ptr<ChildProcess> subscriber = start_subscriber(
      {"--bind", "--endpoint", "tcp://127.0.0.1:*", "--strict", "--until-file", dir.file("stop")}, &endpoint);
  ASSERT_TRUE(subscriber);
  KvEventsPublisher publisher(endpoint);  // no wildcard: connects
  EXPECT_EQ(publisher.endpoint(), endpoint);
  ASSERT_TRUE(wait_until_receiving(publisher, *subscriber));

  const std::vector<int32_t> tokens = ids(12, 1);
  const std::vector<uint64_t> chain = testing::chain_hashes(tokens, 4, 3);
  publisher.publish(kTopic, {now_s(), {KvBlockStored{{chain[0], chain[1]}, std::nullopt, ids(8, 1), 4}}});
  publisher.publish(kTopic, {now_s(), {KvBlockStored{{chain[2]}, chain[1], ids(4, 9), 4}, KvBlockRemoved{{chain[2]}}}});
  const nlohmann::json report = stop_subscriber(publisher, *subscriber, dir);
  ASSERT_TRUE(report.contains("blocks")) << report.dump();
  std::vector<uint64_t> expected = testing::chain_hashes(tokens, 4, 2);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(blocks_of(report), expected);
  EXPECT_GE(report.at("batches").get<int64_t>(), 3);
}

}  // namespace
}  // namespace izwi
