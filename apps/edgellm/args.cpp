#include "apps/edgellm/args.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>

#include "base/error.h"

namespace edgellm::cli {

namespace {
// 0.8 rather than 0.800000 in --help.
std::string format_number(float x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", double(x));
  return buf;
}
}  // namespace

void Args::add(std::vector<std::string> names, std::string* out, std::string help) {
  specs_.push_back({std::move(names), std::move(help), "TEXT",
                    [out](const std::string&, const std::string& v) { *out = v; }, true, *out});
}

void Args::add(std::vector<std::string> names, int64_t* out, std::string help, int64_t min, int64_t max) {
  specs_.push_back({std::move(names), std::move(help), "N", [out, min, max](const std::string& f, const std::string& v) {
                      errno = 0;
                      char* end = nullptr;
                      const long long x = std::strtoll(v.c_str(), &end, 10);
                      if (v.empty() || *end != '\0') fail(f, ": '", v, "' is not an integer");
                      if (errno == ERANGE) fail(f, ": ", v, " is out of range (", min, " to ", max, ")");
                      if (x < min || x > max) fail(f, ": ", x, " is out of range (", min, " to ", max, ")");
                      *out = x;
                    }, true, std::to_string(*out)});
}

void Args::add(std::vector<std::string> names, float* out, std::string help, float min, float max) {
  specs_.push_back({std::move(names), std::move(help), "X", [out, min, max](const std::string& f, const std::string& v) {
                      char* end = nullptr;
                      const float x = std::strtof(v.c_str(), &end);
                      if (v.empty() || *end != '\0') fail(f, ": '", v, "' is not a number");
                      if (!std::isfinite(x)) fail(f, ": ", v, " is not a finite number");
                      if (x < min || x > max) fail(f, ": ", x, " is out of range (", min, " to ", max, ")");
                      *out = x;
                    }, true, format_number(*out)});
}

void Args::add_flag(std::vector<std::string> names, bool* out, std::string help) {
  // parse() hands a flag "1" when given alone, else the text after '='.
  specs_.push_back({std::move(names), std::move(help), "",
                    [out](const std::string& f, const std::string& v) {
                      if (v == "1" || v == "true" || v == "yes" || v == "on") *out = true;
                      else if (v == "0" || v == "false" || v == "no" || v == "off") *out = false;
                      else fail(f, " is a switch: give it alone, or as ", f, "=true / ", f, "=false (not '", v, "')");
                    },
                    false});
}

void Args::add_custom(std::vector<std::string> names, std::string value_hint, std::string help,
                      std::function<void(const std::string& flag, const std::string& value)> set) {
  specs_.push_back({std::move(names), std::move(help), std::move(value_hint), std::move(set)});
}

void Args::add_multi(std::vector<std::string> names, std::vector<std::string>* out, std::string help) {
  specs_.push_back({std::move(names), std::move(help), "TEXT",
                    [out](const std::string&, const std::string& v) { out->push_back(v); }});
}

void Args::positional(std::string name, std::string* out, std::string help) {
  pos_name_ = std::move(name);
  pos_help_ = std::move(help);
  pos_out_ = out;
}

const Args::Spec* Args::find(const std::string& name) const {
  for (const Spec& s : specs_)
    for (const std::string& n : s.names)
      if (n == name) return &s;
  return nullptr;
}

bool Args::given(const std::string& name) const {
  const Spec* s = find(name);
  for (const std::string& g : given_)
    if (s ? find(g) == s : g == name) return true;
  return false;
}

bool Args::parse(int argc, char** argv) {
  bool have_pos = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i], value;
    if (a == "-h" || a == "--help") {
      std::fputs(usage().c_str(), stdout);
      return false;
    }
    if (a == "--version") {
      std::printf("%s\n", version_string().c_str());
      return false;
    }
    if (a.size() > 1 && a[0] == '-' && !(a.size() > 1 && (std::isdigit(static_cast<unsigned char>(a[1])) != 0))) {
      bool inline_value = false;
      if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
        value = a.substr(eq + 1);
        a = a.substr(0, eq);
        inline_value = true;
      }
      const Spec* s = find(a);
      if (!s) unknown_option(a);
      if (!s->takes_value && !inline_value) value = "1";
      if (s->takes_value && !inline_value) {
        if (i + 1 >= argc) fail("edgellm ", command_, ": option ", a, " needs a value");
        value = argv[++i];
      }
      s->set(a, value);
      given_.push_back(a);
      continue;
    }
    if (!pos_out_ || have_pos) fail("edgellm ", command_, ": unexpected argument '", a, "' (see edgellm ", command_, " --help)");
    *pos_out_ = a;
    have_pos = true;
  }
  return true;
}

namespace {

// Edit distance (insert, delete, substitute, swap two neighbours: "--tmep"
// is one step from "--temp"), for did-you-mean hints.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// llama.cpp flags people type out of habit, with what to do here instead.
const char* llamacpp_habit(const std::string& flag) {
  static const struct { const char* flag; const char* advice; } kHabits[] = {
      {"-ngl", "edgellm runs on the CPU only; drop -ngl"},
      {"--n-gpu-layers", "edgellm runs on the CPU only; drop --n-gpu-layers"},
      {"--gpu-layers", "edgellm runs on the CPU only; drop --gpu-layers"},
      {"-cnv", "for a conversation use 'edgellm chat'"},
      {"--conversation", "for a conversation use 'edgellm chat'"},
      {"-i", "for an interactive conversation use 'edgellm chat'"},
      {"--interactive", "for an interactive conversation use 'edgellm chat'"},
      {"-fa", "edgellm's attention is always fused; drop -fa"},
      {"--flash-attn", "edgellm's attention is always fused; drop --flash-attn"},
      {"--mlock", "edgellm's --load-mode hugepages keeps the weights resident"},
  };
  for (const auto& h : kHabits)
    if (flag == h.flag) return h.advice;
  return nullptr;
}

}  // namespace

void Args::unknown_option(const std::string& name) const {
  const std::string where = "edgellm " + command_ + ": unknown option '" + name.substr(0, 200) + "'";
  if (const char* advice = llamacpp_habit(name)) fail(where, ": ", advice);
  // The closest known name: a small edit distance, or the name it begins.
  std::string best;
  size_t best_d = std::string::npos;
  for (const Spec& s : specs_)
    for (const std::string& n : s.names) {
      if (name.size() > 64) break;  // no hint for a pasted blob
      const size_t d = n.size() > name.size() && name.size() >= 4 && n.rfind(name, 0) == 0 ? 1 : edit_distance(name, n);
      if (d < best_d) best_d = d, best = n;
    }
  if (!best.empty() && best_d <= std::max<size_t>(2, name.size() / 4))
    fail(where, "; did you mean ", best, "? (see edgellm ", command_, " --help)");
  fail(where, " (see edgellm ", command_, " --help)");
}

std::string Args::usage() const {
  std::string u = "usage: edgellm " + command_ + " [options]" + (pos_out_ ? " " + pos_name_ : "") + "\n" + summary_ + "\n\n";
  if (pos_out_) u += "  " + pos_name_ + "  " + pos_help_ + "\n";
  u += "  -h, --help                show this help\n  --version                 print the version and build\n";
  for (const Spec& s : specs_) {
    std::string n;
    for (const std::string& x : s.names) n += (n.empty() ? "" : ", ") + x;
    if (s.takes_value) n += " " + s.value_hint;
    std::string help = s.help;
    if (!s.default_text.empty() && help.find("default") == std::string::npos) help += " (default " + s.default_text + ")";
    u += "  " + n + std::string(n.size() < 26 ? 26 - n.size() : 1, ' ') + help + "\n";
  }
  return u;
}

}  // namespace edgellm::cli
