// What this host can do, measured: memory read bandwidth (all threads and one
// thread), int8 dot-product throughput of the active kernels, cores, ISA.
// `bench` divides achieved weight-streaming GB/s by the read bandwidth to say
// how close decode comes to the speed of light.
#pragma once
#include <cstddef>
#include <string>

namespace edgellm {

struct ProbeResult {
  int cores = 0;
  int threads = 0;              // threads used for the all-thread numbers
  std::string isa;              // active kernel set
  double read_gbs_all = 0;      // GB/s (1e9 bytes), streaming reads, all threads (best of 5 passes)
  double read_gbs_one = 0;      // GB/s, one thread (best of 3)
  double int8_gops = 0;         // q8_0 x q8_0 dot products, all threads, GOP/s (2 ops per MAC)
  double buffer_mib = 0;        // size of the buffer streamed
};

// Streams a buffer much larger than the caches; takes about a second or two.
ProbeResult probe_host(int n_threads, double buffer_mib = 512);
std::string probe_to_json(const ProbeResult& p);

// Read bandwidth (GB/s, best of `passes`) over memory that already exists,
// e.g. a loaded model's weights: `bench` measures the bus this way right
// before and after each decode test, over the very pages decode streams,
// without allocating a buffer that would show in the test's memory peaks.
// The range should be several times the last-level cache.
double read_bandwidth_over(const void* data, size_t bytes, int n_threads, int passes = 5);

}  // namespace edgellm
