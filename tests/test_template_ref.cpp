// Chat templates rendered by edgellm against the reference renderer,
// @huggingface/jinja (the package transformers.js and the Hub use), pinned in
// tests/jinja-ref/package-lock.json and installed with `npm ci` into the build
// directory the first time (nothing is downloaded at run time by edgellm).
//
// Every template in ../shared/testdata/templates and the built-in ones meet a
// fixed set of conversations (system + user; system, user, assistant, user;
// user only; special characters and newlines; tools), with and without the
// generation prompt. Where the reference renders, edgellm must produce the
// same bytes; where the reference fails (a template bug or a feature it lacks),
// edgellm must fail too. The models the issue names go through the CLI,
// `edgellm template --template-file`, everything else through render_chat().
// Where the reference and Python's jinja2 part and edgellm follows jinja2
// (kJinja2Departures), test_template_jinja2.cpp compares instead.
#include <gtest/gtest.h>

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <set>
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

const char* const kNamedTemplates[] = {
    "Qwen-Qwen2.5-7B-Instruct",         "Qwen-Qwen3-0.6B",
    "meta-llama-Llama-3.1-8B-Instruct", "meta-llama-Llama-3.2-3B-Instruct",
    "microsoft-Phi-3.5-mini-instruct",  "google-gemma-2-2b-it",
    "mistralai-Mistral-Nemo-Instruct-2407", "HuggingFaceTB-SmolLM3-3B",
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "ibm-granite-granite-3.3-2B-Instruct",
};

using test_conversations::Conv;
using test_conversations::kConversations;

// Small templates that exercise one feature each (filters, tests, loops,
// macros, slicing, number formatting, whitespace control, ...).
const char* const kSnippets[] = {
    R"J({{ 1 + 2 }}|{{ 1.0 + 2 }}|{{ 7 / 2 }}|{{ 7 // 2 }}|{{ -7 // 2 }}|{{ 7 % 3 }}|{{ -7 % 3 }}|{{ 2 ** 10 }}|{{ 2 ** -1 }}|{{ 0.1 + 0.2 }})J",
    R"J({{ 10 / 4 }} {{ 10 / 5 }} {{ 1.5 * 2 }} {{ 3.0 }} {{ -0.0 }} {{ 123456789012345678901234 }} {{ 0.000001 }} {{ 0.0000001 }} {{ 1/3 }})J",
    R"J({{ true }} {{ false }} {{ none }} {{ undefined_var }} {{ True }} {{ [1, 'a', none, true, 2.5] }} {{ {'a': 1, 'b': [1,2]} }})J",
    R"J({{ "a" ~ 1 ~ 2.0 ~ true ~ none_var ~ [1,2] }} {{ "x" + 1 }} {{ [1,2] + [3] }})J",
    R"J({{ 'Hello World'|upper }} {{ 'Hello World'|lower }} {{ 'hello wörld foo_bar'|title }} {{ 'élan vital'|capitalize }} {{ '  x  '|trim }}|{{ "a\nb\n\nc"|indent }}|{{ "a\nb"|indent(2, true) }})J",
    R"J({{ "  padded  ".strip() }}|{{ "  padded  ".lstrip() }}|{{ "  padded  ".rstrip() }}|{{ "abc".startswith("a") }} {{ "abc".endswith(("x","c")) }} {{ "a,b,,c".split(",") }} {{ " a  b c ".split() }} {{ "a b c".split(none, 1) }} {{ "a,b,c".split(",", 1) }})J",
    R"J({{ "aaa".replace("a", "bb") }} {{ "aaa".replace("a", "b", 2) }} {{ "abc".replace("", "-") }} {{ "hello"|replace("l", "L") }} {{ "hello".upper() }} {{ "HeLLo".lower() }} {{ "abc".title() }})J",
    R"J({{ "hello"[1] }} {{ "hello"[-1] }} {{ "hello"[1:3] }} {{ "hello"[::-1] }} {{ "hello"[:2] }} {{ "hello"[10] }} {{ [1,2,3,4,5][1:4] }} {{ [1,2,3,4,5][::2] }} {{ [1,2,3][-1] }} {{ [1,2,3][5] }})J",
    R"J({{ "héllo 日本 🚀"|length }} {{ "héllo 日本 🚀"[7:] }} {{ "🚀x"[0] }} {{ "abc"|list if false else 'skip' }} {{ [3,1,2]|sort }} {{ ['b','A','a','C']|sort }} {{ [3,1,2]|reverse }} {{ [1,2,2,3,1]|unique }})J",
    R"J({{ [1,2,3]|first }} {{ [1,2,3]|last }} {{ [1,2,3]|length }} {{ [1,2,3]|join }} {{ [1,2,3]|join(", ") }} {{ "abc"|join("-") }} {{ [1,[2,3],none,'x']|join("|") }} {{ 5|string }} {{ 5.0|string }})J",
    R"J({{ "42"|int }} {{ "4.5"|float }} {{ "abc"|int }} {{ "abc"|int(7) }} {{ 3.7|int }} {{ -3.7|int }} {{ 3|float }} {{ true|int }} {{ -5|abs }} {{ " 12abc"|int }} {{ "1e3"|float }})J",
    R"J({{ x|default("dflt") }} {{ ""|default("empty", true) }} {{ none|default("n") }} {{ 0|default(5, true) }})J",
    R"J({{ {'b': 2, 'a': 1}|tojson }} {{ {'b': 2, 'a': 1}|tojson(sort_keys=true) }} {{ [1, {'x': 'y'}]|tojson(indent=2) }} {{ "é\"\n\t<"|tojson }} {{ "é🚀"|tojson(ensure_ascii=true) }} {{ {'a': [1,2]}|tojson(separators=(',', ':')) }} {{ 1.0|tojson }} {{ none|tojson }} {{ undefined_x|tojson }})J",
    R"J({% for i in range(3) %}{{ i }}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.previtem }}{{ loop.nextitem }};{% endfor %})J",
    R"J({% for i in range(1, 10, 3) %}{{ i }},{% endfor %}|{% for i in range(5, 0, -2) %}{{ i }},{% endfor %}|{% for i in [] %}x{% else %}empty{% endfor %}|{% for i in range(10) if i is odd %}{{ i }}{% endfor %})J",
    R"J({% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}|{% for k in {'x': 1, 'y': 2} %}{{ k }}{% endfor %}|{% for a, b in [[1,2],[3,4]] %}{{ a + b }}{% endfor %})J",
    R"J({% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %})J",
    R"J({% set ns = namespace(a=1, b='x') %}{% for i in range(3) %}{% set ns.a = ns.a + i %}{% endfor %}{{ ns.a }} {{ ns.b }} {{ ns }})J",
    R"J({% set x = 5 %}{% for i in range(2) %}{% set x = i %}{% endfor %}{{ x }}|{% set a, b = 1, 2 %}{{ a }}{{ b }}|{% set blk %}block {{ 1 + 1 }}{% endset %}{{ blk }})J",
    R"J({% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}{{ greet('Bob') }} {{ greet('Al', greeting='Hi') }} {{ greet(name='Z') }})J",
    R"J({% macro m() %}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, a=3) }})J",
    R"J({% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}inner{% endcall %})J",
    R"J({% filter upper %}shout {{ 'this' }}{% endfilter %})J",
    R"J({{ 1 == 1.0 }} {{ 1 == '1' }} {{ 'a' == 'a' }} {{ [1] == [1] }} {{ none == none }} {{ none == undefined_q }} {{ true == 1 }} {{ 'a' != 'b' }} {{ 2 < 3 }} {{ 2 >= 3 }})J",
    R"J({{ 'a' in 'cat' }} {{ 'z' not in 'cat' }} {{ 1 in [1,2] }} {{ '1' in [1,2] }} {{ 'k' in {'k': 1} }} {{ 'q' in undefined_z }})J",
    R"J({{ x is defined }} {{ x is undefined }} {{ none is none }} {{ 1 is number }} {{ 1.5 is integer }} {{ 'a' is string }} {{ [1] is iterable }} {{ {} is mapping }} {{ 3 is odd }} {{ 4 is even }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ true is boolean }} {{ range is callable }} {{ x is not defined }})J",
    R"J({{ 'yes' if 1 else 'no' }} {{ 'yes' if 0 else 'no' }} {{ ('a' if false) is defined }} {{ not true }} {{ not 0 and 1 }} {{ 0 or 'b' }} {{ [] or 'empty' }} {{ {} and 'x' }})J",
    R"J({{ messages|length }} {{ messages[0].role }} {{ messages[0]['content'] }} {{ messages|map(attribute='role')|join(',') }} {{ messages|selectattr('role', 'equalto', 'user')|list|length }} {{ messages|rejectattr('role', 'equalto', 'user')|map(attribute='role')|list }})J",
    R"J({{ messages[-1].content|tojson }} {{ messages[0].get('role') }} {{ messages[0].get('missing', 'dflt') }} {{ messages[0].keys()|list }} {{ messages[0].values()|list|length }} {{ {'b': 1, 'a': 2}|dictsort }} {{ {'b': 1, 'a': 2}|items|list }})J",
    R"J({{ bos_token }}{{ eos_token }}{{ add_generation_prompt }} {{ messages[0]|length }} {{ messages[0].content|length }})J",
    R"J({%- for m in messages -%}
  {{- m.role }}: {{ m.content | trim }}
{% endfor -%}
  {% if true %}
    indented
  {% endif %}
  {{ 'expr' }}
{# comment #}after comment {#- stripped -#}   x
)J",
    R"J({{- ' minus ' -}}   {{ 'y' }})J",
    R"J({% set d = {'a': {'b': [10, 20]}} %}{{ d.a.b[1] }} {{ d['a']['b'][0] }} {{ d.a.b.0 }} {{ d.missing }} {{ d.a.missing is defined }})J",
    R"J({{ 3 * 'ab' if false else (3 * 4) }} {{ 10 - 2 - 3 }} {{ 2 * 3 + 4 }} {{ (2 + 3) * 4 }} {{ -3 + 1 }} {{ +2 }} {{ - 2.5 }})J",
    R"J({{ "abc" + none_var|default("") }} {{ [1,2,3]|map(attribute='x', default=0)|list if false else 1 }} {{ [{'a': 2}, {'a': 1}]|sort(attribute='a')|map(attribute='a')|list }} {{ [{'a': 'B'}, {'a': 'a'}]|sort(attribute='a', reverse=true)|tojson }})J",
    R"J({{ range(3)|list }} {{ range(0)|length }} {{ namespace(x=1).x }} {{ {'a': 1}|length }} {{ "x"|safe }} {{ ["a", "b"]|tojson }} {{ ("a", "b")|list|tojson if false else "t" }})J",
    R"J({%- set tools_json = tools|tojson(indent=4) if tools is defined else 'none' -%}{{ tools_json }})J",
    R"J({{ 'It\'s' }} {{ "tab\there" }} {{ '\u00e9\x41' }} {{ "quote\"d" }} {{ 'a' 'b' "c" }})J",
    R"J({{ 1 if (messages|length) > 1 else 2 }}{{ messages[1:]|length }}{{ messages[:1][0].role }}{{ messages[::-1][0].role }})J",
    R"J({% if messages[0].role == 'system' %}{% set sys = messages[0].content %}{% set rest = messages[1:] %}{% else %}{% set sys = '' %}{% set rest = messages %}{% endif %}[{{ sys }}]{% for m in rest %}<{{ m.role }}>{% endfor %})J",
    R"J({{ raise_exception('boom ' ~ 1) if false else 'fine' }})J",
    R"J({% macro rec(n) %}{% if n > 0 %}{{ n }}{{ rec(n - 1) }}{% endif %}{% endmacro %}{{ rec(5) }})J",
    R"J({{ "%s"|length }} {{ "a-b_c d"|title }} {{ "ß"|upper }} {{ "ÀÉÎ"|lower }} {{ "ñandú"|upper }} {{ "Привет"|lower }} {{ "ǅ"|lower }})J",
};
// Constructs the reference rejects: edgellm must reject them too.
const char* const kRejected[] = {
    "{{ [].append(1) }}", "{{ 'a' < 'b' }}", "{% raw %}x{% endraw %}", "{{ (1, 2) }}", "{{ x|nosuchfilter }}",
    "{{ 1 is divisibleby(2) }}", "{% for x in 'abc' %}{% endfor %}", "{{ none.x + 1 }}",
    "{% include 'x' %}", "{{ range(3)|first(1) }}", "{{ 'x' ~ }}",
};

// Where @huggingface/jinja parts from Python's jinja2 (what transformers and
// the models' authors use) and edgellm follows jinja2, as
// test_template_jinja2.cpp checks: not compared here. `conversations` lists
// the conversations concerned (space-separated), or is null for all.
struct Departure {
  const char* tmpl;
  const char* conversations;
  const char* why;
};
const char* const kWithoutTools = "system_user multi_turn user_only special system_special";
const Departure kJinja2Departures[] = {
    {"ByteDance-Seed-OSS", nullptr, "integer dict keys ({16384: 1024})"},
    {"tencent-Hy3", nullptr, "str.format()"},
    {"unsloth-Apriel-1.5", nullptr, "the length of an undefined `tools` is 0"},
    {"NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use", kWithoutTools, "an undefined `tools` iterates as empty"},
    {"NousResearch-Hermes-3-Llama-3.1-8B-tool_use", kWithoutTools, "an undefined `tools` iterates as empty"},
    {"CohereForAI-c4ai-command-r-plus-tool_use", kWithoutTools, "an undefined `tools` iterates as empty"},
    {"meetkai-functionary-medium-v3.1", nullptr, "selectattr of None is empty; '...'|safe + str escapes the str"},
    {"Apriel-1.6-15b-Thinker-fixed", "tools", "the string filter on a dict is Python's str()"},
    {"openbmb-MiniCPM5-1B", "tools", "the min filter"},
    {"llama-cpp-deepseek-r1", "tools", "map gives a generator, which tojson cannot serialise"},
    {"HuggingFaceTB-SmolLM3-3B", "special", "lstrip('\\n') strips only newlines"},
    {"Qwen-QwQ-32B", "special", "lstrip('\\n') strips only newlines"},
};

const char* const kBos = "<s>";
const char* const kEos = "</s>";

using test_conversations::dirname_of;
using test_conversations::exists;
using test_conversations::quote;
using test_conversations::read_file;
using test_conversations::write_file;

struct Job {
  std::string tmpl, messages, out;
  bool gen = false;
};

// The reference's result for one job: its output, or that it failed (and why).
struct RefResult {
  bool ok = false;
  std::string text;  // output, or error message
};

class JinjaReference : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (test::run_shell("command -v node >/dev/null 2>&1").exit_code != 0) {
      skip_ = "node (Node.js) is not installed, so edgellm's chat templates cannot be compared with the reference "
              "renderer @huggingface/jinja; install Node.js 18+ and npm to run these tests";
      return;
    }
    const std::string src = dirname_of(__FILE__) + "/jinja-ref";
    dir_ = dirname_of(EDGELLM_CLI) + "/jinja-ref";
    // Install the pinned package once (again only if the lock file changes); a lock serialises parallel tests.
    const std::string install =
        "mkdir -p " + quote(dir_) + " && cd " + quote(dir_) + " && flock .install.lock sh -c '"
        "if ! cmp -s " + src + "/package-lock.json package-lock.json; then rm -rf node_modules; fi; "
        // Replaced only when changed, and by rename: another test process may be
        // running render.mjs right now (node reads package.json as it starts).
        "for f in package.json package-lock.json render.mjs; do cmp -s " + src + "/$f $f || "
        "{ cp " + src + "/$f $f.tmp && mv $f.tmp $f; } || exit 1; done && "
        "if [ ! -d node_modules/@huggingface/jinja ]; then npm ci --offline --no-audit --no-fund || npm ci --no-audit --no-fund; fi'";
    const auto r = test::run_shell(install, "", 600);
    if (!r.exited_with(0)) {
      setup_error_ = "installing @huggingface/jinja with npm ci (in " + dir_ + ") failed:\n" + r.describe();
      return;
    }
    // A work folder per process: CTest runs these tests in parallel processes.
    work_ = dir_ + "/work-" + std::to_string(getpid());
    build_jobs();
  }

  static void TearDownTestSuite() {
    if (!work_.empty()) test::run_command({"/bin/rm", "-rf", work_});
  }

  // Renders `jobs` with the reference (one node process for all of them), once.
  static void run_reference(const std::vector<const Job*>& jobs) {
    Json batch = Json::array();
    for (const Job* j : jobs) {
      if (!rendered_.insert(j->out).second) continue;
      batch.push_back(Json::object({{"template", Json::string(j->tmpl)}, {"messages", Json::string(j->messages)},
                                    {"add_generation_prompt", Json::boolean(j->gen)}, {"bos_token", Json::string(kBos)},
                                    {"eos_token", Json::string(kEos)}, {"out", Json::string(j->out)}}));
    }
    if (batch.items().empty()) return;
    const std::string file = work_ + "/jobs" + std::to_string(rendered_.size()) + ".json";
    write_file(file, batch.dump());
    const auto r = test::run_shell("cd " + quote(dir_) + " && node render.mjs --batch " + quote(file), "", 600);
    ASSERT_TRUE(r.exited_with(0)) << "the reference renderer failed:\n" << r.describe();
  }

  static void build_jobs() {
    const std::string work = work_;
    test::run_command({"/bin/rm", "-rf", work});
    test::run_command({"/bin/mkdir", "-p", work + "/out", work + "/tpl"});
    for (const Conv& c : kConversations) write_file(work + "/" + c.name + ".json", c.json);
    // The shared templates.
    const std::string tdir = std::string(EDGELLM_SHARED_DIR) + "/testdata/templates";
    if (DIR* d = opendir(tdir.c_str())) {
      while (dirent* e = readdir(d)) {
        const std::string n = e->d_name;
        if (n.size() > 6 && n.substr(n.size() - 6) == ".jinja") templates_.push_back(n.substr(0, n.size() - 6));
      }
      closedir(d);
    }
    std::sort(templates_.begin(), templates_.end());
    const auto add = [&](const std::string& key, const std::string& path) {
      for (const Conv& c : kConversations)
        for (bool gen : {false, true}) {
          const std::string id = key + "." + c.name + (gen ? ".gen" : "");
          jobs_.push_back({path, work + "/" + c.name + ".json", work + "/out/" + id, gen});
        }
    };
    for (const std::string& t : templates_) add("t." + t, tdir + "/" + t + ".jinja");
    for (const std::string& b : builtin_chat_template_names()) {
      write_file(work + "/tpl/builtin." + b + ".jinja", builtin_chat_template(b));
      add("builtin." + b, work + "/tpl/builtin." + b + ".jinja");
    }
    int k = 0;
    for (const char* s : kSnippets) {
      const std::string p = work + "/tpl/snippet" + std::to_string(k++) + ".jinja";
      write_file(p, s);
      jobs_.push_back({p, work + "/tools.json", p + ".out", true});
    }
    for (const char* s : kRejected) {
      const std::string p = work + "/tpl/rejected" + std::to_string(k++) + ".jinja";
      write_file(p, s);
      jobs_.push_back({p, work + "/user_only.json", p + ".out", true});
    }
  }

  static RefResult reference(const Job& j) {
    if (exists(j.out)) return {true, read_file(j.out)};
    if (exists(j.out + ".err")) return {false, read_file(j.out + ".err")};
    return {false, "(the reference wrote no result)"};
  }

  // edgellm's rendering of a job, in process.
  static RefResult ours(const Job& j) {
    try {
      const Conversation c = parse_conversation(read_file(j.messages), j.messages);
      return {true, render_chat(read_file(j.tmpl), c.messages, j.gen, kBos, kEos, c.extra)};
    } catch (const Error& e) {
      return {false, e.what()};
    }
  }

  // ... and through `edgellm template --template-file`.
  static RefResult ours_cli(const Job& j) {
    std::vector<std::string> argv = {EDGELLM_CLI, "template", "--template-file", j.tmpl, "--messages", j.messages,
                                     "--bos-token", kBos, "--eos-token", kEos};
    if (j.gen) argv.push_back("--add-generation-prompt");
    const auto r = test::run_command(argv);
    if (r.exited_with(0)) return {true, r.out};
    if (!r.exited_with(1) || r.err.rfind("error: ", 0) != 0) return {false, "CRASH " + r.describe()};
    return {false, r.err};
  }

  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(setup_error_.empty()) << setup_error_;
  }

  static std::vector<const Job*> jobs_for(const std::string& tmpl_path) {
    std::vector<const Job*> out;
    for (const Job& j : jobs_)
      if (j.tmpl == tmpl_path) out.push_back(&j);
    return out;
  }

  static std::string stem_of(const std::string& path) {
    const std::string base = path.substr(path.find_last_of('/') + 1);
    return base.substr(0, base.find_last_of('.'));
  }
  // Whether edgellm follows jinja2 where the reference differs (kJinja2Departures).
  static bool departs(const Job& j) {
    const std::string t = stem_of(j.tmpl), conv = " " + stem_of(j.messages) + " ";
    for (const Departure& d : kJinja2Departures)
      if (t == d.tmpl && (!d.conversations || (" " + std::string(d.conversations) + " ").find(conv) != std::string::npos))
        return true;
    return false;
  }

  // Compares one job; returns true when edgellm agrees with the reference
  // (or follows jinja2 where the reference does not, see kJinja2Departures).
  static bool agree(const Job& j, const RefResult& ref, const RefResult& got) {
    if (departs(j)) return true;
    if (got.text.rfind("CRASH", 0) == 0) {
      ADD_FAILURE() << j.tmpl << " with " << j.messages << ": " << got.text;
      return false;
    }
    if (ref.ok && !got.ok) {
      ADD_FAILURE() << j.tmpl << " with " << j.messages << (j.gen ? " (+generation prompt)" : "")
                    << ": the reference renders it but edgellm fails: " << got.text;
      return false;
    }
    if (!ref.ok && got.ok) {
      ADD_FAILURE() << j.tmpl << " with " << j.messages << ": the reference fails (" << ref.text
                    << ") but edgellm renders:\n" << got.text;
      return false;
    }
    if (ref.ok && ref.text != got.text) {
      // Show where they part.
      size_t at = 0;
      while (at < ref.text.size() && at < got.text.size() && ref.text[at] == got.text[at]) ++at;
      ADD_FAILURE() << j.tmpl << " with " << j.messages << (j.gen ? " (+generation prompt)" : "")
                    << ": output differs at byte " << at << "\n--- reference ---\n" << ref.text.substr(at > 80 ? at - 80 : 0, 240)
                    << "\n--- edgellm ---\n" << got.text.substr(at > 80 ? at - 80 : 0, 240);
      return false;
    }
    return true;
  }

  static std::string dir_, work_, skip_, setup_error_;
  static std::vector<Job> jobs_;
  static std::vector<std::string> templates_;
  static std::set<std::string> rendered_;
};
std::string JinjaReference::dir_, JinjaReference::work_, JinjaReference::skip_, JinjaReference::setup_error_;
std::vector<Job> JinjaReference::jobs_;
std::vector<std::string> JinjaReference::templates_;
std::set<std::string> JinjaReference::rendered_;

TEST_F(JinjaReference, NamedModelTemplatesRenderByteIdenticalThroughTheCli) {
  const std::string tdir = std::string(EDGELLM_SHARED_DIR) + "/testdata/templates/";
  for (const char* name : kNamedTemplates) {
    SCOPED_TRACE(name);
    const std::string path = tdir + name + ".jinja";
    ASSERT_TRUE(exists(path)) << path;
    const bool no_system = std::string(name) == "google-gemma-2-2b-it";  // it raises "System role not supported"
    run_reference(jobs_for(path));
    for (const Job* j : jobs_for(path)) {
      const RefResult ref = reference(*j), got = ours_cli(*j);
      agree(*j, ref, got);
      const bool system_conv = j->messages.find("system") != std::string::npos || j->messages.find("tools") != std::string::npos ||
                               j->messages.find("multi_turn") != std::string::npos;
      if (!no_system || !system_conv) {
        EXPECT_TRUE(ref.ok) << j->messages << ": the reference cannot render this conversation: " << ref.text;
      } else {
        EXPECT_NE(got.text.find("System role not supported"), std::string::npos) << got.text;
      }
    }
  }
}

TEST_F(JinjaReference, EveryTemplateInTestdataAgreesWithTheReference) {
  const std::string tdir = std::string(EDGELLM_SHARED_DIR) + "/testdata/templates/";
  std::vector<const Job*> all;
  for (const std::string& t : templates_)
    for (const Job* j : jobs_for(tdir + t + ".jinja")) all.push_back(j);
  run_reference(all);
  std::vector<std::string> identical, partial, skipped;
  for (const std::string& t : templates_) {
    int rendered = 0, both_fail = 0, total = 0, jinja2 = 0;
    bool all_agree = true;
    std::string why;
    for (const Job* j : jobs_for(tdir + t + ".jinja")) {
      if (departs(*j)) {  // compared with jinja2 instead (test_template_jinja2.cpp)
        ++jinja2;
        continue;
      }
      const RefResult ref = reference(*j), got = ours(*j);
      all_agree &= agree(*j, ref, got);
      ++total;
      if (ref.ok) ++rendered;
      else ++both_fail, why = ref.text;
    }
    const std::string line = t + " (" + std::to_string(rendered) + "/" + std::to_string(total) + " renderings identical" +
                             (both_fail ? "; the reference fails " + std::to_string(both_fail) + ", e.g. \"" + why + "\", and so does edgellm" : "") +
                             (jinja2 ? "; " + std::to_string(jinja2) + " follow jinja2 where the reference differs" : "") + ")";
    if (!all_agree) continue;
    (rendered == 0 ? skipped : rendered == total ? identical : partial).push_back(line);
  }
  std::cout << "\nbyte-identical on every conversation (" << identical.size() << "):\n";
  for (const auto& l : identical) std::cout << "  " << l << "\n";
  std::cout << "byte-identical where the reference renders (" << partial.size() << "):\n";
  for (const auto& l : partial) std::cout << "  " << l << "\n";
  std::cout << "skipped: the reference renders none of the conversations (" << skipped.size() << "):\n";
  for (const auto& l : skipped) std::cout << "  " << l << "\n";
  EXPECT_GE(identical.size() + partial.size(), 50u);
}

TEST_F(JinjaReference, BuiltinTemplatesAgreeWithTheReference) {
  for (const std::string& b : builtin_chat_template_names()) {
    SCOPED_TRACE(b);
    run_reference(jobs_for(work_ + "/tpl/builtin." + b + ".jinja"));
    for (const Job* j : jobs_for(work_ + "/tpl/builtin." + b + ".jinja")) {
      const RefResult ref = reference(*j);
      agree(*j, ref, ours_cli(*j));
      if (j->messages.find("tools") == std::string::npos) {
        EXPECT_TRUE(ref.ok) << j->messages << ": " << ref.text;
      }
    }
  }
}

TEST_F(JinjaReference, FeatureSnippetsAgreeWithTheReference) {
  std::vector<const Job*> mine;
  for (const Job& j : jobs_)
    if (j.tmpl.find("/tpl/snippet") != std::string::npos || j.tmpl.find("/tpl/rejected") != std::string::npos)
      mine.push_back(&j);
  run_reference(mine);
  for (const Job& j : jobs_) {
    const bool snippet = j.tmpl.find("/tpl/snippet") != std::string::npos, rejected = j.tmpl.find("/tpl/rejected") != std::string::npos;
    if (!snippet && !rejected) continue;
    SCOPED_TRACE(read_file(j.tmpl));
    const RefResult ref = reference(j), got = ours(j);
    agree(j, ref, got);
    EXPECT_EQ(ref.ok, snippet) << "the reference " << (ref.ok ? "renders" : "rejects") << " it: " << ref.text;
  }
}

}  // namespace
}  // namespace edgellm::tmpl
