// libFuzzer target for the GGUF reader: File::parse on arbitrary bytes must
// either throw edgellm::Error or return a File whose every value and tensor
// can be used safely. Accepted files are also written back with gguf::Writer
// and re-read, which checks that the writer accepts whatever the reader does.
#include <cstdlib>
#include <cstring>

#include "base/error.h"
#include "format/gguf.h"

using namespace edgellm;
using namespace edgellm::gguf;

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// Reads every field of v and of its elements.
size_t touch(const Value& v) {
  size_t n = v.str.size() + size_t(v.u) + size_t(v.i) + (v.f != 0);
  try {
    if (v.is_integer()) n += size_t(v.as_int("fuzz"));
    if (v.is_integer() || v.is_float()) n += v.as_float("fuzz") > 0;
    if (v.type == ValueType::STRING) n += v.as_string("fuzz").size();
  } catch (const Error&) {
  }
  for (const Value& e : v.arr) {
    check(e.type == v.elem_type);
    n += touch(e);
  }
  return n;
}

std::vector<uint8_t> rewrite(const File& f) {
  Writer w(f.alignment());
  for (const auto& [k, v] : f.metadata()) w.set(k, v);
  for (const auto& t : f.tensors())
    w.add_tensor(t.name, t.type, std::vector<int64_t>(t.ne, t.ne + t.n_dims), t.data, t.nbytes);
  return w.to_bytes();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<File> f;
  try {
    f = File::parse(data, size, "fuzz");
  } catch (const Error&) {
    return 0;
  }
  volatile size_t sink = 0;
  for (const auto& [k, v] : f->metadata()) {
    check(f->find(k) == &v);
    sink = sink + v.to_display().size() + touch(v);
  }
  check(f->data_offset() % f->alignment() == 0);
  for (const auto& t : f->tensors()) {
    check(f->find_tensor(t.name) == &t);
    check(t.n_dims >= 1 && t.n_dims <= 4 && t.n_elements() > 0 && t.nbytes > 0);
    check(t.offset % f->alignment() == 0);
    check(t.data >= data + f->data_offset() && t.data + t.nbytes <= data + size);
    sink = sink + t.shape_string().size() + t.data[0] + t.data[t.nbytes - 1];
  }
  try {
    sink = sink + f->get_int_or("general.alignment", 0);
    sink = sink + f->get_string_or("general.name", "").size();
  } catch (const Error&) {
  }

  // Whatever the reader accepts, the writer writes, and the result reads back
  // the same; writing it again gives the same bytes.
  const std::vector<uint8_t> once = rewrite(*f);
  const auto g = File::parse(once.data(), once.size(), "rewritten");
  check(g->metadata().size() == f->metadata().size() && g->tensors().size() == f->tensors().size());
  check(rewrite(*g) == once);
  return 0;
}
