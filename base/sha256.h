// SHA-256 (FIPS 180-4), for fingerprints that must be comparable across
// machines and tools: a bench record names its model file by the same hash
// `sha256sum` prints and a hub lists, and its greedy output by the hash of
// the generated ids. Scalar and portable: hashing a 1 GB file takes a few
// seconds, outside anything timed.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace edgellm {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::array<uint8_t, 32> digest();  // finishes; the object is spent afterwards
  std::string hex();                 // digest() as 64 lowercase hex digits

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;  // bytes
};

std::string sha256_hex(std::string_view data);
// The file's hash, read in 1 MiB chunks; throws Error naming the path if it
// cannot be read.
std::string sha256_file_hex(const std::string& path);

}  // namespace edgellm
