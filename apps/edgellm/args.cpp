#include "apps/edgellm/args.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/error.h"

namespace edgellm::cli {

void Args::add(std::vector<std::string> names, std::string* out, std::string help) {
  specs_.push_back({std::move(names), std::move(help), "TEXT",
                    [out](const std::string&, const std::string& v) { *out = v; }});
}

void Args::add(std::vector<std::string> names, int64_t* out, std::string help, int64_t min, int64_t max) {
  specs_.push_back({std::move(names), std::move(help), "N", [out, min, max](const std::string& f, const std::string& v) {
                      errno = 0;
                      char* end = nullptr;
                      const long long x = std::strtoll(v.c_str(), &end, 10);
                      if (v.empty() || *end != '\0' || errno == ERANGE)
                        fail(f, ": '", v, "' is not an integer");
                      if (x < min || x > max) fail(f, ": ", x, " is out of range (", min, " to ", max, ")");
                      *out = x;
                    }});
}

void Args::add(std::vector<std::string> names, float* out, std::string help, float min, float max) {
  specs_.push_back({std::move(names), std::move(help), "X", [out, min, max](const std::string& f, const std::string& v) {
                      char* end = nullptr;
                      const float x = std::strtof(v.c_str(), &end);
                      if (v.empty() || *end != '\0') fail(f, ": '", v, "' is not a number");
                      if (!std::isfinite(x)) fail(f, ": ", v, " is not a finite number");
                      if (x < min || x > max) fail(f, ": ", x, " is out of range (", min, " to ", max, ")");
                      *out = x;
                    }});
}

void Args::add_flag(std::vector<std::string> names, bool* out, std::string help) {
  specs_.push_back({std::move(names), std::move(help), "", [out](const std::string&, const std::string&) { *out = true; }, false});
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
    if (a.size() > 1 && a[0] == '-' && !(a.size() > 1 && (std::isdigit(static_cast<unsigned char>(a[1])) != 0))) {
      bool inline_value = false;
      if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
        value = a.substr(eq + 1);
        a = a.substr(0, eq);
        inline_value = true;
      }
      const Spec* s = find(a);
      if (!s) fail("edgellm ", command_, ": unknown option '", a, "' (see edgellm ", command_, " --help)");
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

std::string Args::usage() const {
  std::string u = "usage: edgellm " + command_ + " [options]" + (pos_out_ ? " " + pos_name_ : "") + "\n" + summary_ + "\n\n";
  if (pos_out_) u += "  " + pos_name_ + "  " + pos_help_ + "\n";
  for (const Spec& s : specs_) {
    std::string n;
    for (const std::string& x : s.names) n += (n.empty() ? "" : ", ") + x;
    if (s.takes_value) n += " " + s.value_hint;
    u += "  " + n + std::string(n.size() < 26 ? 26 - n.size() : 1, ' ') + s.help + "\n";
  }
  return u;
}

}  // namespace edgellm::cli
