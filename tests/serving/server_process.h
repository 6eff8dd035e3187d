#pragma once
// izwi-server as a child process: started with a command line, its log read for where it listens.

#include <string>
#include <vector>

#include "serving/child_process.h"

namespace izwi::testing {

/// The path of the izwi-server binary.
std::string server_binary();

/// izwi-server started with `args`, its stdout and stderr read as one log.
ChildProcess start_server(std::vector<std::string> args);

/// The first line of `child`'s output that contains `marker`; "" when none comes in 60 s.
std::string line_with(ChildProcess& child, const std::string& marker);

/// The number after the last ':' of the first line with `marker`; -1 when none comes.
int port_after(ChildProcess& child, const std::string& marker);

}  // namespace izwi::testing
