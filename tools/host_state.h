// What a benchmark record says about the machine besides its measured
// bandwidth: the CPU's name, the kernel, and the conditions that change a
// result from one minute to the next (temperatures, clock frequencies).
// Read from /proc and /sys where the kernel exposes them; where it does not
// (containers, VMs, macOS) the reading says so instead of guessing.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace edgellm {

// The CPU's marketing name, as llama.cpp's CPU backend reports it ("CPU" if unknown).
std::string cpu_model_name();
// Now, as RFC 3339 UTC ("2026-12-03T21:40:00Z"): when a reading was taken.
std::string utc_now_rfc3339();
// `uname -sr` ("Linux 6.1.0-28-amd64") and `uname -m` ("x86_64").
std::string kernel_release();
std::string machine_name();

struct ThermalZone {
  std::string name;  // the zone's type ("x86_pkg_temp", "cpu-big0-thermal"); thermal_zoneN if it has none
  double temp_c = 0;
};

struct ThermalReading {
  bool available = false;  // any zone readable
  std::vector<ThermalZone> zones;
  std::string note;  // why not available, or where the values came from
  std::optional<double> hottest_c() const;
};

struct FreqReading {
  bool available = false;        // cpufreq present for at least one CPU
  std::vector<double> cur_mhz;   // per CPU, in CPU order (-1 where that CPU has no cpufreq)
  std::vector<double> max_mhz;
  std::string governor;          // of cpu0; "" if unknown
  std::string note;
};

// sysfs_root is "/sys" except in tests, which point it at a fake tree.
ThermalReading read_thermal(const std::string& sysfs_root = "/sys");
FreqReading read_cpu_freq(const std::string& sysfs_root = "/sys");

}  // namespace edgellm
