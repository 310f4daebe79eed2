#include "tools/device_profile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#if defined(__linux__)
#include <unistd.h>
#endif

#include "base/cpu_affinity.h"
#include "base/thread_pool.h"
#include "kernels/matmul.h"
#include "base/error.h"
#include "base/input_file.h"
#include "base/json.h"
#include "template/json.h"
#include "tools/probe.h"

namespace edgellm {

namespace fs = std::filesystem;

DeviceProfile parse_device_profile(const std::string& text, const std::string& source) {
  const tmpl::Json j = tmpl::Json::parse(text, source);
  if (!j.is_object()) fail(source, ": a device profile is a JSON object");
  auto field = [&](const char* key) -> const tmpl::Json& {
    const tmpl::Json* v = j.find(key);
    if (!v) fail(source, ": device profile lacks the field \"", key, "\"");
    return *v;
  };
  auto string = [&](const char* key) {
    const tmpl::Json& v = field(key);
    if (!v.is_string() || v.as_string().empty()) fail(source, ": field \"", key, "\" must be a non-empty string");
    return v.as_string();
  };
  auto number = [&](const char* key, double lo, double hi) {
    const tmpl::Json& v = field(key);
    if (!v.is_number() || !(v.as_number() >= lo && v.as_number() <= hi))
      fail(source, ": field \"", key, "\" must be a number from ", lo, " to ", hi);
    return v.as_number();
  };
  DeviceProfile d;
  d.name = string("name");
  d.description = string("description");
  d.source = string("source");
  d.ram_gib = number("ram_gib", 0.125, 65536);
  d.app_budget_gib = number("app_budget_gib", 0.0625, 65536);
  d.bandwidth_gbs = number("bandwidth_gbs", 0.1, 100000);
  d.int8_gops = number("int8_gops", 0.1, 1e7);
  const double big = number("big_cores", 0, 4096), little = number("little_cores", 0, 4096);
  if (big != std::floor(big) || little != std::floor(little) || big + little < 1)
    fail(source, ": \"big_cores\" and \"little_cores\" must be whole numbers, at least one core in all");
  d.big_cores = int(big);
  d.little_cores = int(little);
  if (d.app_budget_gib > d.ram_gib)
    fail(source, ": app_budget_gib ", d.app_budget_gib, " is more than the device's ram_gib ", d.ram_gib);
  if (const tmpl::Json* e = j.find("estimated")) {
    if (!e->is_array()) fail(source, ": field \"estimated\" must be an array of field names");
    for (const tmpl::Json& x : e->items()) {
      if (!x.is_string() || !j.find(x.as_string()))
        fail(source, ": \"estimated\" lists '", x.is_string() ? x.as_string() : x.dump(), "', which is not a field");
      d.estimated.push_back(x.as_string());
    }
  }
  return d;
}

std::string device_profile_json(const DeviceProfile& d) {
  std::string est;
  for (const std::string& e : d.estimated) est += (est.empty() ? "" : ", ") + json_quote(e);
  char nums[512];
  std::snprintf(nums, sizeof nums,
                "  \"ram_gib\": %.2f,\n  \"app_budget_gib\": %.2f,\n  \"bandwidth_gbs\": %.1f,\n"
                "  \"int8_gops\": %.1f,\n  \"big_cores\": %d,\n  \"little_cores\": %d,\n",
                d.ram_gib, d.app_budget_gib, d.bandwidth_gbs, d.int8_gops, d.big_cores, d.little_cores);
  return "{\n  \"name\": " + json_quote(d.name) + ",\n  \"description\": " + json_quote(d.description) + ",\n" +
         nums + "  \"source\": " + json_quote(d.source) + ",\n  \"estimated\": [" + est + "]\n}\n";
}

namespace {

std::string exe_dir() {
#if defined(__linux__)
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) return p.parent_path().string();
#endif
  return "";
}

bool has_profiles(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") return true;
  return false;
}

}  // namespace

std::string device_dir() {
  if (const char* env = std::getenv("EDGELLM_DEVICES"); env && *env) return env;
  const std::string exe = exe_dir();
  if (exe.empty()) return has_profiles("devices") ? "devices" : "";
  // The build tree usually sits inside the source tree (build/, build-x/),
  // the tests one level deeper; an install puts them in share/edgellm.
  fs::path p = exe;
  for (int up = 0; up < 4 && !p.empty(); ++up, p = p.parent_path()) {
    if (has_profiles(p / "devices")) return (p / "devices").string();
    if (has_profiles(p / "share" / "edgellm" / "devices")) return (p / "share" / "edgellm" / "devices").string();
    if (p == p.parent_path()) break;
  }
  return "";
}

std::vector<std::string> device_names() {
  std::vector<std::string> names;
  const std::string dir = device_dir();
  std::error_code ec;
  if (!dir.empty())
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

DeviceProfile load_device(const std::string& spec, int n_threads) {
  if (spec == "host") return host_device_profile(n_threads > 0 ? n_threads : allowed_cpu_count());
  const bool is_path = spec.find('/') != std::string::npos ||
                       (spec.size() > 5 && spec.compare(spec.size() - 5, 5, ".json") == 0);
  if (is_path) return parse_device_profile(read_input_file(spec, "--device", false, size_t(1) << 20), spec);
  const std::string dir = device_dir();
  if (dir.empty())
    fail("--device ", spec, ": no devices/ folder with the built-in profiles was found beside the edgellm binary; ",
         "set EDGELLM_DEVICES to the repository's devices/ folder, or pass a profile file");
  const fs::path file = fs::path(dir) / (spec + ".json");
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    std::string known;
    for (const std::string& n : device_names()) known += (known.empty() ? "" : ", ") + n;
    fail("--device '", spec, "' is not a known device (", known, ", host, or a profile.json)");
  }
  DeviceProfile d = parse_device_profile(read_input_file(file.string(), "--device", false, size_t(1) << 20),
                                         file.string());
  if (d.name != spec) fail(file.string(), ": its \"name\" is '", d.name, "', not '", spec, "' as the file is named");
  return d;
}

namespace {

// "MemTotal:  16318100 kB" -> bytes; 0 when absent.
uint64_t meminfo(const std::string& key) {
  std::ifstream f("/proc/meminfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key + ":", 0) == 0) return uint64_t(std::strtoull(line.c_str() + key.size() + 1, nullptr, 10)) << 10;
  return 0;
}

// A cgroup v2 memory.max below the machine's memory (containers).
uint64_t cgroup_limit() {
  std::ifstream f("/sys/fs/cgroup/memory.max");
  std::string s;
  if (!(f >> s) || s == "max") return 0;
  return std::strtoull(s.c_str(), nullptr, 10);
}

// Cores by their maximum frequency: the fastest cluster is "big".
void count_cores(DeviceProfile& d) {
  std::map<long, int> by_freq;
  const int n = int(std::max(1u, std::thread::hardware_concurrency()));
  for (int c = 0; c < n; ++c) {
    std::ifstream f("/sys/devices/system/cpu/cpu" + std::to_string(c) + "/cpufreq/cpuinfo_max_freq");
    long khz = 0;
    if (!(f >> khz)) {
      by_freq.clear();
      break;
    }
    ++by_freq[khz];
  }
  if (by_freq.size() < 2) {  // one cluster, or no cpufreq (VMs): all big
    d.big_cores = n;
    d.little_cores = 0;
    return;
  }
  d.big_cores = by_freq.rbegin()->second;
  d.little_cores = n - d.big_cores;
}

// Prefill's int8 throughput: the matmul path a prompt takes (q8_0 weights,
// activations quantized once, the kernel set's GEMM tiles) on 128 tokens
// against a 2048 x 1024 matrix (2 MiB of weights: in L2/L3, so compute,
// not memory, is timed). The probe's own int8 number times one row's dot
// products at a time, which a batch of tokens beats several-fold; a prefill
// estimate must use the batched rate. Best of repeated runs over ~0.3 s.
double gemm_int8_gops(int n_threads) {
  const int64_t cols = 2048, rows = 1024, T = 128;
  std::vector<uint8_t> w(row_size(GgmlType::Q8_0, cols) * size_t(rows));
  std::vector<float> row(static_cast<size_t>(cols)), x(static_cast<size_t>(T * cols)), y(static_cast<size_t>(T * rows));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < cols; ++i) row[size_t(i)] = float(((r * 31 + i * 7919) % 255) - 127) / 127.0f;
    quantize_row(GgmlType::Q8_0, row.data(), w.data() + size_t(r) * row_size(GgmlType::Q8_0, cols), cols);
  }
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 2654435761u % 2001) - 1000) / 1000.0f;
  const WeightView wv{GgmlType::Q8_0, cols, rows, w.data()};
  ThreadPool pool(n_threads);
  const size_t scratch_bytes = (matmul_scratch_bytes(wv, T, n_threads) + 63) / 64 * 64 + 64;
  void* scratch = std::aligned_alloc(64, scratch_bytes);
  if (!scratch) fail("probe: cannot allocate the GEMM scratch");
  using Clock = std::chrono::steady_clock;
  matmul(pool, wv, x.data(), T, y.data(), scratch);  // warm-up: caches, thread wake-up
  double best = 0;
  const auto start = Clock::now();
  do {
    const auto t0 = Clock::now();
    matmul(pool, wv, x.data(), T, y.data(), scratch);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, 2.0 * double(cols * rows * T) / s / 1e9);
  } while (std::chrono::duration<double>(Clock::now() - start).count() < 0.3);
  std::free(scratch);
  return best;
}

}  // namespace

DeviceProfile host_device_profile(int n_threads, double buffer_mib) {
  DeviceProfile d;
  d.name = "host";
  const ProbeResult r = probe_host(n_threads, buffer_mib);
  const uint64_t total = meminfo("MemTotal"), avail = meminfo("MemAvailable"), cg = cgroup_limit();
  uint64_t ram = total;
#if defined(_SC_PHYS_PAGES)
  if (ram == 0) ram = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGE_SIZE));
#endif
  if (cg > 0 && cg < ram) ram = cg;
  // No memory killer budget on a PC: what this process could take now.
  uint64_t budget = avail > 0 ? std::min(avail, ram) : ram;
  d.ram_gib = double(ram) / 1073741824.0;
  d.app_budget_gib = double(budget) / 1073741824.0;
  d.bandwidth_gbs = r.read_gbs_all;
  d.int8_gops = gemm_int8_gops(n_threads);
  count_cores(d);
  std::ostringstream desc;
  desc << "this host, probed: " << r.cores << " cores, " << r.isa << " kernels, " << r.threads << " threads";
  d.description = desc.str();
  d.source = "measured by edgellm probe (read bandwidth over a " + std::to_string(int(r.buffer_mib)) +
             " MiB buffer, best of 5; int8 = q8_0 GEMM of 128 tokens, prefill's kernels); RAM from /proc/meminfo and the cgroup limit; "
             "app budget = MemAvailable at probe time";
  return d;
}

}  // namespace edgellm
