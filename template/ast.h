// The template syntax tree. One node type with a kind; what each child slot
// holds is listed per kind below.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace edgellm::tmpl {

enum class NK : uint8_t {
  // Statements
  Program,     // body
  Text,        // str: literal output
  Comment,
  If,          // a[0] test; body; params: the elif branches in order, each an If with
               // only a[0] and body (flat, so a long chain nests nothing); alt: else
  For,         // a[0] loop variable (Identifier / Tuple); a[1] iterable (maybe Select); body; alt (else)
  Break, Continue,
  Set,         // a[0] target; a[1] value or null (block set: body)
  Macro,       // str name; params (Identifier / KwArg); body
  CallBlock,   // a[0] Call; params = caller parameters; body; flag: has caller parameters
  FilterBlock, // a[0] filter (Identifier / Call); body
  // Expressions
  Identifier,  // str
  Int, Float,  // num
  String,      // str
  ArrayLit, TupleLit,  // a = items
  ObjectLit,   // a = key0, value0, key1, value1, ...
  Member,      // a[0] object; a[1] property; flag: computed ([...])
  Slice,       // a[0..2] start, stop, step (each may be null)
  Call,        // a[0] callee; params = arguments
  Binary,      // str operator; a[0] left; a[1] right
  Unary,       // str operator; a[0]
  Filter,      // a[0] operand; a[1] filter (Identifier / Call)
  Test,        // a[0] operand; str test name; flag: negated
  Select,      // a[0] value; a[1] condition  (`x if cond` without else)
  Ternary,     // a[0] condition; a[1] if true; a[2] if false
  KwArg,       // str key; a[0] value
  Spread,      // a[0]  (*args)
  KwSpread,    // a[0]  (**kwargs)
};

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct Node {
  NK kind;
  int line = 0;
  int depth = 1;  // height of the subtree (bounded by the parser)
  bool flag = false;
  double num = 0;
  std::string str;
  std::vector<NodePtr> a, params, body, alt;
  // Macros and call blocks: which of caller / kwargs / varargs the body reads.
  bool uses_caller = false, uses_kwargs = false, uses_varargs = false;
};

// A short description of a node for error messages ("filter 'trim'").
std::string describe(const Node& n);

}  // namespace edgellm::tmpl
