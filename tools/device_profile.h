// A device as data: RAM, the memory an app may hold before the OS kills it,
// read bandwidth, int8 throughput and cores. Profiles live in devices/*.json
// (each names its sources and which numbers are estimates); `--device host`
// measures this machine instead, and `edgellm probe -o json` writes that
// measurement as a profile.
#pragma once
#include <string>
#include <vector>

namespace edgellm {

struct DeviceProfile {
  std::string name;         // "snapdragon-8-elite-gen5"
  std::string description;
  double ram_gib = 0;
  double app_budget_gib = 0;  // Android LMK / iOS jetsam / what is free on a PC
  double bandwidth_gbs = 0;   // GB/s (1e9 bytes) of memory reads
  double int8_gops = 0;       // int8 dot-product GOP/s over all cores
  int big_cores = 0, little_cores = 0;
  std::string source;         // where the numbers come from
  std::vector<std::string> estimated;  // fields that are estimates, not specs or measurements
  uint64_t ram_bytes() const { return uint64_t(ram_gib * 1073741824.0); }
  uint64_t budget_bytes() const { return uint64_t(app_budget_gib * 1073741824.0); }
};

// Parses and checks a profile (every field present, numbers in range).
// Throws Error "SOURCE: ..." naming the missing or bad field.
DeviceProfile parse_device_profile(const std::string& text, const std::string& source);
std::string device_profile_json(const DeviceProfile& d);  // what parse_device_profile reads

// NAME (a file devices/NAME.json), "host" (probe this machine: a few
// seconds) or a path to a profile (*.json or containing '/').
DeviceProfile load_device(const std::string& spec, int n_threads = 0);
// The folder holding the built-in profiles: $EDGELLM_DEVICES, else the
// first devices/ beside or above the executable (a build tree inside the
// source tree, or PREFIX/share/edgellm/devices). "" when none is found.
std::string device_dir();
std::vector<std::string> device_names();  // sorted names of the built-in profiles

// This machine, measured: tools/probe's bandwidth and int8 numbers, RAM and
// the memory available now (/proc/meminfo, a cgroup limit if lower), big
// and little cores by their maximum frequency.
DeviceProfile host_device_profile(int n_threads, double buffer_mib = 512);

}  // namespace edgellm
