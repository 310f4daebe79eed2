// The chat-template engine without the reference renderer: semantics pinned
// to @huggingface/jinja's output (the expected strings below are what it
// prints), error messages with line and construct, sandbox limits, the JSON
// parser, built-in templates and the `edgellm template` command.
// test_template_ref.cpp compares against the reference itself.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "run_cli.h"
#include "template/chat.h"
#include "template/json.h"
#include "template/template.h"

namespace edgellm::tmpl {
namespace {

Json basic_vars() {
  return Json::parse(R"({"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]})");
}

std::string render(const std::string& text, const Json& vars = basic_vars(), const Limits& lim = {}) {
  return Template::parse(text).render(vars, lim);
}

// Message of the Error that rendering `text` throws ("" if it renders).
std::string render_error(const std::string& text, const Limits& lim = {}) {
  try {
    render(text, basic_vars(), lim);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Template, MatchesReferenceSemantics) {
  // Each expected string is @huggingface/jinja 0.5.13's rendering of the template.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({{ 1 + 2 }}|{{ 1.0 + 2 }}|{{ 7 / 2 }}|{{ 7 // 2 }}|{{ -7 // 2 }}|{{ -7 % 3 }}|{{ 2 ** 10 }}|{{ 2 ** -1 }}|{{ 0.1 + 0.2 }}|{{ 10 / 5 }}|{{ -0.0 }})",
       "3|3.0|3.5|3|-4|-1|1024|0.5|0.30000000000000004|2.0|-0.0"},
      {R"({{ true }} {{ none }}|{{ undefined_var }}|{{ [1, 'a', none, true, 2.5] }} {{ {'a': 1, 'b': [1, 2]} }})",
       R"(true ||[1, "a", null, true, 2.5] {"a": 1, "b": [1, 2]})"},
      {R"({{ 'a' ~ 1 ~ 2.0 ~ true ~ undefined_var ~ [1, 2] }} {{ 'x' + 1 }} {{ [1, 2] + [3] }})", "a12true1,2 x1 [1, 2, 3]"},
      {R"({{ 'hello wörld foo_bar'|title }}|{{ 'élan'|capitalize }}|{{ '  x  '|trim }}|{{ 'a\nb\n\nc'|indent }}|{{ 'ß ñ Привет'|upper }})",
       "Hello WöRld Foo_bar|Élan|x|a\n    b\n\n    c|SS Ñ ПРИВЕТ"},
      {R"({{ ' a  b c '.split() }} {{ 'a,b,,c'.split(',') }} {{ 'a b c'.split(none, 1) }} {{ 'abc'.replace('', '-') }} {{ 'aaa'.replace('a', 'b', 2) }})",
       R"(["a", "b", "c"] ["a", "b", "", "c"] ["a", "b c"] -a-b-c- bba)"},
      {R"({{ 'héllo 日本 🚀'|length }} {{ 'héllo 🚀'[6:] }} {{ 'hello'[::-1] }} {{ [1, 2, 3, 4, 5][1:4] }} {{ [1, 2, 3][-1] }})",
       "11 🚀 olleh [2, 3, 4] 3"},
      {R"({{ ['b', 'A', 'a', 'C']|sort }} {{ [1, 2, 2, 1]|unique }} {{ [1, [2, 3], none, 'x']|join('|') }} {{ 5.0|string }} {{ ' 12abc'|int }})",
       R"(["A", "a", "b", "C"] [1, 2] 1|2,3||x 5.0 12)"},
      {R"({{ {'b': 2, 'a': 1}|tojson }} {{ [1, {'x': 'y'}]|tojson(indent=2) }} {{ 'é"\n<'|tojson }} {{ 'é🚀'|tojson(ensure_ascii=true) }} {{ {'a': [1, 2]}|tojson(separators=(',', ':')) }})",
       "{\"b\": 2, \"a\": 1} [\n  1,\n  {\n    \"x\": \"y\"\n  }\n] \"é\\\"\\n<\" \"\\u00e9\\ud83d\\ude80\" {\"a\":[1,2]}"},
      {R"({% for i in range(3) %}{{ loop.index }}{{ loop.first }}{{ loop.last }}{{ loop.revindex0 }}{{ loop.previtem }};{% endfor %}{% for i in [] %}x{% else %}empty{% endfor %})",
       "1truefalse2;2falsefalse10;3falsetrue01;empty"},
      {R"({% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}{% for i in range(10) if i is odd %}{% if i > 6 %}{% break %}{% endif %}{{ i }}{% endfor %})",
       "a=1;b=2;135"},
      {R"({% set ns = namespace(a=1) %}{% for i in range(4) %}{% set ns.a = ns.a + i %}{% set local = i %}{% endfor %}{{ ns.a }} {{ local is defined }} {{ ns }})",
       R"(7 false {"a": 7})"},
      {R"({% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}{{ greet('Bob') }} {{ greet('Al', greeting='Hi') }})",
       "Hello, Bob! Hi, Al!"},
      {R"({% macro m() %}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, a=3) }}{% macro wrap(t) %}<{{ t }}>{{ caller() }}</{{ t }}>{% endmacro %}{% call wrap('b') %}in{% endcall %})",
       R"([1, 2]{"a": 3}<b>in</b>)"},
      {R"({{ 1 == 1.0 }} {{ 1 == '1' }} {{ [1] == [1] }} {{ 1 in [1, 2] }} {{ '1' in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 'q' in undefined_var }} {{ [] or 'empty' }})",
       "true true false true false true false empty"},
      {R"({{ messages|map(attribute='role')|join(',') }} {{ messages|selectattr('role', 'equalto', 'user')|list|length }} {{ messages[0].get('nope', 'dflt') }} {{ {'b': 1, 'a': 2}|dictsort }})",
       R"(system,user 1 dflt [["a", 2], ["b", 1]])"},
      // Whitespace control: trim_blocks, lstrip_blocks, {%- -%}, comments, one trailing newline dropped.
      {"{%- for m in messages -%}\n  {{- m.role }}: {{ m.content }}\n{% endfor -%}\n  {% if true %}\n    kept\n  {% endif %}\n{# c #}x {#- s -#}   y\n",
       "system: Be brief.\nuser: Hi\n    kept\nxy"},
  };
  for (const auto& [text, want] : cases) {
    SCOPED_TRACE(text);
    EXPECT_EQ(render(text), want);
  }
}

TEST(Template, VariablesAndGenerationTags) {
  Json vars = basic_vars();
  vars.set("add_generation_prompt", Json::boolean(true));
  vars.set("tools", Json::parse(R"([{"name": "f", "n": 1.5, "i": 2.0}])"));
  EXPECT_EQ(render("{{ add_generation_prompt }} {{ tools[0].name }} {{ tools[0].n }} {{ tools[0].i }} {{ tools|tojson }}", vars),
            R"(true f 1.5 2 [{"name": "f", "n": 1.5, "i": 2}])");
  // transformers' {% generation %} markers are dropped.
  EXPECT_EQ(render("a{% generation %}b{% endgeneration %}c"), "abc");
  // A built-in cannot be shadowed by a variable of the same name.
  vars.set("range", Json::number(1));
  EXPECT_THROW(render("x", vars), Error);
}

TEST(Template, ErrorsNameLineAndConstruct) {
  const auto has = [](const std::string& msg, std::initializer_list<const char*> parts) {
    for (const char* p : parts)
      if (msg.find(p) == std::string::npos) return false;
    return true;
  };
  std::string e = render_error("line 1\n{{ messages | nosuchfilter }}");
  EXPECT_TRUE(has(e, {"line 2", "filter '|nosuchfilter'"})) << e;
  e = render_error("a\nb\n{% if x %}\nno end");
  EXPECT_TRUE(has(e, {"line 3", "{% if %} is never closed", "endif"})) << e;
  e = render_error("{% include 'other.jinja' %}");
  EXPECT_TRUE(has(e, {"line 1", "unsupported statement {% include %}"})) << e;
  e = render_error("\n\n{{ raise_exception('System role not supported') }}");
  EXPECT_TRUE(has(e, {"line 3", "raised an error: System role not supported"})) << e;
  e = render_error("{% for m in messages %}\n{{ m.content.nosuch() }}{% endfor %}");
  EXPECT_TRUE(has(e, {"line 2", "call to .nosuch()", "not a function"})) << e;
  e = render_error("{{ 'unterminated }}");
  EXPECT_TRUE(has(e, {"line 1", "unterminated string"})) << e;
  e = render_error("ok\n{{ 1 +* 2 }}");
  EXPECT_TRUE(has(e, {"line 2", "syntax error"})) << e;
  e = render_error("x\n{% endfor %}");
  EXPECT_TRUE(has(e, {"line 2", "unexpected {% endfor %}"})) << e;
  e = render_error("{% break %}");
  EXPECT_TRUE(has(e, {"line 1", "outside of a loop"})) << e;
  e = render_error("ok\n\xff");
  EXPECT_TRUE(has(e, {"line 2", "not valid UTF-8"})) << e;
  e = render_error("{{ x }}{{ none + 1 }}");
  EXPECT_TRUE(has(e, {"operator '+'", "null"})) << e;
  e = render_error("{{ x.y.z }}");  // an attribute of undefined, as in jinja2
  EXPECT_TRUE(has(e, {"line 1", "attribute '.y'", "name 'x' is undefined"})) << e;
}

TEST(Template, SandboxLimits) {
  Limits lim;
  lim.max_steps = 100'000;
  lim.max_output = 1 << 20;
  lim.max_heap = 200'000;
  // Runaway loops, recursion, output and memory end in an error, not a hang or a crash.
  EXPECT_NE(render_error("{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}", lim)
                .find("too long"),
            std::string::npos);
  // The heap bound is on what is alive: a long loop's per-iteration objects are freed as it goes...
  Limits long_run = lim;
  long_run.max_steps = 10'000'000;
  EXPECT_EQ(render("{% for i in range(100) %}{% for j in range(500) %}{{ [j, j, j]|length }}{% endfor %}{% endfor %}",
                   basic_vars(), long_run),
            std::string(50000, '3'));
  // ... while what a template keeps counts.
  EXPECT_NE(render_error("{% set ns = namespace(a=[]) %}{% for i in range(300) %}{% set ns.a = [ns.a, range(1000)|list] %}{% endfor %}", long_run)
                .find("allocates too much"),
            std::string::npos);
  EXPECT_NE(render_error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", lim).find("recurses too deeply"),
            std::string::npos);
  EXPECT_NE(render_error("{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", lim)
                .find("exceed"),
            std::string::npos);
  EXPECT_NE(render_error("{{ range(100000000)|length }}", lim).find("allocates too much"), std::string::npos);
  // Values nest boundedly (freeing a deep chain must not overflow the stack), through lists and bound methods.
  EXPECT_NE(render_error("{% set ns = namespace(a=none) %}{% for i in range(100000) %}{% set ns.a = [ns.a] %}{% endfor %}", long_run)
                .find("nested too deeply"),
            std::string::npos);
  EXPECT_NE(render_error("{% set ns = namespace(d={}) %}{% for i in range(100000) %}{% set ns.d = {'f': ns.d.get} %}{% endfor %}", long_run)
                .find("nested too deeply"),
            std::string::npos);
  EXPECT_NE(render_error("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}", lim).find("nested too deeply"),
            std::string::npos);
  std::string deep(5000, '(');
  EXPECT_NE(render_error("{{ " + deep + "1" + std::string(5000, ')') + " }}", lim).find("nests too deeply"),
            std::string::npos);
  std::string chain = "{{ 1";
  for (int i = 0; i < 5000; ++i) chain += " + 1";
  EXPECT_NE(render_error(chain + " }}", lim).find("nests too deeply"), std::string::npos);
  // No access to anything outside the variables.
  EXPECT_EQ(render("{{ self is defined }}{{ cycler is defined }}{{ lipsum is defined }}{{ config is defined }}"),
            "falsefalsefalsefalse");
}

TEST(TemplateJson, ParsesStrictly) {
  const Json j = Json::parse(R"( {"b": [1, -2.5e3, true, null], "a": "x\u00e9\ud83d\ude80\n", "b": 7} )");
  ASSERT_TRUE(j.is_object());
  ASSERT_EQ(j.entries().size(), 2u);
  EXPECT_EQ(j.entries()[0].first, "b");  // first position, last value
  EXPECT_EQ(j.find("b")->as_number(), 7);
  EXPECT_EQ(j.find("a")->as_string(), "x\xC3\xA9\xF0\x9F\x9A\x80\n");
  EXPECT_EQ(Json::parse("[1,2]").dump(), "[1,2]");
  for (const char* bad : {"", "[1,]", "{\"a\" 1}", "01", "1.", "\"a\nb\"", "[1] 2", "{'a': 1}", "nul", "\"\\x\"", "\xff"}) {
    EXPECT_THROW(Json::parse(bad), Error) << bad;
  }
  try {
    Json::parse("[1,\n  2,\n  ]", "conv.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("conv.json: line 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Json::parse(std::string(1000, '[') + std::string(1000, ']')), Error);
}

TEST(TemplateJson, JavaScriptNumberFormat) {
  const std::vector<std::pair<double, const char*>> cases = {
      {0, "0"},          {-0.0, "0"},       {1, "1"},         {-1.5, "-1.5"},       {0.1, "0.1"},
      {1e21, "1e+21"},   {1e20, "100000000000000000000"},     {1.5e-7, "1.5e-7"},   {0.000001, "0.000001"},
      {123.456, "123.456"}, {1.0 / 3, "0.3333333333333333"}, {2e-300, "2e-300"},
  };
  for (const auto& [v, want] : cases) EXPECT_EQ(js_number_to_string(v), want) << v;
}

TEST(TemplateChat, BuiltinTemplates) {
  const Json msgs = Json::parse(
      R"([{"role": "system", "content": "S"}, {"role": "user", "content": "U1"}, {"role": "assistant", "content": "A1"}, {"role": "user", "content": "U2"}])");
  EXPECT_EQ(render_chat(builtin_chat_template("chatml"), msgs, true, "", ""),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU1<|im_end|>\n<|im_start|>assistant\nA1<|im_end|>\n"
            "<|im_start|>user\nU2<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(render_chat(builtin_chat_template("llama3"), msgs, true, "<|begin_of_text|>", ""),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
            "U1<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nA1<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
            "U2<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(render_chat(builtin_chat_template("llama2"), msgs, false, "<s>", "</s>"),
            "<s>[INST] <<SYS>>\nS\n<</SYS>>\n\nU1 [/INST] A1 </s><s>[INST] U2 [/INST]");
  EXPECT_EQ(render_chat(builtin_chat_template("gemma"), msgs, true, "<bos>", ""),
            "<bos><start_of_turn>user\nS\n\nU1<end_of_turn>\n<start_of_turn>model\nA1<end_of_turn>\n<start_of_turn>user\n"
            "U2<end_of_turn>\n<start_of_turn>model\n");
  for (const std::string& name : builtin_chat_template_names())
    EXPECT_NO_THROW(render_chat(builtin_chat_template(name), msgs, true, "<s>", "</s>")) << name;
  EXPECT_EQ(builtin_chat_template("nosuch"), nullptr);
}

TEST(TemplateChat, Conversations) {
  Conversation c = parse_conversation(R"({"messages": [{"role": "user", "content": "x"}], "tools": []})");
  EXPECT_EQ(c.messages.items().size(), 1u);
  ASSERT_NE(c.extra.find("tools"), nullptr);
  EXPECT_THROW(parse_conversation(R"([{"content": "no role"}])"), Error);
  EXPECT_THROW(parse_conversation(R"({"tools": []})"), Error);
  EXPECT_THROW(parse_conversation("[1, 2"), Error);
}

// --- the CLI -------------------------------------------------------------------

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/edgellm_template_XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { test::run_command({"/bin/rm", "-rf", path}); }
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream(path + "/" + name, std::ios::binary) << content;
    return path + "/" + name;
  }
};

TEST(TemplateCli, RendersTemplateFilesAndBuiltins) {
  TempDir d;
  const std::string conv = d.write("conv.json", R"([{"role": "user", "content": "Hi\nthere"}])");
  const std::string tpl = d.write("t.jinja", "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}"
                                             "{% if add_generation_prompt %}[assistant]{% endif %}{{ eos_token }}\n");
  auto r = test::run_command({EDGELLM_CLI, "template", "--template-file", tpl, "--messages", conv, "--bos-token", "<s>"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(r.out, "<s>[user]Hi\nthere");
  r = test::run_command({EDGELLM_CLI, "template", "--template-file", tpl, "--messages", "-", "--add-generation-prompt",
                         "--eos-token", "</s>"},
                        R"([{"role": "user", "content": "x"}])");
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(r.out, "[user]x[assistant]</s>");
  r = test::run_command({EDGELLM_CLI, "template", "--chat-template", "chatml", "--messages", conv, "--add-generation-prompt"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(r.out, "<|im_start|>user\nHi\nthere<|im_end|>\n<|im_start|>assistant\n");
  const std::string think = d.write("think.jinja", "{{ enable_thinking }}");
  r = test::run_command({EDGELLM_CLI, "template", "--template-file", think, "--messages", conv, "--chat-template-kwargs",
                         R"({"enable_thinking": false})"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(r.out, "false");
}

TEST(TemplateCli, ModelTemplateAndTokens) {
  TempDir d;
  const std::string model = std::string(EDGELLM_SHARED_DIR) + "/testdata/vocab/ggml-vocab-phi-3.gguf";
  const std::string conv = d.write("conv.json", R"([{"role": "user", "content": "Hello"}])");
  auto r = test::run_command({EDGELLM_CLI, "template", "-m", model, "--messages", conv, "--add-generation-prompt"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(r.out, "<s><|user|>\nHello<|end|>\n<|assistant|>\n");  // the model's template and BOS text
  r = test::run_command({EDGELLM_CLI, "template", "-m", model, "--messages", conv, "--add-generation-prompt", "--tokens"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  // <s> once (the template wrote it), <|user|> <|end|> <|assistant|> as single special tokens; Phi-3
  // drops the newline after special tokens, as llama.cpp does.
  EXPECT_EQ(r.out, "1,32010,15043,32007,32001\n");
  EXPECT_NE(r.err.find("5 tokens"), std::string::npos) << r.err;
  // A model without a chat template needs an explicit one: no silent fallback.
  const std::string spm = std::string(EDGELLM_SHARED_DIR) + "/testdata/vocab/ggml-vocab-llama-spm.gguf";
  r = test::run_command({EDGELLM_CLI, "template", "-m", spm, "--messages", conv});
  EXPECT_TRUE(r.exited_with(1)) << r.describe();
  EXPECT_NE(r.err.find("no tokenizer.chat_template"), std::string::npos) << r.err;
  r = test::run_command({EDGELLM_CLI, "template", "-m", spm, "--chat-template", "llama2", "--messages", conv});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(r.out, "<s>[INST] Hello [/INST]");
}

TEST(TemplateCli, BadInputIsOneClearError) {
  TempDir d;
  const std::string conv = d.write("conv.json", R"([{"role": "user", "content": "x"}])");
  const std::string bad_json = d.write("bad.json", "[{\"role\": \"user\",}]");
  const std::string bad_tpl = d.write("bad.jinja", "ok\n{% for m in messages %}{{ m.content|nosuch }}{% endfor %}");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--template-file", bad_tpl, "--messages", conv}, "line 2: filter '|nosuch'"},
      {{"--chat-template", "chatml", "--messages", bad_json}, "bad.json: line 1"},
      {{"--chat-template", "nosuch", "--messages", conv}, "available: chatml"},
      {{"--chat-template", "chatml"}, "--messages"},
      {{"--messages", conv}, "give -m MODEL"},
      {{"--template-file", d.path + "/missing.jinja", "--messages", conv}, "cannot open"},
      {{"--chat-template", "chatml", "--messages", conv, "--tokens"}, "--tokens needs -m"},
  };
  for (const auto& [args, want] : cases) {
    std::vector<std::string> argv = {EDGELLM_CLI, "template"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = test::run_command(argv);
    EXPECT_TRUE(r.exited_with(1)) << r.describe();
    EXPECT_NE(r.err.find(want), std::string::npos) << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

}  // namespace
}  // namespace edgellm::tmpl
