// Renders a parsed template. The evaluation rules are those of the reference
// renderer (@huggingface/jinja), so a chat template produces the same prompt
// here as on the Hub, with Python jinja2's rules where the templates need
// them; see value.h for the value model.
//
// Sandboxed: templates can reach nothing outside their variables (no files,
// no environment, no clock except strftime_now), and loops, recursion, heap
// and output are bounded by Limits. Every failure is an edgellm::Error naming
// the line and the construct ("chat template, line 7: filter '|trim': ...").
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "template/ast.h"
#include "template/value.h"

namespace edgellm::tmpl {

class Interpreter {
 public:
  Interpreter(const Limits& lim, std::string_view name);

  Heap& heap() { return heap_; }
  // Renders `program` with the given variables (created in heap()).
  std::string run(const Node& program, const std::vector<std::pair<std::string, Value>>& vars);

 private:
  friend struct Builtins;
  Value eval(const Node& n, Env* env);
  Value eval_node(const Node& n, Env* env);
  std::string render_block(const std::vector<NodePtr>& stmts, Env* env);
  std::string render_if(const Node& n, Env* env);
  std::string render_for(const Node& n, Env* env);
  void exec_set(const Node& n, Env* env);
  Value eval_binary(const Node& n, Env* env);
  Value eval_member(const Node& n, Env* env);
  Value eval_slice(const Value& obj, const Node& slice, Env* env);
  Value eval_unary(const Node& n, Env* env);
  Value eval_call(const Node& n, Env* env);
  Value eval_call_block(const Node& n, Env* env);
  Value define_macro(const Node& n, Env* env);
  std::vector<Value> call_arguments(const std::vector<NodePtr>& args, Env* env);
  std::pair<std::vector<Value>, Object> arguments(const std::vector<NodePtr>& args, Env* env);
  void bind_arguments(const std::string& who, const Node& def, std::vector<Value> args, Env* scope);
  Value lookup(Env* env, const std::string& name);
  void bind_loop_variable(const Node& var, const Value& item, Env* scope);
  // Work in steps (value.h, kBytesPerStep): every operation is charged in
  // proportion to what it costs, so the limits hold for any template.
  void step() { work(1); }
  void work(uint64_t units) { heap_.work(units); }
  void scan(size_t bytes) { heap_.scan(bytes); }
  int compare(const Value& a, const Value& b, bool case_sensitive);  // compare_values, with its work accounted
  bool is_ascii(const Value& s);                 // scans a string once (accounted), then knows
  size_t js_length(const Value& s);              // str.length (UTF-16 units), accounted
  Value string_at(const Value& s, double index);  // str[index], O(1) for ASCII
  Value key_string(const std::string& key);      // a mapping key as a value, accounted
  Value key_value(const Object& o, size_t i);    // entry i's key: a string, or an integer key as such
  std::string& checked_append(std::string& out, std::string_view piece);

  // builtins.cpp
  Value apply_filter(const Value& operand, const Node& filter, Env* env);
  Value apply_filter_call(const Value& operand, const Node& filter, Env* env);
  bool run_test(const std::string& name, const Value& operand, const Value* arg);
  Value member_builtin(const Value& obj, const std::string& name);
  Value string_method(const Value& self, const std::string& name, std::vector<Value>& args);
  Value object_method(const Value& self, const std::string& name, std::vector<Value>& args);
  void setup_globals(Env* global);
  Value make_string(std::string s);  // charges the string budget
  Value generator(std::vector<Value> items);  // a list that stands for a jinja2 generator (Array::generator)
  std::string join_code_points(const Value& s, const std::string& sep);  // "abc"|join(sep)

  Limits lim_;
  std::string name_;
  Heap heap_;
  Value namespace_fn_;
  const Node* cur_ = nullptr;  // the node being evaluated, for error messages
  int depth_ = 0, call_depth_ = 0;
};

}  // namespace edgellm::tmpl
