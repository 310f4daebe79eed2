// Jinja templates as chat models ship them (tokenizer.chat_template): parse
// once, render many times. The dialect and its semantics are those of the
// reference renderer @huggingface/jinja, byte for byte, except where Python's
// jinja2 (transformers) differs and real templates rely on it; see value.h.
//
//   Template t = Template::parse(text);                // syntax errors throw here
//   std::string prompt = t.render(Json::object({{"messages", msgs}, ...}));
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "template/json.h"
#include "template/value.h"

namespace edgellm::tmpl {

struct Node;

class Template {
 public:
  // `name` prefixes error messages ("chat template, line 3: ...").
  static Template parse(std::string_view source, std::string name = "chat template");
  // Renders with the entries of `vars` (a JSON object) as variables.
  // Throws edgellm::Error naming the line and construct on any failure,
  // including the template's own raise_exception().
  std::string render(const Json& vars, const Limits& lim = {}) const;
  const std::string& name() const { return name_; }

 private:
  std::shared_ptr<const Node> root_;
  std::string name_;
};

}  // namespace edgellm::tmpl
