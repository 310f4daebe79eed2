// The conversations every chat template meets in the reference tests
// (test_template_ref.cpp against @huggingface/jinja, test_template_jinja2.cpp
// against Python's jinja2): system + user; system, user, assistant, user;
// user only; special characters and newlines; tools.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace edgellm::tmpl::test_conversations {

struct Conv {
  const char* name;
  const char* json;
  bool has_system;
};
const Conv kConversations[] = {
    {"system_user", R"([{"role": "system", "content": "You are a helpful assistant."},
                        {"role": "user", "content": "Hello! What is 2+2?"}])", true},
    {"multi_turn", R"([{"role": "system", "content": "You are a helpful assistant."},
                       {"role": "user", "content": "Hello! What is 2+2?"},
                       {"role": "assistant", "content": "2+2 is 4."},
                       {"role": "user", "content": "And 3+3?"}])", true},
    {"user_only", R"([{"role": "user", "content": "Hello!"}])", false},
    {"special", R"([{"role": "user", "content": "Line one\nLine two\n\n\tTabbed {{ not a var }} {% raw %} \\ backslash 'single' \"double\"\nUnicode: h\u00e9llo w\u00f6rld \u2014 \u65e5\u672c\u8a9e \ud83d\ude80\r\nend  "},
                    {"role": "assistant", "content": "  <b>bold</b> & more\n"},
                    {"role": "user", "content": "\u00a0non-breaking\u2028separator\u0007bell"}])", false},
    {"system_special", R"([{"role": "system", "content": "  Be precise.\n\nUse \"quotes\" & <tags> carefully.  "},
                           {"role": "user", "content": "Multi\nline\n\n  input with trailing spaces   "}])", true},
    {"tools", R"({"tools": [{"type": "function", "function": {"name": "get_weather", "description": "Get the current weather in a city.",
                   "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city name"},
                   "unit": {"type": "string", "description": "Temperature unit", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}],
                 "messages": [{"role": "system", "content": "You are a helpful assistant."},
                   {"role": "user", "content": "What's the weather in Paris?"},
                   {"role": "assistant", "content": "", "tool_calls": [{"id": "abc123XYZ", "type": "function",
                     "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
                   {"role": "tool", "tool_call_id": "abc123XYZ", "name": "get_weather", "content": "{\"temperature\": 18}"},
                   {"role": "assistant", "content": "It is 18 \u00b0C in Paris."},
                   {"role": "user", "content": "Thanks!"}]})", true},
};

// File helpers both reference tests use for their job folders.
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}
inline void write_file(const std::string& path, const std::string& s) { std::ofstream(path, std::ios::binary) << s; }
inline bool exists(const std::string& path) { return std::ifstream(path).good(); }
inline std::string dirname_of(const std::string& p) { return p.substr(0, p.find_last_of('/')); }
inline std::string quote(const std::string& s) { return "'" + s + "'"; }  // paths here have no quotes

}  // namespace edgellm::tmpl::test_conversations
