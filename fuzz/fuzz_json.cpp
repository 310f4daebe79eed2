// libFuzzer target for the JSON reader (chat messages, --chat-template-kwargs,
// template variables): Json::parse on arbitrary bytes must either throw
// edgellm::Error or return a value that
//   - finds each of its object keys at the entry that holds it (the key
//     index agrees with the entries, and keys are unique), and
//   - writes back (dump) as text that reads back to the same text.
// Texts that read as a conversation are also rendered, which converts them
// into template values. Seeds: a few JSON files written by run-smoke.sh.
#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.h"
#include "template/chat.h"
#include "template/json.h"

using namespace edgellm;
using namespace edgellm::tmpl;

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// Every object key is found at its own entry, all the way down.
void check_index(const Json& j) {
  if (j.is_array())
    for (const Json& x : j.items()) check_index(x);
  if (!j.is_object()) return;
  for (const auto& [k, v] : j.entries()) {
    check(j.find(k) == &v);
    check_index(v);
  }
}

void render(const Conversation& c) {
  Limits lim;  // small bounds keep every input fast
  lim.max_output = 256 << 10;
  lim.max_string_work = 8 << 20;
  lim.max_steps = 200'000;
  lim.max_heap = 500'000;
  try {
    render_chat("{% for m in messages %}{{ m.role }}: {{ m.content }}{{ m|tojson }}{% endfor %}{{ tools|tojson }}",
                c.messages, true, "<s>", "</s>", c.extra, lim);
  } catch (const Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const Json j = Json::parse(text, "fuzz");
    check_index(j);
    const std::string once = j.dump();
    check(Json::parse(once, "dump").dump() == once);
  } catch (const Error&) {
    return 0;  // not JSON: nothing more to check
  }
  try {
    render(parse_conversation(text, "fuzz"));
  } catch (const Error&) {
  }
  return 0;
}
