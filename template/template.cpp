#include "template/template.h"

#include "base/error.h"
#include "template/interpreter.h"
#include "template/lexer.h"
#include "template/parser.h"

namespace edgellm::tmpl {

Template Template::parse(std::string_view source, std::string name) {
  Template t;
  t.name_ = std::move(name);
  t.root_ = tmpl::parse(tokenize(source, t.name_), t.name_);
  return t;
}

std::string Template::render(const Json& vars, const Limits& lim) const {
  if (!vars.is_object()) fail(name_, ": template variables must be a JSON object");
  Interpreter interp(lim, name_);
  std::vector<std::pair<std::string, Value>> values;
  try {
    for (const auto& [k, v] : vars.entries()) values.emplace_back(k, from_json(interp.heap(), v));
  } catch (const RenderError& e) {
    fail(name_, ": the variables are too large: ", e.message);
  }
  return interp.run(*root_, values);
}

}  // namespace edgellm::tmpl
