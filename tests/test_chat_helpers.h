// What the chat tests share: reading the turn lines and --dump-kv-tokens
// output of `edgellm chat`, and what `edgellm template --tokens` says the
// cache should hold.
#pragma once
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "run_cli.h"
#include "test_models.h"

namespace edgellm::test {

inline std::vector<int32_t> parse_ids(const std::string& s) {
  std::vector<int32_t> ids;
  std::istringstream in(s);
  for (std::string x; std::getline(in, x, ',');)
    if (!x.empty()) ids.push_back(int32_t(std::stol(x)));
  return ids;
}

// What --dump-kv-tokens printed after one turn.
struct KvDump {
  std::string messages;  // JSON
  size_t n = 0, prompt = 0, reply = 0;
  std::vector<int32_t> ids;
};
inline std::vector<KvDump> kv_dumps(const std::string& err) {
  std::vector<KvDump> out;
  std::istringstream in(err);
  const std::regex tokens_re("kv-tokens: (\\d+) \\(prompt (\\d+), reply (\\d+)\\): ([0-9,]*)");
  std::string messages;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.rfind("kv-messages: ", 0) == 0) {
      messages = line.substr(13);
    } else if (std::regex_match(line, m, tokens_re)) {
      out.push_back({messages, std::stoul(m[1]), std::stoul(m[2]), std::stoul(m[3]), parse_ids(m[4])});
    }
  }
  return out;
}

// The turn lines ("timings: turn N | ...") in the chat's stderr.
inline std::vector<std::string> turn_lines(const std::string& err) {
  std::vector<std::string> out;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("timings: turn ", 0) == 0) out.push_back(line);
  return out;
}
inline int count_turns(const std::string& err) { return int(turn_lines(err).size()); }

// `edgellm template --tokens --add-generation-prompt` for a conversation,
// with the built-in template `tmpl` (or, with tmpl "", what `extra` names).
inline std::vector<int32_t> template_tokens(const std::string& model, const std::string& tmpl,
                                            const std::string& messages, std::vector<std::string> extra = {}) {
  const std::string path = temp_dir() + "/chat-kv-messages.json";
  std::ofstream(path, std::ios::binary) << messages;
  std::vector<std::string> argv = {EDGELLM_CLI, "template", "-m", model, "--messages", path,
                                   "--add-generation-prompt", "--tokens"};
  if (!tmpl.empty()) argv.insert(argv.end(), {"--chat-template", tmpl});
  argv.insert(argv.end(), extra.begin(), extra.end());
  const auto r = run_command(argv);
  EXPECT_TRUE(r.exited_with(0)) << r.describe();
  return parse_ids(r.out.substr(0, r.out.find('\n')));
}

// The prompt part of the cache after a turn is exactly the conversation's
// ids as `template --tokens` gives them.
inline void expect_cache_is_the_conversation(const std::string& model, const std::string& tmpl, const KvDump& d,
                                             const std::string& what, std::vector<std::string> extra = {}) {
  ASSERT_EQ(d.ids.size(), d.n) << what;
  ASSERT_GE(d.n, d.prompt) << what;
  EXPECT_EQ(std::vector<int32_t>(d.ids.begin(), d.ids.begin() + long(d.prompt)),
            template_tokens(model, tmpl, d.messages, extra))
      << what << ": " << d.messages;
}

}  // namespace edgellm::test
