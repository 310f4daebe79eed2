// Weight residency (gguf::Residency): a file read into huge pages holds the
// same bytes as its mapping, and a model loaded that way generates the same
// tokens; bad --load-mode values are rejected.
#include <gtest/gtest.h>

#include <cstring>

#include "base/error.h"
#include "format/gguf.h"
#include "run_cli.h"
#include "test_models.h"

namespace edgellm {
namespace {

TEST(LoadMode, HugePagesHoldTheSameBytesAsTheMapping) {
  const auto mapped = gguf::File::open(test::stories260k(), {}, gguf::Residency::Mmap);
  const auto copied = gguf::File::open(test::stories260k(), {}, gguf::Residency::HugePages);
  EXPECT_EQ(mapped->residency(), gguf::Residency::Mmap);
  EXPECT_EQ(copied->residency(), gguf::Residency::HugePages);
  ASSERT_EQ(mapped->tensors().size(), copied->tensors().size());
  for (size_t i = 0; i < mapped->tensors().size(); ++i) {
    const gguf::TensorInfo& a = mapped->tensors()[i];
    const gguf::TensorInfo& b = copied->tensors()[i];
    ASSERT_EQ(a.nbytes, b.nbytes) << a.name;
    EXPECT_NE(a.data, b.data) << a.name;
    EXPECT_EQ(0, std::memcmp(a.data, b.data, a.nbytes)) << a.name;
  }
  // Auto keeps small files mapped (huge pages pay off from kAutoHugePagesBytes).
  EXPECT_EQ(gguf::File::open(test::stories260k(), {}, gguf::Residency::Auto)->residency(), gguf::Residency::Mmap);
}

TEST(LoadMode, ParseNames) {
  EXPECT_EQ(gguf::parse_residency("auto"), gguf::Residency::Auto);
  EXPECT_EQ(gguf::parse_residency("mmap"), gguf::Residency::Mmap);
  EXPECT_EQ(gguf::parse_residency("hugepages"), gguf::Residency::HugePages);
  EXPECT_THROW(gguf::parse_residency("huge"), Error);
}

TEST(LoadMode, RunGeneratesTheSameTokensEitherWay) {
  auto run = [](const char* mode) {
    return test::run_command({EDGELLM_CLI, "run", "-m", test::stories260k(), "-p", "Once upon", "-n", "24", "--temp",
                              "0", "--ids", "--load-mode", mode});
  };
  const auto m = run("mmap"), h = run("hugepages");
  ASSERT_TRUE(m.exited_with(0) && h.exited_with(0)) << m.describe() << h.describe();
  EXPECT_EQ(m.out, h.out);
  EXPECT_NE(h.err.find("weights hugepages"), std::string::npos) << h.err;
  EXPECT_NE(m.err.find("weights mmap"), std::string::npos) << m.err;
  const auto bad = run("bogus");
  EXPECT_TRUE(bad.exited_with(1)) << bad.describe();
  EXPECT_NE(bad.err.find("unknown load mode 'bogus'"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace edgellm
