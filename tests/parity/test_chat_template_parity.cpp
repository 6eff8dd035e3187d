// Real chat templates (tests/data/chat_templates) rendered by izwi's Jinja interpreter, byte for
// byte against Jinja2 with transformers' settings (tests/parity/chat_template_reference.py, run
// now with Debian's /usr/bin/python3 and python3-jinja2): every template x conversation, with and
// without the generation prompt, with and without tools, with each keyword-argument variant.
// Where Jinja2 raises, izwi must raise a typed error naming the template and a line.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "common/shell_quote.h"
#include "izwi/errors.h"
#include "template/chat_template.h"

namespace izwi {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

const std::string kDir = std::string(IZWI_TEST_DATA_DIR) + "/chat_templates";
const char* const kPython = "/usr/bin/python3";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> template_files() {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(kDir)) {
    if (entry.path().extension() == ".jinja") out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Runs the reference script; "" when it printed nothing (e.g. the interpreter or jinja2 is missing).
std::string jinja2_reference(const std::vector<std::string>& templates) {
  std::string command = std::string(kPython) + " " +
                        cli::shell_quoted(std::string(IZWI_TEST_DATA_DIR) + "/../parity/chat_template_reference.py") +
                        " " + cli::shell_quoted(kDir + "/conversations.json");
  for (const auto& t : templates) command += " " + cli::shell_quoted(t);
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe.get())) > 0) out.append(buf, n);
  return out;
}

TEST(ChatTemplateParity, RealTemplatesRenderLikeJinja2) {
  const std::vector<std::string> files = template_files();
  ASSERT_GE(files.size(), 20u);
  const std::string reference = jinja2_reference(files);
  // The reference is part of the proof: without it the test fails rather than skips.
  ASSERT_FALSE(reference.empty())
      << kPython << " with jinja2 printed no reference (cmake/install_deps.sh installs python3-jinja2)";
  const ordered_json cases = ordered_json::parse(read_file(kDir + "/conversations.json"));
  std::map<std::string, ordered_json> conversations;
  for (const auto& c : cases["conversations"]) conversations[c["name"].get<std::string>()] = c["messages"];
  std::map<std::string, std::unique_ptr<jinja::ChatTemplate>> templates;
  for (const auto& f : files) {
    const std::string name = fs::path(f).filename().string();
    templates[name] = std::make_unique<jinja::ChatTemplate>(read_file(f), name);
  }

  size_t rendered = 0, raised = 0;
  std::map<std::string, size_t> per_template;
  for (const auto& e : ordered_json::parse(reference)) {
    const std::string name = e["template"];
    jinja::ChatTemplateInputs in;
    in.messages = conversations.at(e["conversation"].get<std::string>());
    in.tools = e["tools"].is_null() ? ordered_json() : cases["tool_sets"][e["tools"].get<std::string>()];
    in.add_generation_prompt = e["add_generation_prompt"];
    in.special_tokens = cases["special_tokens"];
    in.kwargs = e["kwargs"];
    const std::string what = name + " / " + e["conversation"].get<std::string>() +
                             " / add_generation_prompt=" + e["add_generation_prompt"].dump() +
                             " / tools=" + e["tools"].dump() + " / kwargs=" + e["kwargs"].dump();
    if (e.contains("error")) {
      try {
        templates.at(name)->render(in);
        ADD_FAILURE() << what << ": Jinja2 raised (" << e["error"].get<std::string>() << "), izwi rendered";
      } catch (const Error& err) {
        const std::string message = err.what();
        EXPECT_NE(message.find("chat template '" + name + "' line "), std::string::npos) << what << ": " << message;
        ++raised;
      }
      continue;
    }
    try {
      EXPECT_EQ(templates.at(name)->render(in), e["text"].get<std::string>()) << what;
      ++rendered;
      ++per_template[name];
    } catch (const Error& err) {
      ADD_FAILURE() << what << ": izwi raised " << err.what();
    }
  }
  // Every template renders most of the conversations (not just raises).
  for (const auto& [name, count] : per_template) EXPECT_GE(count, 20u) << name;
  EXPECT_EQ(per_template.size(), files.size());
  EXPECT_GT(rendered, 5000u);
  std::cout << rendered << " renders equal to Jinja2's, " << raised << " raised by both\n";
}

}  // namespace
}  // namespace izwi
