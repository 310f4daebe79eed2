// Threads and cores: the default thread count follows the affinity mask and,
// on heterogeneous CPUs, the performance cores (read from a fake sysfs tree);
// --pin binds fastest first; -C / --cpu-range restrict the process.
#include <sched.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/cpu_affinity.h"
#include "base/error.h"
#include "run_cli.h"
#include "test_models.h"

namespace edgellm {
namespace {

namespace fs = std::filesystem;

// A fake /sys/devices/system/cpu: file "cpu<N>/<leaf>" = value per CPU.
std::string fake_sysfs(const std::string& name, const std::string& leaf, const std::vector<std::pair<int, long>>& v) {
  const std::string root = test::temp_dir() + "/sysfs-" + name;
  fs::remove_all(root);
  for (const auto& [cpu, value] : v) {
    const fs::path p = fs::path(root) / ("cpu" + std::to_string(cpu)) / leaf;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << value << "\n";
  }
  return root;
}

const std::vector<int> kSix = {0, 1, 2, 3, 4, 5};

TEST(CpuTopology, TwoBigFourLittleByCapacity) {
  const std::string root = fake_sysfs("cap", "cpu_capacity", {{0, 446}, {1, 446}, {2, 446}, {3, 446}, {4, 1024}, {5, 1024}});
  EXPECT_EQ(performance_cpus(kSix, root), (std::vector<int>{4, 5}));
  EXPECT_EQ(fastest_first(kSix, root), (std::vector<int>{4, 5, 0, 1, 2, 3}));
  // Only little cores allowed (taskset -c 0-3): they are the fastest we have.
  EXPECT_EQ(performance_cpus({0, 1, 2, 3}, root), (std::vector<int>{0, 1, 2, 3}));
}

TEST(CpuTopology, PrimeBigAndLittleKeepsPrimeAndBig) {
  const std::string root = fake_sysfs("tri", "cpu_capacity",
                                      {{0, 325}, {1, 325}, {2, 325}, {3, 325}, {4, 870}, {5, 870}, {6, 870}, {7, 1024}});
  EXPECT_EQ(performance_cpus({0, 1, 2, 3, 4, 5, 6, 7}, root), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(fastest_first({0, 1, 2, 3, 4, 5, 6, 7}, root).front(), 7);
}

TEST(CpuTopology, PAndECoresByMaxFrequency) {
  // P-cores with two boost bins (5.4 and 5.2 GHz) and E-cores at 3.9 GHz.
  const std::string root = fake_sysfs("freq", "cpufreq/cpuinfo_max_freq",
                                      {{0, 5400000}, {1, 5200000}, {2, 5200000}, {3, 3900000}, {4, 3900000}, {5, 3900000}});
  EXPECT_EQ(performance_cpus(kSix, root), (std::vector<int>{0, 1, 2}));
}

TEST(CpuTopology, HomogeneousOrUnknownUsesEveryCpu) {
  const std::string same = fake_sysfs("same", "cpufreq/cpuinfo_max_freq", {{0, 3000000}, {1, 3000000}, {2, 3000000}});
  EXPECT_EQ(performance_cpus({0, 1, 2}, same), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(performance_cpus({0, 1, 2}, test::temp_dir() + "/no-such-sysfs"), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(fastest_first({2, 0, 1}, test::temp_dir() + "/no-such-sysfs"), (std::vector<int>{2, 0, 1}));
  // A CPU with no reading: the source is not used at all (no mixed units).
  const std::string partial = fake_sysfs("partial", "cpu_capacity", {{0, 1024}, {1, 300}});
  EXPECT_EQ(performance_cpus({0, 1, 2}, partial), (std::vector<int>{0, 1, 2}));
}

TEST(CpuTopology, MaskAndRangeParse) {
  EXPECT_EQ(parse_cpu_mask("0xF0"), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(parse_cpu_mask("5"), (std::vector<int>{0, 2}));
  EXPECT_EQ(parse_cpu_mask("0x100"), (std::vector<int>{8}));
  EXPECT_EQ(parse_cpu_range("4-7"), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(parse_cpu_range("3,0-1,1"), (std::vector<int>{0, 1, 3}));
  for (const char* bad : {"", "0x", "0xG", "0", "-1"}) EXPECT_THROW(parse_cpu_mask(bad), Error) << bad;
  for (const char* bad : {"", "7-4", "1,", "a", "1-", "99999"}) EXPECT_THROW(parse_cpu_range(bad), Error) << bad;
}

// The allowed CPUs of this test process, for the CLI checks below.
std::vector<int> allowed() { return allowed_cpus(); }

std::string timings_threads(const test::RunResult& r) {
  const size_t at = r.err.find("| threads ");
  if (at == std::string::npos) return "?";
  return r.err.substr(at + 10, r.err.find(" |", at + 10) - (at + 10));
}

TEST(CpuTopologyCli, TasksetOneCpuMeansOneThread) {
  if (std::system("command -v taskset >/dev/null 2>&1") != 0) GTEST_SKIP() << "no taskset";
  const auto r = test::run_shell("taskset -c " + std::to_string(allowed().front()) + " " + EDGELLM_CLI + " run -m " +
                                 test::stories260k() + " -p hi -n 4");
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(timings_threads(r), "1") << r.err;
}

TEST(CpuTopologyCli, BigCoresByDefaultAndPinnedFirst) {
  const std::vector<int> cpus = allowed();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  // The last allowed CPU is "big", the others "little".
  std::vector<std::pair<int, long>> caps;
  for (int c : cpus) caps.push_back({c, c == cpus.back() ? 1024 : 400});
  const std::string root = fake_sysfs("cli", "cpu_capacity", caps);
  const std::string run = "EDGELLM_SYSFS_CPU=" + root + " " + EDGELLM_CLI + " run -m " + test::stories260k() + " -p hi -n 4";
  auto r = test::run_shell(run);
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(timings_threads(r), "1") << r.err;
  r = test::run_shell(run + " --pin");
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(timings_threads(r), "1 pinned to CPUs " + std::to_string(cpus.back())) << r.err;
  r = test::run_shell(run + " --pin -t 2");
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(timings_threads(r), "2 pinned to CPUs " + std::to_string(cpus.back()) + "," + std::to_string(cpus.front()))
      << r.err;
}

TEST(CpuTopologyCli, CpuRangeRestrictsTheProcess) {
  const int c = allowed().front();
  auto r = test::run_command({EDGELLM_CLI, "run", "-m", test::stories260k(), "-p", "hi", "-n", "4", "--cpu-range",
                              std::to_string(c), "--pin"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  EXPECT_EQ(timings_threads(r), "1 pinned to CPUs " + std::to_string(c)) << r.err;
  r = test::run_command({EDGELLM_CLI, "run", "-m", test::stories260k(), "-p", "hi", "-C", "0x0", "-n", "1"});
  EXPECT_TRUE(r.exited_with(1)) << r.describe();
  EXPECT_NE(r.err.find("--cpu-mask: 0x0 names no CPU"), std::string::npos) << r.err;
  r = test::run_command({EDGELLM_CLI, "run", "-m", test::stories260k(), "-p", "hi", "--cpu-range", "1000", "-n", "1"});
  EXPECT_TRUE(r.exited_with(1)) << r.describe();
  EXPECT_NE(r.err.find("is not available to this process"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace edgellm
