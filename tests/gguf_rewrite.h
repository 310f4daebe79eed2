// A copy of a GGUF file with metadata changed and tensors left out: how the
// tests make a malformed or variant file from a good one.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "format/gguf.h"
#include "test_models.h"

namespace edgellm::test {

// Writes temp_dir()/NAME.gguf: src's metadata and tensors, then extra(w)
// (later set()s replace a key), keeping only the tensors keep() accepts
// (all when keep is null). Returns the path.
inline std::string rewrite(const std::string& src, const std::string& name,
                           const std::function<void(gguf::Writer&)>& extra,
                           const std::function<bool(const gguf::TensorInfo&)>& keep = nullptr) {
  auto f = gguf::File::open(src);
  gguf::Writer w;
  for (const auto& [k, v] : f->metadata()) w.set(k, v);
  for (const auto& t : f->tensors()) {
    if (keep && !keep(t)) continue;
    w.add_tensor(t.name, t.type, std::vector<int64_t>(t.ne, t.ne + t.n_dims), t.data, t.nbytes);
  }
  extra(w);
  const std::string out = temp_dir() + "/" + name + ".gguf";
  w.write(out);
  return out;
}

}  // namespace edgellm::test
