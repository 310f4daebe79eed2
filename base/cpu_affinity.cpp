#include "base/cpu_affinity.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "base/error.h"

#if defined(__linux__)
#include <sched.h>
#endif

namespace edgellm {

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
#endif
  if (cpus.empty())
    for (int c = 0; c < std::max(1, int(std::thread::hardware_concurrency())); ++c) cpus.push_back(c);
  return cpus;
}

int allowed_cpu_count() { return int(allowed_cpus().size()); }

std::string sysfs_cpu_root() {
  const char* env = std::getenv("EDGELLM_SYSFS_CPU");
  return env && *env ? env : "/sys/devices/system/cpu";
}

namespace {

long read_long(const std::string& path) {
  std::ifstream f(path);
  long v = 0;
  return f >> v && v > 0 ? v : 0;
}

enum class SpeedSource { Capacity, MaxFreq, Unknown };

// Speeds from one source for every CPU: mixing sources across CPUs would
// compare a capacity with a frequency.
std::vector<long> speeds_from(const std::vector<int>& cpus, const std::string& root, SpeedSource* source) {
  for (SpeedSource s : {SpeedSource::Capacity, SpeedSource::MaxFreq}) {
    std::vector<long> v;
    for (int c : cpus) {
      const std::string dir = root + "/cpu" + std::to_string(c);
      v.push_back(read_long(dir + (s == SpeedSource::Capacity ? "/cpu_capacity" : "/cpufreq/cpuinfo_max_freq")));
    }
    if (!v.empty() && std::all_of(v.begin(), v.end(), [](long x) { return x > 0; })) {
      *source = s;
      return v;
    }
  }
  *source = SpeedSource::Unknown;
  return std::vector<long>(cpus.size(), 0);
}

}  // namespace

std::vector<long> cpu_speeds(const std::vector<int>& cpus, const std::string& root) {
  SpeedSource s;
  return speeds_from(cpus, root, &s);
}

std::vector<int> fastest_first(const std::vector<int>& cpus, const std::string& root) {
  const std::vector<long> speed = cpu_speeds(cpus, root);
  std::vector<size_t> order(cpus.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return speed[a] > speed[b]; });
  std::vector<int> out;
  for (size_t i : order) out.push_back(cpus[i]);
  return out;
}

std::vector<int> performance_cpus(const std::vector<int>& cpus, const std::string& root) {
  SpeedSource source;
  const std::vector<long> speed = speeds_from(cpus, root, &source);
  if (source == SpeedSource::Unknown || cpus.empty()) return cpus;
  const long top = *std::max_element(speed.begin(), speed.end());
  const double share = source == SpeedSource::Capacity ? 0.60 : 0.85;
  std::vector<int> out;
  for (size_t i = 0; i < cpus.size(); ++i)
    if (double(speed[i]) >= share * double(top)) out.push_back(cpus[i]);
  return out;
}

int default_thread_count() {
  return std::max(1, int(performance_cpus(allowed_cpus(), sysfs_cpu_root()).size()));
}

std::vector<int> parse_cpu_mask(const std::string& text) {
  std::string hex = text;
  if (hex.rfind("0x", 0) == 0 || hex.rfind("0X", 0) == 0) hex = hex.substr(2);
  if (hex.empty() || hex.size() > 256 ||
      !std::all_of(hex.begin(), hex.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }))
    fail("--cpu-mask: '", text.substr(0, 80), "' is not a hex CPU mask (e.g. 0xF0 = CPUs 4-7)");
  std::vector<int> cpus;
  for (size_t k = 0; k < hex.size(); ++k) {  // the last digit holds CPUs 0-3
    const char c = hex[hex.size() - 1 - k];
    const int nibble = std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10;
    for (int b = 0; b < 4; ++b)
      if (nibble >> b & 1) cpus.push_back(int(k) * 4 + b);
  }
  if (cpus.empty()) fail("--cpu-mask: ", text, " names no CPU");
  return cpus;
}

std::vector<int> parse_cpu_range(const std::string& text) {
  const auto bad = [&] { fail("--cpu-range: '", text.substr(0, 80), "' is not a CPU range like 4-7 or 0,2-3"); };
  std::vector<int> cpus;
  size_t i = 0;
  const auto number = [&]() {
    if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) bad();
    long v = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      v = v * 10 + (text[i++] - '0');
      if (v >= 1024) bad();
    }
    return int(v);
  };
  for (;;) {
    const int lo = number();
    int hi = lo;
    if (i < text.size() && text[i] == '-') ++i, hi = number();
    if (hi < lo) bad();
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    if (i == text.size()) break;
    if (text[i++] != ',') bad();
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

void restrict_to_cpus(const std::vector<int>& wanted, const std::string& flag) {
#if defined(__linux__)
  const std::vector<int> allowed = allowed_cpus();
  cpu_set_t set;
  CPU_ZERO(&set);
  std::string missing;
  for (int c : wanted) {
    if (std::find(allowed.begin(), allowed.end(), c) == allowed.end()) {
      missing += (missing.empty() ? "" : ",") + std::to_string(c);
      continue;
    }
    CPU_SET(c, &set);
  }
  if (!missing.empty())
    fail(flag, ": CPU ", missing, " is not available to this process (it may use ", allowed.size(),
         " CPUs: see `taskset -p $$` or nproc)");
  if (sched_setaffinity(0, sizeof set, &set) != 0) fail(flag, ": cannot set this process's CPU affinity");
#else
  (void)wanted;
  fail(flag, ": CPU affinity is not supported on this OS (Linux and Android only)");
#endif
}

}  // namespace edgellm
