// The JSON reader (template/json.h) against hostile input (issue 13): nesting
// and size are bounded with a clear error, and objects with hundreds of
// thousands of keys read in linear time (each key used to be checked against
// every earlier one: 100k keys took 10-40 s). The tests assert results, not
// timings; before the fix the 400k-key cases alone ran for minutes.
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "template/chat.h"
#include "template/json.h"

namespace edgellm::tmpl {
namespace {

std::string error_of(const std::string& text, int max_depth = kMaxJsonDepth, size_t max_bytes = kMaxJsonBytes) {
  try {
    Json::parse(text, "test.json", max_depth, max_bytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string key(size_t i) {
  std::string k = "k";
  return k += std::to_string(i);
}

// {"k0": 0, "k1": 1, ...}, with `extra` appended inside the braces.
std::string many_keys(size_t n, const std::string& extra = "") {
  std::string s = "{";
  for (size_t i = 0; i < n; ++i) {
    if (i) s += ',';
    s += '"';
    s += key(i);
    s += "\":";
    s += std::to_string(i);
  }
  return s + extra + "}";
}

TEST(JsonReader, DeepNestingIsAClearError) {
  // A million levels, of arrays, objects and both: the recursive reader stops
  // at the bound, long before the stack could run out.
  for (const std::string& open : {std::string("["), std::string("{\"a\":"), std::string("[{\"a\":")}) {
    std::string text;
    while (text.size() < 1000000 * open.size()) text += open;
    const std::string e = error_of(text);
    EXPECT_TRUE(contains(e, "test.json: line 1, column ")) << e;
    EXPECT_TRUE(contains(e, "arrays and objects nested more than 256 levels deep")) << e;
  }
  // The bound itself: 256 levels read, 257 do not; a caller can ask for less.
  EXPECT_EQ(error_of(std::string(256, '[') + std::string(256, ']')), "");
  EXPECT_TRUE(contains(error_of(std::string(257, '[') + std::string(257, ']')), "more than 256 levels"));
  EXPECT_TRUE(contains(error_of("[[[1]]]", 2), "more than 2 levels"));
}

TEST(JsonReader, SizeIsBounded) {
  const std::string e = error_of(std::string(kMaxJsonBytes + 1, ' '));
  EXPECT_EQ(e, "test.json: the JSON text is " + std::to_string(kMaxJsonBytes + 1) + " bytes, more than the limit of " +
                   std::to_string(kMaxJsonBytes) + " bytes");
  EXPECT_TRUE(contains(error_of("[1, 2, 3]", kMaxJsonDepth, 8), "9 bytes, more than the limit of 8 bytes"));
  EXPECT_EQ(error_of("[1, 2, 3]", kMaxJsonDepth, 9), "");
}

TEST(JsonReader, ManyKeysReadInLinearTime) {
  for (size_t n : {100000u, 400000u}) {
    const Json j = Json::parse(many_keys(n));
    ASSERT_EQ(j.entries().size(), n);
    for (size_t i : {size_t(0), n / 2, n - 1}) {
      const Json* v = j.find(key(i));
      ASSERT_NE(v, nullptr) << i;
      EXPECT_EQ(v->as_number(), double(i));
    }
    EXPECT_EQ(j.find(key(n)), nullptr);
    EXPECT_EQ(j.entries()[n - 1].first, key(n - 1));
  }
}

TEST(JsonReader, RepeatedKeysKeepFirstPositionAndLastValue) {
  // As JSON.parse, whether the object is small (scanned) or large (indexed).
  for (size_t n : {3u, 16u, 17u, 1000u}) {
    const Json j = Json::parse(many_keys(n, ",\"k0\":\"last\",\"" + key(n - 1) + "\":\"end\",\"new\":1"));
    ASSERT_EQ(j.entries().size(), n + 1) << n;
    EXPECT_EQ(j.entries()[0].first, "k0");
    EXPECT_EQ(j.entries()[0].second.as_string(), "last");
    EXPECT_EQ(j.find(key(n - 1))->as_string(), "end");
    EXPECT_EQ(j.entries()[n].first, "new");
  }
  // Objects built in code index the same way, and copies keep working.
  Json o = Json::object();
  for (int i = 0; i < 100; ++i) o.set(key(i % 50), Json::number(i));
  const Json copy = o;
  ASSERT_EQ(copy.entries().size(), 50u);
  EXPECT_EQ(copy.find("k7")->as_number(), 57);
  EXPECT_EQ(copy.entries()[7].first, "k7");
}

TEST(JsonReader, ConversationWithManyKeysRenders) {
  // The issue's case: one message object with 100k extra keys, as --messages
  // reads it, rendered (400k keys read above).
  for (size_t n : {100000u}) {
    std::string text = "[";
    text += many_keys(n, ",\"role\":\"user\",\"content\":\"hi\"");
    text += ']';
    const Conversation c = parse_conversation(text, "msgs.json");
    ASSERT_EQ(c.messages.items().size(), 1u);
    EXPECT_EQ(render_chat("{% for m in messages %}{{ m.role }}: {{ m.content }} {{ m['k' ~ (m|length - 3)] }}"
                          "{% endfor %}",
                          c.messages, false, "", ""),
              "user: hi " + std::to_string(n - 1));
  }
}

TEST(JsonReader, ManyTemplateVariablesRender) {
  // --chat-template-kwargs with many keys: merged into the variables in
  // linear time too.
  const Json extra = Json::parse(many_keys(100000));
  const Json msgs = Json::parse(R"([{"role": "user", "content": "x"}])");
  EXPECT_EQ(render_chat("{{ k99999 }} {{ k0 }} {{ messages|length }}", msgs, false, "", "", extra), "99999 0 1");
}

}  // namespace
}  // namespace edgellm::tmpl
