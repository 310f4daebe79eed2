#include "template/parser.h"

#include <cstdlib>
#include <initializer_list>
#include <set>
#include <string>

#include "base/error.h"

namespace edgellm::tmpl {

namespace {

class Parser {
 public:
  Parser(const std::vector<Token>& t, std::string_view name) : t_(t), name_(name) {
    eof_ = Token{Tok::End, "", t.empty() ? 1 : t.back().line};
  }

  NodePtr program() {
    NodePtr p = node(NK::Program, 1);
    while (cur_ < t_.size()) p->body.push_back(parse_any());
    return finish(std::move(p));
  }

 private:
  // --- helpers ---
  const Token& tok(size_t i) const { return i < t_.size() ? t_[i] : eof_; }
  const Token& peek() const { return tok(cur_); }
  bool at_end() const { return cur_ >= t_.size(); }
  bool is(Tok type) const { return tok(cur_).type == type; }
  bool is_ident(std::string_view name, size_t ahead = 0) const {
    const Token& k = tok(cur_ + ahead);
    return k.type == Tok::Identifier && k.value == name;
  }
  bool is_statement(std::initializer_list<std::string_view> names) const {
    if (tok(cur_).type != Tok::OpenStatement || tok(cur_ + 1).type != Tok::Identifier) return false;
    for (auto n : names)
      if (tok(cur_ + 1).value == n) return true;
    return false;
  }
  static std::string show(const Token& k) {
    switch (k.type) {
      case Tok::Identifier: return "'" + k.value + "'";
      case Tok::NumericLiteral: return "number " + k.value;
      case Tok::StringLiteral: return "a string";
      case Tok::Text: return "text";
      case Tok::AdditiveBinaryOperator: case Tok::MultiplicativeBinaryOperator:
      case Tok::ComparisonBinaryOperator: case Tok::UnaryOperator: return "'" + k.value + "'";
      default: return tok_name(k.type);
    }
  }
  [[noreturn]] void error_at(int line, const std::string& what) const {
    fail(name_, ", line ", line, ": syntax error: ", what);
  }
  [[noreturn]] void error(const std::string& what) const { error_at(peek().line, what); }
  [[noreturn]] void too_deep(int line) const {
    error_at(line, "the template nests too deeply (more than " + std::to_string(kMaxTreeDepth) +
                       " levels of blocks and expressions)");
  }
  const Token& expect(Tok type, std::string_view context) {
    if (!is(type)) error(std::string("expected ") + tok_name(type) + " " + std::string(context) + ", found " + show(peek()));
    return t_[cur_++];
  }
  void expect_ident(std::string_view name, std::string_view context) {
    if (!is_ident(name)) error("expected '" + std::string(name) + "' " + std::string(context) + ", found " + show(peek()));
    ++cur_;
  }
  // After an item of a list, dict or argument list: a comma or the closing
  // bracket. Juxtaposed items ("[1 2]", "f(a b)") are a syntax error, as in
  // Python's jinja2 (the end of the template is left to the caller's
  // "unclosed" message).
  void item_separator(Tok close, const char* where) {
    if (is(Tok::Comma)) ++cur_;
    else if (!is(close) && !at_end())
      error(std::string("expected ',' or ") + tok_name(close) + " " + where + ", found " + show(peek()));
  }
  // Parses statements into `out` until one of `ends` (as {% name %}); fails
  // at the end of the template naming the block left open.
  void block_until(std::vector<NodePtr>& out, std::initializer_list<std::string_view> ends, const char* what,
                   int open_line) {
    while (!is_statement(ends)) {
      if (at_end())
        error_at(open_line, std::string(what) + " is never closed (expected {% " + std::string(*ends.begin()) +
                                " %} before the end of the template)");
      out.push_back(parse_any());
    }
  }
  NodePtr node(NK kind, int line) {
    NodePtr n = std::make_unique<Node>();
    n->kind = kind;
    n->line = line;
    return n;
  }
  NodePtr finish(NodePtr n) {
    int d = 0;
    for (auto* list : {&n->a, &n->params, &n->body, &n->alt})
      for (const NodePtr& c : *list)
        if (c && c->depth > d) d = c->depth;
    n->depth = d + 1;
    if (n->depth > kMaxTreeDepth) too_deep(n->line);
    return n;
  }
  NodePtr make(NK kind, int line, std::vector<NodePtr> a, std::string str = {}) {
    NodePtr n = node(kind, line);
    n->a = std::move(a);
    n->str = std::move(str);
    return finish(std::move(n));
  }
  struct Guard {  // bounds the parser's own recursion
    explicit Guard(Parser& p) : p_(p) {
      if (++p_.recursion_ > kMaxTreeDepth) p_.too_deep(p_.peek().line);
    }
    ~Guard() { --p_.recursion_; }
    Parser& p_;
  };

  // --- statements ---
  NodePtr parse_any() {
    Guard g(*this);
    const Token& k = peek();
    switch (k.type) {
      case Tok::Comment: ++cur_; return node(NK::Comment, k.line);
      case Tok::Text: {
        NodePtr n = node(NK::Text, k.line);
        n->str = k.value;
        ++cur_;
        return n;
      }
      case Tok::OpenStatement: return parse_statement();
      case Tok::OpenExpression: {
        ++cur_;
        NodePtr e = parse_expression();
        expect(Tok::CloseExpression, "to close {{ ... }}");
        return e;
      }
      default: error("unexpected " + show(k));
    }
  }

  NodePtr parse_statement() {
    const int line = peek().line;
    ++cur_;  // {%
    if (!is(Tok::Identifier)) error("expected a statement name after {%, found " + show(peek()));
    const std::string name = peek().value;
    ++cur_;
    NodePtr r;
    if (name == "set") {
      r = parse_set(line);
    } else if (name == "if") {
      r = parse_if(line);
      close_block("endif");
    } else if (name == "macro") {
      r = parse_macro(line);
      close_block("endmacro");
    } else if (name == "for") {
      r = parse_for(line);
      close_block("endfor");
    } else if (name == "call") {
      r = node(NK::CallBlock, line);
      if (is(Tok::OpenParen)) {
        r->flag = true;
        r->params = parse_args(true);
      }
      NodePtr callee = parse_primary();
      if (callee->kind != NK::Identifier) error_at(line, "expected a macro name after {% call %}");
      NodePtr call = node(NK::Call, line);
      call->a.push_back(std::move(callee));
      call->params = parse_args(false);
      r->a.push_back(finish(std::move(call)));
      expect(Tok::CloseStatement, "after {% call ... %}");
      block_until(r->body, {"endcall"}, "{% call %}", line);
      close_block("endcall");
      analyze_special_args(*r);
    } else if (name == "break" || name == "continue") {
      expect(Tok::CloseStatement, ("after {% " + name + " %}").c_str());
      r = node(name == "break" ? NK::Break : NK::Continue, line);
    } else if (name == "filter") {
      r = node(NK::FilterBlock, line);
      NodePtr f = parse_primary();
      if (f->kind != NK::Identifier) error_at(line, "expected a filter name after {% filter %}");
      if (is(Tok::OpenParen)) f = parse_call(std::move(f));
      r->a.push_back(std::move(f));
      expect(Tok::CloseStatement, "after {% filter ... %}");
      block_until(r->body, {"endfilter"}, "{% filter %}", line);
      close_block("endfilter");
    } else if (name == "elif" || name == "else" || name.rfind("end", 0) == 0) {
      error_at(line, "unexpected {% " + name + " %} (no open block it could belong to)");
    } else {
      error_at(line, "unsupported statement {% " + name + " %}");
    }
    return finish(std::move(r));
  }

  void close_block(const char* end_name) {
    expect(Tok::OpenStatement, (std::string("for {% ") + end_name + " %}").c_str());
    expect_ident(end_name, "");
    expect(Tok::CloseStatement, (std::string("after {% ") + end_name).c_str());
  }

  NodePtr parse_set(int line) {
    NodePtr n = node(NK::Set, line);
    n->a.push_back(parse_expression_sequence(false));
    if (is(Tok::Equals)) {
      ++cur_;
      n->a.push_back(parse_expression_sequence(false));
    } else {
      n->a.push_back(nullptr);
      expect(Tok::CloseStatement, "after {% set NAME %}");
      block_until(n->body, {"endset"}, "{% set %} block", line);
      expect(Tok::OpenStatement, "");
      expect_ident("endset", "");
    }
    expect(Tok::CloseStatement, "to end {% set %}");
    return n;
  }

  // One branch of an if: the condition and the block up to the next
  // {% elif %} / {% else %} / {% endif %}.
  NodePtr parse_branch(int line, int open_line) {
    NodePtr b = node(NK::If, line);
    b->a.push_back(parse_expression());
    expect(Tok::CloseStatement, "after the {% if %} condition");
    block_until(b->body, {"endif", "elif", "else"}, "{% if %}", open_line);
    return finish(std::move(b));
  }

  // The elif branches are siblings (If::params), not nested ifs: a chain of
  // any length is parsed, evaluated and freed without recursing per branch.
  NodePtr parse_if(int line) {
    NodePtr n = parse_branch(line, line);
    while (is_statement({"elif"})) {
      const int l = peek().line;
      cur_ += 2;
      n->params.push_back(parse_branch(l, line));
    }
    if (is_statement({"else"})) {
      cur_ += 2;
      expect(Tok::CloseStatement, "after {% else");
      block_until(n->alt, {"endif"}, "{% if %}", line);
    }
    return n;
  }

  NodePtr parse_macro(int line) {
    NodePtr n = node(NK::Macro, line);
    NodePtr name = parse_primary();
    if (name->kind != NK::Identifier) error_at(line, "expected a name after {% macro");
    n->str = name->str;
    n->params = parse_args(true);
    expect(Tok::CloseStatement, "after the macro's parameters");
    block_until(n->body, {"endmacro"}, "{% macro %}", line);
    analyze_special_args(*n);
    return n;
  }

  NodePtr parse_for(int line) {
    NodePtr n = node(NK::For, line);
    NodePtr var = parse_expression_sequence(true);
    if (var->kind != NK::Identifier && var->kind != NK::TupleLit)
      error_at(line, "expected a name or names to loop with after {% for");
    n->a.push_back(std::move(var));
    expect_ident("in", "after the loop variable");
    n->a.push_back(parse_expression());
    expect(Tok::CloseStatement, "after {% for ... in ...");
    block_until(n->body, {"endfor", "else"}, "{% for %}", line);
    if (is_statement({"else"})) {
      cur_ += 2;
      expect(Tok::CloseStatement, "after {% else");
      block_until(n->alt, {"endfor"}, "{% for %}", line);
    }
    return n;
  }

  // --- expressions ---
  NodePtr parse_expression_sequence(bool primary) {
    const int line = peek().line;
    std::vector<NodePtr> items;
    items.push_back(primary ? parse_primary() : parse_expression());
    const bool tuple = is(Tok::Comma);
    while (tuple) {
      ++cur_;
      items.push_back(primary ? parse_primary() : parse_expression());
      if (!is(Tok::Comma)) break;
    }
    return tuple ? make(NK::TupleLit, line, std::move(items)) : std::move(items[0]);
  }

  NodePtr parse_expression() {
    Guard g(*this);
    NodePtr a = parse_or();
    if (is_ident("if")) {
      const int line = peek().line;
      ++cur_;
      NodePtr test = parse_or();
      if (is_ident("else")) {
        ++cur_;
        NodePtr f = parse_expression();
        std::vector<NodePtr> parts;
        parts.push_back(std::move(test));
        parts.push_back(std::move(a));
        parts.push_back(std::move(f));
        return make(NK::Ternary, line, std::move(parts));
      }
      std::vector<NodePtr> parts;
      parts.push_back(std::move(a));
      parts.push_back(std::move(test));
      return make(NK::Select, line, std::move(parts));
    }
    return a;
  }

  NodePtr binary(std::string op, int line, NodePtr l, NodePtr r) {
    std::vector<NodePtr> parts;
    parts.push_back(std::move(l));
    parts.push_back(std::move(r));
    return make(NK::Binary, line, std::move(parts), std::move(op));
  }

  NodePtr parse_or() {
    NodePtr left = parse_and();
    while (is_ident("or")) {
      const int line = peek().line;
      ++cur_;
      left = binary("or", line, std::move(left), parse_and());
    }
    return left;
  }
  NodePtr parse_and() {
    NodePtr left = parse_not();
    while (is_ident("and")) {
      const int line = peek().line;
      ++cur_;
      left = binary("and", line, std::move(left), parse_not());
    }
    return left;
  }
  NodePtr parse_not() {
    if (is_ident("not")) {
      Guard g(*this);
      NodePtr r;
      while (is_ident("not")) {  // as the reference: `not not x` keeps the last
        const int line = peek().line;
        ++cur_;
        std::vector<NodePtr> parts;
        parts.push_back(parse_not());
        r = make(NK::Unary, line, std::move(parts), "not");
      }
      return r;
    }
    return parse_comparison();
  }
  NodePtr parse_comparison() {
    NodePtr left = parse_additive();
    while (true) {
      std::string op;
      const int line = peek().line;
      if (is_ident("not") && is_ident("in", 1)) op = "not in", cur_ += 2;
      else if (is_ident("in")) op = "in", ++cur_;
      else if (is(Tok::ComparisonBinaryOperator)) op = t_[cur_++].value;
      else break;
      left = binary(op, line, std::move(left), parse_additive());
    }
    return left;
  }
  NodePtr parse_additive() {
    NodePtr left = parse_multiplicative();
    while (is(Tok::AdditiveBinaryOperator)) {
      const Token& op = t_[cur_++];
      left = binary(op.value, op.line, std::move(left), parse_multiplicative());
    }
    return left;
  }
  NodePtr parse_multiplicative() {
    NodePtr left = parse_power();
    while (is(Tok::MultiplicativeBinaryOperator)) {
      const Token& op = t_[cur_++];
      left = binary(op.value, op.line, std::move(left), parse_power());
    }
    return left;
  }
  NodePtr parse_power() {
    NodePtr left = parse_test();
    while (is(Tok::ExponentiationBinaryOperator)) {
      const Token& op = t_[cur_++];
      left = binary(op.value, op.line, std::move(left), parse_test());
    }
    return left;
  }
  NodePtr parse_test() {
    NodePtr operand = parse_filter();
    while (is_ident("is")) {
      const int line = peek().line;
      ++cur_;
      const bool negate = is_ident("not");
      if (negate) ++cur_;
      NodePtr name = parse_primary();
      if (name->kind != NK::Identifier) error_at(line, "expected a test name after 'is'");
      std::vector<NodePtr> parts;
      parts.push_back(std::move(operand));
      operand = make(NK::Test, line, std::move(parts), name->str);
      operand->flag = negate;
    }
    return operand;
  }
  NodePtr parse_filter() {
    NodePtr operand = parse_unary_sign();
    while (is(Tok::Pipe)) {
      const int line = peek().line;
      ++cur_;
      NodePtr f = parse_primary();
      if (f->kind != NK::Identifier) error_at(line, "expected a filter name after '|'");
      if (is(Tok::OpenParen)) f = parse_call(std::move(f));
      std::vector<NodePtr> parts;
      parts.push_back(std::move(operand));
      parts.push_back(std::move(f));
      operand = make(NK::Filter, line, std::move(parts));
    }
    return operand;
  }
  NodePtr parse_unary_sign() {
    const Token& k = peek();
    if ((k.type == Tok::UnaryOperator || k.type == Tok::AdditiveBinaryOperator) && (k.value == "-" || k.value == "+")) {
      Guard g(*this);
      ++cur_;
      std::vector<NodePtr> parts;
      parts.push_back(parse_unary_sign());
      return make(NK::Unary, k.line, std::move(parts), k.value);
    }
    NodePtr member = parse_member(parse_primary());
    if (is(Tok::OpenParen)) return parse_call(std::move(member));
    return member;
  }
  NodePtr parse_call(NodePtr callee) {
    Guard g(*this);
    const int line = peek().line;
    NodePtr call = node(NK::Call, line);
    call->a.push_back(std::move(callee));
    call->params = parse_args(false);
    NodePtr e = parse_member(finish(std::move(call)));
    if (is(Tok::OpenParen)) e = parse_call(std::move(e));
    return e;
  }
  std::vector<NodePtr> parse_args(bool parameters) {
    expect(Tok::OpenParen, parameters ? "to start the parameter list" : "to start the argument list");
    std::vector<NodePtr> args;
    std::set<std::string> names;
    bool saw_keyword = false, saw_spread = false;
    while (!is(Tok::CloseParen)) {
      if (at_end()) error("unclosed '(' (expected ')' before the end of the template)");
      const int line = peek().line;
      const bool kw_spread = is(Tok::ExponentiationBinaryOperator);
      const bool spread = is(Tok::MultiplicativeBinaryOperator) && peek().value == "*";
      if (parameters && (kw_spread || spread)) error("argument unpacking is not allowed in parameter declarations");
      if (kw_spread) {
        ++cur_;
        std::vector<NodePtr> parts;
        parts.push_back(parse_expression());
        args.push_back(make(NK::KwSpread, line, std::move(parts)));
        if (is(Tok::Comma)) ++cur_;
        if (!is(Tok::CloseParen)) error("'**' must be applied to the final argument");
        break;
      }
      NodePtr arg;
      if (spread) {
        if (saw_spread) error("only one '*' argument unpacking is allowed");
        saw_spread = true;
        ++cur_;
        std::vector<NodePtr> parts;
        parts.push_back(parse_expression());
        arg = make(NK::Spread, line, std::move(parts));
      } else {
        arg = parse_expression();
        if (is(Tok::Equals)) {
          ++cur_;
          if (arg->kind != NK::Identifier)
            error(parameters ? "expected a name for a parameter declaration" : "expected a name for a keyword argument");
          std::vector<NodePtr> parts;
          parts.push_back(parse_expression());
          arg = make(NK::KwArg, line, std::move(parts), arg->str);
        }
        if (parameters) {
          if (arg->kind != NK::Identifier && arg->kind != NK::KwArg) error("expected a name for a parameter declaration");
          if (!names.insert(arg->str).second) error("duplicate parameter name '" + arg->str + "'");
        }
        if (arg->kind == NK::KwArg) saw_keyword = true;
        else if (saw_keyword)
          error(parameters ? "non-default parameter follows a default parameter"
                           : "positional arguments must come before keyword arguments");
        else if (saw_spread) error("positional arguments must not follow '*' argument unpacking");
      }
      args.push_back(std::move(arg));
      item_separator(Tok::CloseParen, "after an argument");
    }
    ++cur_;  // )
    return args;
  }
  // [index] or [start:stop:step], each part optional in a slice; anything
  // else between the brackets ("[2 3]", "[1e3]") is a syntax error.
  NodePtr parse_subscript() {
    const int line = peek().line;
    std::vector<NodePtr> parts(1);  // null where a part is omitted
    while (true) {
      if (at_end()) error("unclosed '[' (expected ']' before the end of the template)");
      if (!is(Tok::Colon) && !is(Tok::CloseSquareBracket)) parts.back() = parse_expression();
      if (is(Tok::CloseSquareBracket)) break;
      if (!is(Tok::Colon)) {
        if (at_end()) continue;  // reported above
        error("expected ':' or ']' in a subscript, found " + show(peek()));
      }
      if (parts.size() == 3) error_at(line, "a slice takes at most 3 parts (start:stop:step)");
      ++cur_;
      parts.emplace_back();
    }
    if (parts.size() == 1) {
      if (!parts[0]) error("expected an index or a slice inside [ ]");
      return std::move(parts[0]);
    }
    parts.resize(3);
    return make(NK::Slice, line, std::move(parts));
  }
  NodePtr parse_member(NodePtr object) {
    while (is(Tok::Dot) || is(Tok::OpenSquareBracket)) {
      Guard g(*this);
      const Token& op = t_[cur_++];
      const bool computed = op.type == Tok::OpenSquareBracket;
      NodePtr property;
      if (computed) {
        property = parse_subscript();
        expect(Tok::CloseSquareBracket, "to close '['");
      } else {
        property = parse_primary();
        if (property->kind != NK::Identifier && property->kind != NK::Int)
          error_at(op.line, "expected a name or an integer after '.'");
      }
      std::vector<NodePtr> parts;
      parts.push_back(std::move(object));
      parts.push_back(std::move(property));
      object = make(NK::Member, op.line, std::move(parts));
      object->flag = computed;
    }
    return object;
  }
  NodePtr parse_primary() {
    Guard g(*this);
    if (at_end()) error("unexpected end of template (an expression was expected)");
    const Token& k = t_[cur_++];
    switch (k.type) {
      case Tok::NumericLiteral: {
        NodePtr n = node(k.value.find('.') != std::string::npos ? NK::Float : NK::Int, k.line);
        n->num = std::strtod(k.value.c_str(), nullptr);
        return n;
      }
      case Tok::StringLiteral: {
        NodePtr n = node(NK::String, k.line);
        n->str = k.value;
        while (is(Tok::StringLiteral)) n->str += t_[cur_++].value;
        return n;
      }
      case Tok::Identifier: {
        NodePtr n = node(NK::Identifier, k.line);
        n->str = k.value;
        return n;
      }
      case Tok::OpenParen: {
        NodePtr e = parse_expression_sequence(false);
        expect(Tok::CloseParen, "to close '('");
        return e;
      }
      case Tok::OpenSquareBracket: {
        std::vector<NodePtr> items;
        while (!is(Tok::CloseSquareBracket)) {
          if (at_end()) error_at(k.line, "unclosed '[' (expected ']' before the end of the template)");
          items.push_back(parse_expression());
          item_separator(Tok::CloseSquareBracket, "after a list item");
        }
        ++cur_;
        return make(NK::ArrayLit, k.line, std::move(items));
      }
      case Tok::OpenCurlyBracket: {
        std::vector<NodePtr> kv;
        while (!is(Tok::CloseCurlyBracket)) {
          if (at_end()) error_at(k.line, "unclosed '{' (expected '}' before the end of the template)");
          kv.push_back(parse_expression());
          expect(Tok::Colon, "between a key and its value in a dict literal");
          kv.push_back(parse_expression());
          item_separator(Tok::CloseCurlyBracket, "after a dict entry");
        }
        ++cur_;
        return make(NK::ObjectLit, k.line, std::move(kv));
      }
      default: --cur_; error("unexpected " + show(k) + " (an expression was expected)");
    }
  }

  // --- which of caller / kwargs / varargs a macro body reads ---------------
  struct Special {
    std::set<std::string> declared, accessed;
    static bool special(const std::string& s) { return s == "caller" || s == "kwargs" || s == "varargs"; }
    void declare(const std::string& s) {
      if (special(s)) declared.insert(s);
    }
    void declare_target(const Node* t) {
      if (!t) return;
      if (t->kind == NK::Identifier) declare(t->str);
      else if (t->kind == NK::TupleLit)
        for (auto& c : t->a) declare_target(c.get());
    }
    void visit_defaults(const std::vector<NodePtr>& params) {
      for (auto& p : params)
        if (p->kind == NK::KwArg) visit(p->a[0].get());
    }
    void visit_filter(const Node* f) {
      if (f->kind == NK::Call) visit_all(f->params);
    }
    void visit_all(const std::vector<NodePtr>& v) {
      for (auto& c : v) visit(c.get());
    }
    void visit(const Node* n) {
      if (!n) return;
      switch (n->kind) {
        case NK::For:
          declare_target(n->a[0].get());
          if (n->a[1]->kind == NK::Select) {
            visit(n->a[1]->a[0].get());
            visit_all(n->body);
            visit_all(n->alt);
            visit(n->a[1]->a[1].get());
            return;
          }
          visit(n->a[1].get());
          visit_all(n->body);
          visit_all(n->alt);
          return;
        case NK::Set: declare_target(n->a[0].get()); visit(n->a[1].get()); visit_all(n->body); return;
        case NK::Macro:
          for (auto& p : n->params) declare(p->str);
          visit_defaults(n->params);
          visit_all(n->body);
          return;
        case NK::CallBlock:
          visit(n->a[0].get());
          for (auto& p : n->params) declare(p->str);
          visit_defaults(n->params);
          visit_all(n->body);
          return;
        case NK::FilterBlock: visit_all(n->body); visit_filter(n->a[0].get()); return;
        case NK::Identifier:
          if (special(n->str) && !declared.count(n->str)) accessed.insert(n->str);
          return;
        case NK::Member: visit(n->a[0].get()); if (n->flag) visit(n->a[1].get()); return;
        case NK::Filter: visit(n->a[0].get()); visit_filter(n->a[1].get()); return;
        case NK::Test: visit(n->a[0].get()); return;
        case NK::Select: visit(n->a[1].get()); visit(n->a[0].get()); return;
        case NK::KwArg: visit(n->a[0].get()); return;
        default:
          visit_all(n->a);
          visit_all(n->params);
          visit_all(n->body);
          visit_all(n->alt);
      }
    }
  };
  static void analyze_special_args(Node& n) {
    Special s;
    for (auto& p : n.params) s.declare(p->str);
    s.visit_all(n.body);
    n.uses_caller = s.accessed.count("caller") > 0;
    n.uses_kwargs = s.accessed.count("kwargs") > 0;
    n.uses_varargs = s.accessed.count("varargs") > 0;
  }

  const std::vector<Token>& t_;
  std::string_view name_;
  Token eof_;
  size_t cur_ = 0;
  int recursion_ = 0;
};

}  // namespace

NodePtr parse(const std::vector<Token>& tokens, std::string_view name) { return Parser(tokens, name).program(); }

}  // namespace edgellm::tmpl
