// Which CPUs this process may run on, and which of them are fast. The default
// thread count follows both:
//  - under `taskset -c 0` (or a container's cpuset) one thread per allowed CPU,
//    not one per CPU of the machine, which oversubscribes the few we may use;
//  - on a heterogeneous CPU (a phone's big.LITTLE, Intel's P+E cores) only the
//    performance cores: a decode step ends when its slowest thread does, so a
//    little core given an equal share of the rows holds the big ones back.
// "Fast" is read from sysfs: cpu_capacity (the scheduler's relative capacity,
// Arm) or else cpufreq/cpuinfo_max_freq. EDGELLM_SYSFS_CPU points elsewhere
// than /sys/devices/system/cpu (tests use a fake tree).
#pragma once
#include <string>
#include <vector>

namespace edgellm {

// Number of CPUs in this process's affinity mask (sched_getaffinity); where
// there is no such API, the machine's CPU count. Always >= 1.
int allowed_cpu_count();

// The CPUs of the affinity mask, in increasing order (0..n-1 where there is no
// affinity API).
std::vector<int> allowed_cpus();

// How fast each CPU is relative to the others, from the sysfs tree at root
// (cpu<N>/cpu_capacity, else cpu<N>/cpufreq/cpuinfo_max_freq); 0 where
// unknown. One entry per element of cpus.
std::vector<long> cpu_speeds(const std::vector<int>& cpus, const std::string& root);

// cpus ordered fastest first (ties: lower id first); --pin binds thread i to
// element i.
std::vector<int> fastest_first(const std::vector<int>& cpus, const std::string& root);

// The performance cores among cpus: all of them on a homogeneous CPU (or when
// speeds are unknown); on a heterogeneous one, those whose capacity is at
// least 60% of the fastest (cpu_capacity: little cores sit at 25-50%, mid
// cores at 70-90%), or whose top frequency is at least 85% of the fastest
// (cpuinfo_max_freq: E-cores run at ~75% of P-cores' clock, while P-cores'
// own boost bins and AMD's preferred cores differ by a few percent only).
std::vector<int> performance_cpus(const std::vector<int>& cpus, const std::string& root);

// The sysfs CPU root: $EDGELLM_SYSFS_CPU or /sys/devices/system/cpu.
std::string sysfs_cpu_root();

// The default thread count: the performance cores this process may run on.
int default_thread_count();

// Restricts this process (and the threads it creates later) to the CPUs a
// llama.cpp-style mask names: hex "0xF0" / "f0" (-C, --cpu-mask) or a range
// "4-7" / list "0,2-3" (--cpu-range). Fails clearly on a malformed mask, on
// CPUs this process may not use, or where the OS has no affinity API.
std::vector<int> parse_cpu_mask(const std::string& hex);
std::vector<int> parse_cpu_range(const std::string& range);
void restrict_to_cpus(const std::vector<int>& cpus, const std::string& flag);

}  // namespace edgellm
