#include "template/ast.h"

namespace edgellm::tmpl {

std::string describe(const Node& n) {
  switch (n.kind) {
    case NK::Program: return "template";
    case NK::Text: return "text";
    case NK::Comment: return "comment";
    case NK::If: return "{% if %}";
    case NK::For: return "{% for %}";
    case NK::Break: return "{% break %}";
    case NK::Continue: return "{% continue %}";
    case NK::Set: return "{% set %}";
    case NK::Macro: return "{% macro " + n.str + " %}";
    case NK::CallBlock: return "{% call %}";
    case NK::FilterBlock: return "{% filter %}";
    case NK::Identifier: return "name '" + n.str + "'";
    case NK::Int: case NK::Float: case NK::String: return "literal";
    case NK::ArrayLit: return "list literal";
    case NK::TupleLit: return "tuple";
    case NK::ObjectLit: return "dict literal";
    case NK::Member:
      if (!n.flag && n.a[1]->kind == NK::Identifier) return "attribute '." + n.a[1]->str + "'";
      return "subscript [...]";
    case NK::Slice: return "slice";
    case NK::Call: {
      const Node& c = *n.a[0];
      if (c.kind == NK::Identifier) return "call to " + c.str + "()";
      if (c.kind == NK::Member && !c.flag && c.a[1]->kind == NK::Identifier) return "call to ." + c.a[1]->str + "()";
      return "call";
    }
    case NK::Binary: return "operator '" + n.str + "'";
    case NK::Unary: return "operator '" + n.str + "'";
    case NK::Filter: {
      const Node& f = *n.a[1];
      const std::string name = f.kind == NK::Identifier ? f.str : f.kind == NK::Call && f.a[0]->kind == NK::Identifier ? f.a[0]->str : "?";
      return "filter '|" + name + "'";
    }
    case NK::Test: return "test 'is " + std::string(n.flag ? "not " : "") + n.str + "'";
    case NK::Select: case NK::Ternary: return "conditional expression";
    case NK::KwArg: return "keyword argument '" + n.str + "'";
    case NK::Spread: return "*arguments";
    case NK::KwSpread: return "**arguments";
  }
  return "expression";
}

}  // namespace edgellm::tmpl
