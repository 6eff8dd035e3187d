#pragma once
// The playground page at GET / (server/playground/index.html, docs/serving.md#playground): its
// bytes, built into the binary, and the settings it reads from GET /playground/config.

#include <nlohmann/json.hpp>
#include <string_view>

namespace izwi::server {

/// server/playground/index.html as it was at build time (the generated playground_html.cpp).
std::string_view playground_html();

/// {"realtime_port": PORT or null, "api_key_required": BOOL}: what the page cannot learn from
/// /v1/models (the WebSocket listens on a port of its own; the models need the key first).
nlohmann::json playground_config(int realtime_port, bool api_key_required);

}  // namespace izwi::server
