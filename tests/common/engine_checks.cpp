#include "common/engine_checks.h"

#include <chrono>
#include <thread>

#include <fmt/format.h>

namespace izwi::testing {

std::string check_idle(Engine& engine) {
  detail::EngineImpl& impl = detail::EngineImpl::of(engine);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::string problem;
  while (true) {
    bool idle = false;
    impl.run_on_worker([&](EngineCore& core) {
      idle = !core.has_unfinished();
      if (!idle) return;
      problem = core.check_invariants();
      const KVCacheStats stats = core.cache().stats();
      if (problem.empty() && stats.used_blocks != 0) problem = fmt::format("{} blocks still in use", stats.used_blocks);
      if (problem.empty() && stats.free_blocks + stats.cached_blocks != stats.total_blocks) {
        problem =
            fmt::format("free {} + cached {} != total {}", stats.free_blocks, stats.cached_blocks, stats.total_blocks);
      }
    });
    if (idle) return problem;
    if (std::chrono::steady_clock::now() > deadline) return "engine did not become idle within 30 s";
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::vector<int32_t> drain(StreamHandle& handle, StreamChunk* last) {
  std::vector<int32_t> tokens;
  while (std::optional<StreamChunk> chunk = handle.next()) {
    tokens.insert(tokens.end(), chunk->tokens.begin(), chunk->tokens.end());
    if (chunk->finished && last != nullptr) *last = *chunk;
  }
  return tokens;
}

}  // namespace izwi::testing
