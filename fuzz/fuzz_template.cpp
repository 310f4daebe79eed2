// libFuzzer target for the chat-template engine: arbitrary bytes as a
// template (lexer, parser, interpreter) rendered against a fixed conversation
// with tools. Rendering must either succeed within the limits or throw
// edgellm::Error; crashes, sanitizer reports, leaks, hangs and runaway memory
// are findings. Seeds: ../shared/testdata/templates (see run-smoke.sh).
#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.h"
#include "template/chat.h"
#include "template/json.h"

using namespace edgellm;
using namespace edgellm::tmpl;

namespace {

const Conversation& conversation() {
  static const Conversation c = parse_conversation(R"({
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city.",
      "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City"}},
      "required": ["city"]}}}],
    "messages": [
      {"role": "system", "content": "You are a helpful assistant."},
      {"role": "user", "content": "Hi!\nWhat's the weather in Paris? \u00e9\ud83d\ude80"},
      {"role": "assistant", "content": "", "tool_calls": [{"id": "abc123XYZ", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
      {"role": "tool", "tool_call_id": "abc123XYZ", "content": "{\"temperature\": 18}"},
      {"role": "assistant", "content": "18 degrees.", "reasoning_content": "Looked it up."},
      {"role": "user", "content": [{"type": "text", "text": "Thanks"}]}]})");
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Small bounds keep every input fast; the limits themselves are under test.
  Limits lim;
  lim.max_output = 256 << 10;
  lim.max_string_work = 8 << 20;
  lim.max_steps = 200'000;
  lim.max_heap = 500'000;
  lim.max_call_depth = 32;
  lim.max_eval_depth = 256;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const Conversation& c = conversation();
    const std::string out = render_chat(text, c.messages, size % 2 == 0, "<s>", "</s>", c.extra, lim);
    if (out.size() > lim.max_output) __builtin_trap();
  } catch (const Error&) {
  }
  return 0;
}
