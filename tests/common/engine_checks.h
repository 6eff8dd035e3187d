#pragma once
// Assertions about a whole engine: idle with every block free or only cached, invariants held.

#include <string>

#include "engine/engine_impl.h"
#include "izwi/engine.h"

namespace izwi::testing {

/// Waits (bounded) until the engine has no live request, then checks the cache and queue
/// invariants on the worker thread. Returns "" when all hold, otherwise what is wrong.
std::string check_idle(Engine& engine);

/// Reads a streamed request to its end; returns the tokens and sets `last` to the final chunk.
std::vector<int32_t> drain(StreamHandle& handle, StreamChunk* last = nullptr);

}  // namespace izwi::testing
