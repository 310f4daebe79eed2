// SHA-256 against FIPS 180-4's examples and `sha256sum`, at every split of
// the input across update() calls (the block buffer's edges).
#include <gtest/gtest.h>

#include <fstream>

#include "base/error.h"
#include "base/sha256.h"
#include "test_models.h"

namespace edgellm {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, SplitsDoNotMatter) {
  std::string data;
  for (int i = 0; i < 300; ++i) data += char(i * 37 + 11);
  const std::string whole = sha256_hex(data);
  for (size_t cut = 0; cut <= data.size(); cut += 7) {
    Sha256 h;
    h.update(std::string_view(data).substr(0, cut));
    h.update(std::string_view(data).substr(cut));
    EXPECT_EQ(h.hex(), whole) << "cut at " << cut;
  }
  // Every length around the 55/56/64-byte padding edges.
  for (size_t n = 50; n < 130; ++n) {
    Sha256 a, b;
    a.update(data.substr(0, n));
    for (size_t i = 0; i < n; ++i) b.update(&data[i], 1);
    EXPECT_EQ(a.hex(), b.hex()) << n;
  }
}

TEST(Sha256, FileEqualsBytes) {
  const std::string path = test::temp_dir() + "/sha-file.bin";
  std::string data(3 * 1024 * 1024 + 17, 'x');
  for (size_t i = 0; i < data.size(); i += 4093) data[i] = char(i);
  std::ofstream(path, std::ios::binary) << data;
  EXPECT_EQ(sha256_file_hex(path), sha256_hex(data));
  try {
    sha256_file_hex(path + ".missing");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(".missing"), std::string::npos);
  }
}

}  // namespace
}  // namespace edgellm
