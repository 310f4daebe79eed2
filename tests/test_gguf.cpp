// gguf::Writer and gguf::File: byte layout, round trips of every value type
// and of tensors at several alignments, writer validation, and a real model.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "base/error.h"
#include "format/gguf.h"

namespace edgellm::gguf {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

Value uval(ValueType t, uint64_t u) { Value v; v.type = t; v.u = u; return v; }
Value ival(ValueType t, int64_t i) { Value v; v.type = t; v.i = i; return v; }
Value fval(ValueType t, double f) { Value v; v.type = t; v.f = f; return v; }

std::unique_ptr<File> parse(const Bytes& b) { return File::parse(b.data(), b.size(), "test"); }

// Deep comparison; floats bit-exact (FLOAT32 values are float-representable).
void expect_same(const Value& a, const Value& b, const std::string& where) {
  ASSERT_EQ(a.type, b.type) << where;
  switch (a.type) {
    case ValueType::STRING: EXPECT_EQ(a.str, b.str) << where; break;
    case ValueType::FLOAT32: case ValueType::FLOAT64:
      EXPECT_EQ(std::memcmp(&a.f, &b.f, sizeof a.f), 0) << where << ": " << a.f << " vs " << b.f;
      break;
    case ValueType::ARRAY:
      ASSERT_EQ(a.elem_type, b.elem_type) << where;
      ASSERT_EQ(a.arr.size(), b.arr.size()) << where;
      for (size_t k = 0; k < a.arr.size(); ++k)
        expect_same(a.arr[k], b.arr[k], where + "[" + std::to_string(k) + "]");
      break;
    default: EXPECT_EQ(a.u, b.u) << where; EXPECT_EQ(a.i, b.i) << where;
  }
}

// Writes kv, reads it back, and checks every key, value and the order.
void round_trip(const std::vector<std::pair<std::string, Value>>& kv) {
  Writer w;
  for (const auto& [k, v] : kv) w.set(k, v);
  const Bytes b = w.to_bytes();
  const auto f = parse(b);
  ASSERT_EQ(f->metadata().size(), kv.size());
  for (size_t k = 0; k < kv.size(); ++k) {
    EXPECT_EQ(f->metadata()[k].first, kv[k].first);
    expect_same(f->metadata()[k].second, kv[k].second, kv[k].first);
    EXPECT_FALSE(f->metadata()[k].second.to_display().empty());
  }
}

template <class F>
void expect_error(F&& f, const std::string& keyword) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning '" << keyword << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(keyword), std::string::npos)
        << "message: " << e.what() << "\nexpected keyword: " << keyword;
  }
}

Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "edgellm_gguf_XXXXXX").string();
    path = mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

TEST(GgufWriter, ByteExactLayout) {
  Writer w;
  w.set("a", Value::of_u32(0x01020304));
  const uint8_t d[4] = {9, 8, 7, 6};
  w.add_tensor("t", GgmlType::F32, {1}, d, 4);
  const Bytes expect_head = {
      'G', 'G', 'U', 'F', 3, 0, 0, 0,  // magic, version 3
      1, 0, 0, 0, 0, 0, 0, 0,          // n_tensors
      1, 0, 0, 0, 0, 0, 0, 0,          // n_kv
      1, 0, 0, 0, 0, 0, 0, 0, 'a',     // key "a"
      4, 0, 0, 0, 4, 3, 2, 1,          // uint32 0x01020304
      1, 0, 0, 0, 0, 0, 0, 0, 't',     // tensor "t"
      1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,  // n_dims 1, ne[0] = 1
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  // type f32, offset 0
  };
  Bytes expect = expect_head;
  expect.resize(96, 0);  // 74 bytes of header, padded to 32
  expect.insert(expect.end(), {9, 8, 7, 6});
  expect.resize(128, 0);  // the data section is padded too
  EXPECT_EQ(w.to_bytes(), expect);
}

TEST(GgufWriter, EmptyFile) {
  const Bytes b = Writer().to_bytes();
  EXPECT_EQ(b.size(), 32u);
  const auto f = parse(b);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_TRUE(f->metadata().empty());
  EXPECT_TRUE(f->tensors().empty());
}

TEST(GgufRoundTrip, EveryScalarType) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  round_trip({
      {"u8.min", uval(ValueType::UINT8, 0)},       {"u8.max", uval(ValueType::UINT8, 255)},
      {"i8.min", ival(ValueType::INT8, -128)},     {"i8.max", ival(ValueType::INT8, 127)},
      {"u16.max", uval(ValueType::UINT16, 65535)}, {"i16.min", ival(ValueType::INT16, -32768)},
      {"u32.max", Value::of_u32(0xffffffffu)},     {"i32.min", Value::of_i32(INT32_MIN)},
      {"u64.max", Value::of_u64(UINT64_MAX)},      {"i64.min", ival(ValueType::INT64, INT64_MIN)},
      {"i64.max", ival(ValueType::INT64, INT64_MAX)},
      {"f32", Value::of_f32(-1.5f)},               {"f32.tiny", Value::of_f32(1e-45f)},
      {"f32.inf", fval(ValueType::FLOAT32, -inf)}, {"f32.negzero", Value::of_f32(-0.0f)},
      {"f64", fval(ValueType::FLOAT64, 3.141592653589793)},
      {"f64.max", fval(ValueType::FLOAT64, std::numeric_limits<double>::max())},
      {"bool.true", Value::of_bool(true)},         {"bool.false", Value::of_bool(false)},
      {"str", Value::of_string("hello, world")},   {"str.empty", Value::of_string("")},
      {"str.utf8", Value::of_string("h\xc3\xa9llo \xe2\x96\x81 \xf0\x9f\x98\x80")},
      {"str.nul", Value::of_string(std::string("a\0b\n\"", 5))},
  });
}

TEST(GgufRoundTrip, ArraysOfEveryType) {
  std::vector<std::pair<std::string, Value>> kv;
  for (ValueType t : {ValueType::UINT8, ValueType::INT8, ValueType::UINT16, ValueType::INT16,
                      ValueType::UINT32, ValueType::INT32, ValueType::UINT64, ValueType::INT64}) {
    std::vector<Value> items;
    for (int k = 0; k < 5; ++k)
      items.push_back(t == ValueType::UINT8 || t == ValueType::UINT16 || t == ValueType::UINT32 ||
                              t == ValueType::UINT64
                          ? uval(t, uint64_t(k * 50))
                          : ival(t, -k * 25));
    kv.emplace_back(std::string("arr.") + value_type_name(t), Value::of_array(t, items));
  }
  kv.emplace_back("arr.f32", Value::of_array(ValueType::FLOAT32,
                                             {Value::of_f32(0.25f), Value::of_f32(-2)}));
  kv.emplace_back("arr.f64",
                  Value::of_array(ValueType::FLOAT64, {fval(ValueType::FLOAT64, 1e300)}));
  kv.emplace_back("arr.bool", Value::of_array(ValueType::BOOL,
                                              {Value::of_bool(true), Value::of_bool(false)}));
  kv.emplace_back("arr.str", Value::of_array(ValueType::STRING,
                                             {Value::of_string("<s>"), Value::of_string(""),
                                              Value::of_string(std::string("\0x", 2)),
                                              Value::of_string("\xe2\x96\x81the")}));
  kv.emplace_back("arr.empty", Value::of_array(ValueType::INT32, {}));
  kv.emplace_back("arr.empty_str", Value::of_array(ValueType::STRING, {}));
  round_trip(kv);
}

TEST(GgufRoundTrip, NestedArrays) {
  const Value ints = Value::of_array(ValueType::INT32, {Value::of_i32(1), Value::of_i32(-2)});
  const Value strs = Value::of_array(ValueType::STRING, {Value::of_string("x")});
  const Value empty = Value::of_array(ValueType::UINT8, {});
  round_trip({
      {"nested.ints", Value::of_array(ValueType::ARRAY, {ints, ints, empty})},
      {"nested.mixed", Value::of_array(ValueType::ARRAY, {strs, ints, empty})},
      {"nested.empty", Value::of_array(ValueType::ARRAY, {})},
      {"after", Value::of_string("still in sync")},
  });
}

TEST(GgufRoundTrip, SetReplacesAndKeepsOrder) {
  Writer w;
  w.set("a", Value::of_u32(1));
  w.set("b", Value::of_u32(2));
  w.set("a", Value::of_string("one"));
  const Bytes b = w.to_bytes();
  const auto f = parse(b);
  ASSERT_EQ(f->metadata().size(), 2u);
  EXPECT_EQ(f->metadata()[0].first, "a");
  EXPECT_EQ(f->get_string("a"), "one");
  EXPECT_EQ(f->get_int("b"), 2);
}

struct TensorSpec {
  const char* name;
  GgmlType type;
  std::vector<int64_t> ne;
};

class GgufTensors : public ::testing::TestWithParam<size_t> {};

TEST_P(GgufTensors, RoundTripAtAlignment) {
  const size_t align = GetParam();
  const std::vector<TensorSpec> specs = {
      {"f32", GgmlType::F32, {5, 3}},         {"f16", GgmlType::F16, {7}},
      {"bf16", GgmlType::BF16, {3, 2, 2, 1}}, {"q8_0", GgmlType::Q8_0, {64, 2}},
      {"q4_0", GgmlType::Q4_0, {32, 3}},      {"q4_K", GgmlType::Q4_K, {256, 2}},
      {"q6_K", GgmlType::Q6_K, {256}},        {"i8", GgmlType(24), {3}},
      {"f32.last", GgmlType::F32, {1}},
  };
  std::mt19937 rng{unsigned(align)};
  std::vector<Bytes> data;
  Writer w(align);
  w.set("general.name", Value::of_string("tensors"));
  for (const auto& s : specs) {
    int64_t rows = 1;
    for (size_t d = 1; d < s.ne.size(); ++d) rows *= s.ne[d];
    Bytes& b = data.emplace_back(row_size(s.type, s.ne[0]) * size_t(rows));
    for (auto& x : b) x = uint8_t(rng());
    w.add_tensor(s.name, s.type, s.ne, b.data(), b.size());
  }
  const Bytes bytes = w.to_bytes();
  const auto f = parse(bytes);
  EXPECT_EQ(f->alignment(), align);
  if (align == 32) EXPECT_EQ(f->find("general.alignment"), nullptr);
  else EXPECT_EQ(f->get_int("general.alignment"), int64_t(align));
  EXPECT_EQ(f->data_offset() % align, 0u);
  EXPECT_EQ(bytes.size() % align, 0u);
  ASSERT_EQ(f->tensors().size(), specs.size());
  uint64_t end = 0;
  for (size_t k = 0; k < specs.size(); ++k) {
    const TensorInfo& t = f->tensors()[k];
    SCOPED_TRACE(t.name);
    EXPECT_EQ(t.name, specs[k].name);
    EXPECT_EQ(t.type, specs[k].type);
    ASSERT_EQ(t.n_dims, specs[k].ne.size());
    for (size_t d = 0; d < 4; ++d) EXPECT_EQ(t.ne[d], d < t.n_dims ? specs[k].ne[d] : 1);
    EXPECT_EQ(t.offset % align, 0u);
    EXPECT_GE(t.offset, end);  // in order, no overlap
    end = t.offset + t.nbytes;
    ASSERT_EQ(t.nbytes, data[k].size());
    EXPECT_EQ(Bytes(t.data, t.data + t.nbytes), data[k]);
    EXPECT_EQ(f->find_tensor(specs[k].name), &t);
  }
  EXPECT_EQ(f->data_offset() + end + (align - end % align) % align, bytes.size());
}

INSTANTIATE_TEST_SUITE_P(Alignments, GgufTensors, ::testing::Values(1, 8, 32, 64, 4096));

TEST(GgufWriter, WriteGoesThroughTmpAndRename) {
  TempDir dir;
  const std::string path = (dir.path / "m.gguf").string();
  const float x[4] = {1, 2, 3, 4};
  Writer w(64);
  w.set("general.architecture", Value::of_string("llama"));
  w.add_tensor("x", GgmlType::F32, {2, 2}, x, sizeof x);
  w.write(path);
  EXPECT_EQ(read_file(path), w.to_bytes());
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  const auto f = File::open(path);
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(std::memcmp(f->find_tensor("x")->data, x, sizeof x), 0);

  // A failed write leaves the old file alone and no temporary behind.
  Writer bad;
  bad.set("general.alignment", Value::of_string("64"));
  expect_error([&] { bad.write(path); }, "general.alignment must be a uint32");
  EXPECT_EQ(read_file(path), w.to_bytes());
  EXPECT_FALSE(fs::exists(path + ".tmp"));

  // Overwriting replaces the file.
  Writer small;
  small.write(path);
  EXPECT_EQ(fs::file_size(path), 32u);

  expect_error([&] { w.write((dir.path / "no/such/dir/m.gguf").string()); }, "cannot create");
}

TEST(GgufWriter, RejectsWhatTheReaderWouldNot) {
  const float x[8] = {};
  auto tensor = [&](std::vector<int64_t> ne, GgmlType t, size_t n) {
    return [=, &x] { Writer().add_tensor("t", t, ne, x, n); };
  };
  expect_error(tensor({4, 2}, GgmlType::F32, 31), "needs 32 bytes of data, got 31");
  expect_error(tensor({}, GgmlType::F32, 4), "0 dimensions");
  expect_error(tensor({1, 1, 1, 1, 1}, GgmlType::F32, 4), "5 dimensions");
  expect_error(tensor({4, 0}, GgmlType::F32, 0), "must be positive");
  expect_error(tensor({-1}, GgmlType::F32, 4), "must be positive");
  expect_error(tensor({1ll << 40, 1ll << 40}, GgmlType::F32, 4), "overflows int64");
  expect_error(tensor({16}, GgmlType::Q8_0, 17), "block size 32");
  expect_error(tensor({1}, GgmlType(99), 4), "unknown type id 99");
  expect_error([&] { Writer().add_tensor("t", GgmlType::F32, {1}, nullptr, 4); }, "null");
  expect_error([&] { Writer().add_tensor("", GgmlType::F32, {1}, x, 4); }, "name is empty");
  expect_error([&] { Writer().add_tensor(std::string(1025, 'n'), GgmlType::F32, {1}, x, 4); },
               "longer than 1024");
  expect_error(
      [&] {
        Writer w;
        w.add_tensor("t", GgmlType::F32, {1}, x, 4);
        w.add_tensor("t", GgmlType::F32, {1}, x, 4);
      },
      "added twice");
  expect_error([&] { Writer().set("", Value::of_u32(1)); }, "key is empty");

  auto value = [](Value v) {
    return [v] {
      Writer w;
      w.set("k", v);
      w.to_bytes();
    };
  };
  expect_error(value(uval(ValueType::UINT8, 256)), "does not fit in a uint8");
  expect_error(value(ival(ValueType::INT16, 40000)), "does not fit in a int16");
  expect_error(value(uval(ValueType::BOOL, 2)), "does not fit in a bool");
  expect_error(value(uval(ValueType(13), 0)), "unknown value type 13");
  expect_error(value(Value::of_array(ValueType::INT32, {Value::of_u32(1)})),
               "array element 0 is a uint32 in an array of int32");
  const Value inner = Value::of_array(ValueType::UINT8, {});
  const Value deep =
      Value::of_array(ValueType::ARRAY, {Value::of_array(ValueType::ARRAY, {inner})});
  expect_error(value(deep), "nested deeper than 2");

  auto aligned = [](size_t align, Value key) {
    return [=] {
      Writer w(align);
      if (key.type != ValueType::ARRAY) w.set("general.alignment", key);
      w.to_bytes();
    };
  };
  const Value none = Value::of_array(ValueType::UINT8, {});
  expect_error(aligned(0, none), "alignment 0 is invalid");
  expect_error(aligned(13, none), "alignment 13 is invalid");
  expect_error(aligned(size_t(1) << 31, none), "is invalid");
  expect_error(aligned(32, Value::of_u32(13)), "general.alignment 13 is invalid");
  expect_error(aligned(32, Value::of_u64(32)), "must be a uint32");
  expect_error(aligned(32, Value::of_u32(64)), "conflicts");
  // The same alignment given both ways is fine.
  Writer w(64);
  w.set("general.alignment", Value::of_u32(64));
  EXPECT_EQ(parse(w.to_bytes())->alignment(), 64u);
}

const std::string kStories = std::string(EDGELLM_SHARED_DIR) + "/testdata/models/stories260K.gguf";

TEST(GgufReader, Stories260K) {
  const auto f = File::open(kStories);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->metadata().size(), 19u);
  EXPECT_EQ(f->tensors().size(), 48u);
  EXPECT_EQ(f->data_offset(), 14176u);
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_EQ(f->get_string("general.architecture"), "llama");
  const Value* tokens = f->find("tokenizer.ggml.tokens");
  ASSERT_NE(tokens, nullptr);
  EXPECT_EQ(tokens->type, ValueType::ARRAY);
  EXPECT_EQ(tokens->elem_type, ValueType::STRING);
  EXPECT_GT(tokens->arr.size(), 0u);
  for (const auto& t : f->tensors()) {
    EXPECT_EQ((f->data_offset() + t.offset) % 32, 0u) << t.name;
    EXPECT_EQ(t.nbytes, row_size(t.type, t.ne[0]) * uint64_t(t.n_elements() / t.ne[0])) << t.name;
    EXPECT_FALSE(t.shape_string().empty());
  }
}

TEST(GgufReader, Stories260KRewritesIdentically) {
  // Everything read, written again with the Writer, gives back the same bytes:
  // the writer lays files out exactly as ggml does.
  const auto f = File::open(kStories);
  Writer w(f->alignment());
  for (const auto& [k, v] : f->metadata()) w.set(k, v);
  for (const auto& t : f->tensors())
    w.add_tensor(t.name, t.type, std::vector<int64_t>(t.ne, t.ne + t.n_dims), t.data, t.nbytes);
  EXPECT_TRUE(w.to_bytes() == read_file(kStories));
  const Bytes again = w.to_bytes();
  const auto g = parse(again);
  ASSERT_EQ(g->metadata().size(), f->metadata().size());
  for (size_t k = 0; k < f->metadata().size(); ++k)
    expect_same(g->metadata()[k].second, f->metadata()[k].second, f->metadata()[k].first);
}

}  // namespace
}  // namespace edgellm::gguf
