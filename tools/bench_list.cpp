// llama-bench's value lists: "64,128,512", "1-4", "64-512+64", "128-1024*2".
#include <cctype>
#include <string>

#include "base/error.h"
#include "tools/bench.h"

namespace edgellm {

namespace {

// A sweep bigger than this is a typo ("1-1000000"), not a benchmark plan.
constexpr size_t kMaxListValues = 4096;

[[noreturn]] void bad_syntax(std::string_view s, std::string_view flag) {
  fail(flag, ": '", s, "' is not a list of values like 64,128,512 or a range like 64-512, 64-512+64, 64-512*2");
}

// Reads the digits at s[*i] (at least one); false if there are none or the
// value does not fit.
bool read_number(std::string_view s, size_t* i, int64_t* out) {
  const size_t start = *i;
  int64_t v = 0;
  while (*i < s.size() && std::isdigit(static_cast<unsigned char>(s[*i]))) {
    if (v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (s[*i] - '0');
    ++*i;
  }
  *out = v;
  return *i > start;
}

}  // namespace

std::vector<int64_t> parse_bench_list(std::string_view s, std::string_view flag, int64_t min, int64_t max) {
  std::vector<int64_t> out;
  auto check = [&](int64_t v) {
    if (v < min || v > max) fail(flag, ": ", v, " is out of range (", min, " to ", max, ")");
  };
  size_t i = 0;
  for (;;) {
    int64_t first = 0, last = 0, step = 1;
    char op = '+';
    if (!read_number(s, &i, &first)) bad_syntax(s, flag);
    last = first;
    if (i < s.size() && s[i] == '-') {
      ++i;
      if (!read_number(s, &i, &last)) bad_syntax(s, flag);
      if (i < s.size() && (s[i] == '+' || s[i] == '*')) {
        op = s[i++];
        if (!read_number(s, &i, &step)) bad_syntax(s, flag);
      }
    }
    if (i < s.size() && s[i] != ',') bad_syntax(s, flag);
    check(first);
    check(last);
    if (last < first) fail(flag, ": range ", first, "-", last, " runs backwards");
    // A step that does not move would never end (llama-bench refuses it too).
    if (op == '+' ? step < 1 : step < 2 || first < 1)
      fail(flag, ": the range in '", s, "' does not advance (+step must be at least 1; *factor at least 2, from a first value of at least 1)");
    for (int64_t v = first; v <= last; v = op == '+' ? v + step : v * step) {
      if (out.size() == kMaxListValues) fail(flag, ": '", s, "' gives more than ", kMaxListValues, " values");
      out.push_back(v);
      if (v > max / (op == '+' ? 1 : step) - (op == '+' ? step : 0)) break;  // the next one is past max anyway
    }
    if (i == s.size()) break;
    ++i;  // the comma; a value must follow it
  }
  return out;
}

}  // namespace edgellm
