// The izwi-server binary: it prints where it listens, a bad command line or model folder is an
// error naming it (exit 1), and SIGTERM lets a running stream finish, then exits 0.

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "common/reference.h"

extern char** environ;

namespace izwi {
namespace {

const std::string kServer = std::string(IZWI_BINARY_DIR) + "/server/izwi-server";

/// izwi-server started with `args`; its stdout is read line by line.
class ServerProcess {
 public:
  explicit ServerProcess(std::vector<std::string> args) {
    int out[2];
    EXPECT_EQ(pipe(out), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    args.insert(args.begin(), kServer);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid_, kServer.c_str(), &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    out_ = fdopen(out[0], "r");
  }
  ~ServerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      wait_exit();
    }
    fclose(out_);
  }
  std::string line() {
    char buffer[4096];
    return fgets(buffer, sizeof(buffer), out_) != nullptr ? std::string(buffer) : std::string();
  }
  int wait_exit() {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  void signal(int sig) { kill(pid_, sig); }

 private:
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
};

TEST(ServerProcess, SigtermLetsTheRunningStreamFinishThenExitsZero) {
  ServerProcess server({"--model", "q=" + testing::fixture_dir("qwen3-tiny"), "--port", "0"});
  const std::string listening = server.line();
  const size_t colon = listening.rfind(':');
  ASSERT_NE(listening.find("listening on http://127.0.0.1:"), std::string::npos) << listening;
  const int port = std::stoi(listening.substr(colon + 1));
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
    if (!signalled) server.signal(SIGTERM);  // mid-stream
    signalled = true;
    return true;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  client.send(req, res, error);
  EXPECT_NE(streamed.find("\"finish_reason\":\"length\""), std::string::npos) << streamed.substr(0, 300);
  EXPECT_NE(streamed.find("data: [DONE]"), std::string::npos);
  EXPECT_NE(server.line().find("SIGTERM, shutting down"), std::string::npos);
  EXPECT_EQ(server.wait_exit(), 0);
}

TEST(ServerProcess, BadArgumentsAreNamed) {
  {
    ServerProcess server({"--model", "q"});
    EXPECT_NE(server.line().find("--model 'q' must be NAME=DIR"), std::string::npos);
    EXPECT_EQ(server.wait_exit(), 1);
  }
  {
    ServerProcess server({"--model", "q=/no/such/folder"});
    EXPECT_NE(server.line().find("/no/such/folder"), std::string::npos);
    EXPECT_EQ(server.wait_exit(), 1);
  }
}

}  // namespace
}  // namespace izwi
