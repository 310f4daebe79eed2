// A small flag parser with llama.cpp-style names. Every flag is declared with
// its type and range, so a bad value ("-n -5", "--temp nan", "-t 0") is
// rejected with a message naming the flag and what it accepts.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace edgellm::cli {

// One line naming this build: version (git describe), build number, build
// type and the kernel ISA in use. Printed by --version on every command.
std::string version_string();

class Args {
 public:
  Args(std::string command, std::string summary) : command_(std::move(command)), summary_(std::move(summary)) {}

  void add(std::vector<std::string> names, std::string* out, std::string help);
  void add(std::vector<std::string> names, int64_t* out, std::string help, int64_t min, int64_t max);
  void add(std::vector<std::string> names, float* out, std::string help, float min, float max);
  // A boolean flag: given alone it sets true; `--flag=false` (or 0/no/off)
  // and `--flag=true` (1/yes/on) set it explicitly; any other value is refused.
  void add_flag(std::vector<std::string> names, bool* out, std::string help);
  // An option whose value goes to `set(flag, value)`, for what the typed
  // forms above do not cover (e.g. remembering that an empty value was given).
  void add_custom(std::vector<std::string> names, std::string value_hint, std::string help,
                  std::function<void(const std::string& flag, const std::string& value)> set);
  // Repeatable option: each occurrence appends.
  void add_multi(std::vector<std::string> names, std::vector<std::string>* out, std::string help);
  // A positional argument (at most one), e.g. inspect's MODEL.
  void positional(std::string name, std::string* out, std::string help);

  // Returns false if --help was given (usage already printed). Throws Error.
  bool parse(int argc, char** argv);
  bool given(const std::string& name) const;
  std::string usage() const;

 private:
  struct Spec {
    std::vector<std::string> names;
    std::string help, value_hint;
    std::function<void(const std::string& flag, const std::string& value)> set;
    bool takes_value = true;
    std::string default_text;  // shown in --help as "(default X)" unless the help says it already
  };
  const Spec* find(const std::string& name) const;
  [[noreturn]] void unknown_option(const std::string& name) const;
  std::string command_, summary_;
  std::vector<Spec> specs_;
  std::vector<std::string> given_;
  std::string pos_name_, pos_help_;
  std::string* pos_out_ = nullptr;
};

}  // namespace edgellm::cli
