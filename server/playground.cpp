#include "server/playground.h"

namespace izwi::server {

nlohmann::json playground_config(int realtime_port, bool api_key_required) {
  return {{"realtime_port", realtime_port >= 0 ? nlohmann::json(realtime_port) : nlohmann::json(nullptr)},
          {"api_key_required", api_key_required}};
}

}  // namespace izwi::server
