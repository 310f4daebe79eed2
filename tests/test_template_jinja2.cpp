// Chat templates rendered by edgellm against Python's jinja2 set up as
// transformers' apply_chat_template sets it up (tests/jinja2_ref.py): what the
// models' authors wrote and tested their templates with, so the reference for
// what a prompt must be. Debian's python3-jinja2 (scripts/setup.sh installs it).
//
// Every template in ../shared/testdata/templates meets the shared
// conversations (template_conversations.h), with and without the generation
// prompt. Where jinja2 renders, edgellm must produce the same bytes; where
// jinja2 raises (a template bug: an undefined variable it prints, a list it
// appends to in the sandbox, "System role not supported"), edgellm must fail
// too, with an error naming the template line.
#include <gtest/gtest.h>

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "run_cli.h"
#include "template/chat.h"
#include "template/json.h"
#include "template_conversations.h"

namespace edgellm::tmpl {
namespace {

using test_conversations::kConversations;

// Where edgellm still parts from jinja2 on the shared templates
// ("TEMPLATE.CONVERSATION"), and why; none today. Each must still differ (an
// entry that starts to agree fails, so the list stays true).
const std::map<std::string, std::string> kKnownDifferences = {};

// Python jinja2 semantics that the templates rely on, one feature a line.
const char* const kSnippets[] = {
    // An undefined variable iterates as empty, is falsy, has length 0.
    R"J({% for t in no_tools %}x{% else %}none{% endfor %}|{{ no_tools|length }}|{{ no_tools|string }}|{{ 'yes' if no_tools else 'no' }}|{{ none|selectattr('a')|list }}|{{ no_tools|selectattr('type', 'equalto', 'f')|list|length }})J",
    // Integer dict keys: literal, lookup, iteration, dictsort, tojson.
    R"J({% set d = {1: 'one', 16384: 'big', 'k': 2} %}{{ d[16384] }}{{ d[1] }}{% for k, v in d.items() %}{{ 'i' if k is integer else 's' }}{% endfor %}{% for k, v in {3: 'c', 2: 'b'}|dictsort %}{{ k + 1 }}={{ v }};{% endfor %}{{ {7: 1}|tojson }})J",
    // str.format: automatic, numbered and named fields, escaped braces, specs.
    R"J({{ '<{}|{}>'.format('a', 2) }}{{ '{0}{1}{0}'.format('x', 'y') }}{{ '{name}={v}'.format(name='k', v=1.5) }}{{ '{{}}{:>4}|{:<3}|{:^5}|{:.2f}|{:d}'.format(7, 'ab', 'c', 3.14159, 42) }}{{ '{}'.format(none) }}{{ '{}'.format(true) }})J",
    // The string filter is Python's str().
    R"J({{ {'a': [1, 'x', none, true, 2.5], 'q': "it's"}|string }} {{ [1, 2]|string }} {{ none|string }} {{ true|string }} {{ 5|string }} {{ 'é\n'|string }})J",
    // map and selectattr give generators in jinja2: |list makes them lists for tojson.
    R"J({{ [{'a': 1}, {'a': 2}]|map(attribute='a')|list|tojson }}{{ [{'a': 1}]|selectattr('a')|list|tojson }}{{ [{'a': 'x'}]|map(attribute='a')|join }})J",
    // |safe makes a Markup: adding a plain string to it HTML-escapes that string.
    R"J({{ "<b>"|safe + "<i>'&\"" }}|{{ "a>" + "<"|safe }}|{{ "<"|safe ~ "<" }}|{{ "<x>"|safe }})J",
    // strip with characters, min and max.
    R"J({{ '\n\nx\n'.lstrip('\n') }}|{{ 'xxhixx'.strip('x') }}|{{ 'ab--'.rstrip('-') }}|{{ [3, 1, 2]|min }}{{ [3, 1, 2]|max }}{{ ['b', 'A', 'c']|min }})J",
};
// ... and what jinja2 rejects: edgellm must too.
const char* const kRejected[] = {
    "{{ no_such.attr }}",                     // attribute of undefined
    "{% for x in none %}{% endfor %}",        // None is not iterable
    "{{ '{} {}'.format(1) }}",                // a missing argument
    "{{ '{'.format(1) }}",                    // an unmatched brace
    "{{ '{x}'.format(1) }}",                  // no such keyword
    "{{ [{'a': 1}]|map(attribute='a')|tojson }}",  // a generator is not JSON serializable
};

const char* const kBos = "<s>";
const char* const kEos = "</s>";

using test_conversations::dirname_of;
using test_conversations::exists;
using test_conversations::quote;
using test_conversations::read_file;
using test_conversations::write_file;

struct Job {
  std::string key, tmpl, messages, out;
  bool gen = false;
};
struct Result {
  bool ok = false;
  std::string text;  // output, or error message
};

class Jinja2Reference : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Debian's python3 first (its python3-jinja2 is the reference), then any python3 on PATH.
    for (const char* py : {"/usr/bin/python3", "python3"}) {
      if (test::run_shell(std::string(py) + " -c 'import jinja2' >/dev/null 2>&1").exit_code == 0) {
        python_ = py;
        break;
      }
    }
    if (python_.empty()) {
      skip_ = "python3 with jinja2 is not installed, so edgellm's chat templates cannot be compared with Python's "
              "jinja2 (transformers' renderer); run scripts/setup.sh or apt-get install python3-jinja2";
      return;
    }
    // A work folder per process: CTest runs these tests in parallel processes.
    work_ = dirname_of(EDGELLM_CLI) + "/jinja2-ref/work-" + std::to_string(getpid());
    test::run_command({"/bin/rm", "-rf", work_});
    test::run_command({"/bin/mkdir", "-p", work_ + "/out", work_ + "/tpl"});
    for (const auto& c : kConversations) write_file(work_ + "/" + c.name + ".json", c.json);
  }

  static void TearDownTestSuite() {
    if (!work_.empty()) test::run_command({"/bin/rm", "-rf", work_});
  }

  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
  }

  // Renders every job with jinja2, in one Python process.
  static void run_reference(const std::vector<Job>& jobs) {
    Json batch = Json::array();
    for (const Job& j : jobs)
      batch.push_back(Json::object({{"template", Json::string(j.tmpl)}, {"messages", Json::string(j.messages)},
                                    {"add_generation_prompt", Json::boolean(j.gen)}, {"bos_token", Json::string(kBos)},
                                    {"eos_token", Json::string(kEos)}, {"out", Json::string(j.out)}}));
    const std::string file = work_ + "/jobs" + std::to_string(batches_++) + ".json";
    write_file(file, batch.dump());
    const std::string script = dirname_of(__FILE__) + "/jinja2_ref.py";
    const auto r = test::run_shell(python_ + " " + quote(script) + " --batch " + quote(file), "", 600);
    ASSERT_TRUE(r.exited_with(0)) << "the jinja2 reference renderer failed:\n" << r.describe();
  }

  static Result reference(const Job& j) {
    if (exists(j.out)) return {true, read_file(j.out)};
    if (exists(j.out + ".err")) return {false, read_file(j.out + ".err")};
    return {false, "(the reference wrote no result)"};
  }

  static Result ours(const Job& j) {
    try {
      const Conversation c = parse_conversation(read_file(j.messages), j.messages);
      return {true, render_chat(read_file(j.tmpl), c.messages, j.gen, kBos, kEos, c.extra)};
    } catch (const Error& e) {
      return {false, e.what()};
    }
  }

  // Empty when edgellm agrees with jinja2 on the job, else what differs.
  static std::string difference(const Job& j) {
    const Result ref = reference(j), got = ours(j);
    if (ref.ok && !got.ok) return "jinja2 renders it but edgellm fails: " + got.text;
    if (!ref.ok && got.ok) return "jinja2 fails (" + ref.text + ") but edgellm renders:\n" + got.text;
    if (!ref.ok) {  // both fail: edgellm's error must say where
      if (got.text.find("line ") == std::string::npos) return "edgellm's error does not name the line: " + got.text;
      return "";
    }
    if (ref.text == got.text) return "";
    size_t at = 0;
    while (at < ref.text.size() && at < got.text.size() && ref.text[at] == got.text[at]) ++at;
    const size_t from = at > 80 ? at - 80 : 0;
    return "output differs at byte " + std::to_string(at) + "\n--- jinja2 ---\n" + ref.text.substr(from, 240) +
           "\n--- edgellm ---\n" + got.text.substr(from, 240);
  }

  static std::string python_, work_, skip_;
  static int batches_;
};
std::string Jinja2Reference::python_, Jinja2Reference::work_, Jinja2Reference::skip_;
int Jinja2Reference::batches_ = 0;

TEST_F(Jinja2Reference, EveryTemplateInTestdataRendersLikeJinja2) {
  const std::string tdir = std::string(EDGELLM_SHARED_DIR) + "/testdata/templates";
  std::vector<std::string> templates;
  if (DIR* d = opendir(tdir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 6 && n.substr(n.size() - 6) == ".jinja") templates.push_back(n.substr(0, n.size() - 6));
    }
    closedir(d);
  }
  std::sort(templates.begin(), templates.end());
  ASSERT_FALSE(templates.empty()) << "no templates in " << tdir;
  std::vector<Job> jobs;
  for (const std::string& t : templates)
    for (const auto& c : kConversations)
      for (bool gen : {false, true}) {
        const std::string key = t + "." + c.name;
        jobs.push_back({key, tdir + "/" + t + ".jinja", work_ + "/" + c.name + ".json",
                        work_ + "/out/" + key + (gen ? ".gen" : ""), gen});
      }
  run_reference(jobs);
  std::map<std::string, bool> template_agrees;
  int both_fail = 0;
  for (const Job& j : jobs) {
    const std::string t = j.key.substr(0, j.key.rfind('.'));  // template names may hold dots
    const std::string diff = difference(j);
    if (!reference(j).ok) ++both_fail;
    const auto known = kKnownDifferences.find(j.key);
    if (known != kKnownDifferences.end()) {
      EXPECT_FALSE(diff.empty()) << j.key << " now agrees with jinja2: remove it from kKnownDifferences";
    } else {
      EXPECT_TRUE(diff.empty()) << j.tmpl << " with " << j.messages << (j.gen ? " (+generation prompt)" : "") << ": "
                                << diff;
    }
    template_agrees.emplace(t, true);
    if (!diff.empty()) template_agrees[t] = false;
  }
  int identical = 0;
  for (const auto& [t, ok] : template_agrees) identical += ok;
  std::cout << "\n" << identical << " of " << template_agrees.size()
            << " templates agree with jinja2 on every conversation (" << both_fail << " of " << jobs.size()
            << " renderings fail in jinja2 and in edgellm alike); known differences:\n";
  for (const auto& [k, why] : kKnownDifferences) std::cout << "  " << k << ": " << why << "\n";
}

TEST_F(Jinja2Reference, PythonSemanticsSnippetsAgreeWithJinja2) {
  std::vector<Job> jobs;
  int k = 0;
  const auto add = [&](const char* text, const char* kind) {
    const std::string p = work_ + "/tpl/" + kind + std::to_string(k++) + ".jinja";
    write_file(p, text);
    jobs.push_back({kind, p, work_ + "/user_only.json", p + ".out", true});
  };
  for (const char* s : kSnippets) add(s, "snippet");
  for (const char* s : kRejected) add(s, "rejected");
  run_reference(jobs);
  for (const Job& j : jobs) {
    SCOPED_TRACE(read_file(j.tmpl));
    EXPECT_EQ(difference(j), "");
    const Result ref = reference(j);
    EXPECT_EQ(ref.ok, j.key == "snippet") << "jinja2 " << (ref.ok ? "renders" : "rejects") << " it: " << ref.text;
  }
}

}  // namespace
}  // namespace edgellm::tmpl
