#include "tools/host_state.h"

#include <sys/utsname.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>

namespace edgellm {

namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_line(const fs::path& p) {
  std::ifstream f(p);
  std::string line;
  if (!f || !std::getline(f, line)) return std::nullopt;
  return line;
}

std::optional<double> read_number(const fs::path& p) {
  const std::optional<std::string> s = read_line(p);
  if (!s) return std::nullopt;
  try {
    size_t used = 0;
    const double v = std::stod(*s, &used);
    return used > 0 ? std::optional<double>(v) : std::nullopt;
  } catch (...) {
    return std::nullopt;  // "N/A", empty: a zone that cannot be read right now
  }
}

// Entries of dir whose names are prefix + a number, in numeric order.
std::vector<std::pair<int, fs::path>> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<int, fs::path>> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) != 0 || n.size() == prefix.size()) continue;
    const std::string rest = n.substr(prefix.size());
    if (!std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    out.push_back({std::stoi(rest), e.path()});
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string cpu_model_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    // x86 says "model name"; some ARM kernels only name the board ("Hardware").
    if (line.rfind("model name", 0) == 0 || line.rfind("Hardware", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const size_t b = line.find_first_not_of(" \t", colon + 1);
      if (b != std::string::npos) return line.substr(b);
    }
  }
  return "CPU";
}

std::string utc_now_rfc3339() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%FT%TZ", &tm);
  return buf;
}

std::string kernel_release() {
  utsname u{};
  if (uname(&u) != 0) return "unknown";
  return std::string(u.sysname) + " " + u.release;
}

std::string machine_name() {
  utsname u{};
  return uname(&u) == 0 ? std::string(u.machine) : "unknown";
}

std::optional<double> ThermalReading::hottest_c() const {
  if (zones.empty()) return std::nullopt;
  double t = zones[0].temp_c;
  for (const ThermalZone& z : zones) t = std::max(t, z.temp_c);
  return t;
}

ThermalReading read_thermal(const std::string& sysfs_root) {
  ThermalReading r;
  const fs::path dir = fs::path(sysfs_root) / "class" / "thermal";
  const auto zones = numbered(dir, "thermal_zone");
  for (const auto& [index, path] : zones) {
    // The kernel reports millidegrees Celsius.
    const std::optional<double> milli = read_number(path / "temp");
    if (!milli) continue;
    ThermalZone z;
    z.name = read_line(path / "type").value_or(path.filename().string());
    z.temp_c = *milli / 1000.0;
    r.zones.push_back(z);
  }
  r.available = !r.zones.empty();
  if (zones.empty())
    r.note = "no " + dir.string() + "/thermal_zone*: this host exposes no temperatures (a VM or container?)";
  else if (!r.available)
    r.note = "thermal zones exist in " + dir.string() + " but none could be read";
  else
    r.note = "millidegrees from " + dir.string() + "/thermal_zone*/temp";
  return r;
}

FreqReading read_cpu_freq(const std::string& sysfs_root) {
  FreqReading r;
  const fs::path dir = fs::path(sysfs_root) / "devices" / "system" / "cpu";
  for (const auto& [index, path] : numbered(dir, "cpu")) {
    // kHz in sysfs.
    const std::optional<double> cur = read_number(path / "cpufreq" / "scaling_cur_freq");
    const std::optional<double> max = read_number(path / "cpufreq" / "cpuinfo_max_freq");
    r.cur_mhz.push_back(cur ? *cur / 1000.0 : -1);
    r.max_mhz.push_back(max ? *max / 1000.0 : -1);
    if (cur) r.available = true;
    if (r.governor.empty()) r.governor = read_line(path / "cpufreq" / "scaling_governor").value_or("");
  }
  if (!r.available) {
    r.cur_mhz.clear();
    r.max_mhz.clear();
    r.note = "no " + dir.string() + "/cpu*/cpufreq: this host exposes no CPU frequencies (a VM or container?)";
  } else {
    r.note = "kHz from " + dir.string() + "/cpu*/cpufreq/scaling_cur_freq";
  }
  return r;
}

}  // namespace edgellm
