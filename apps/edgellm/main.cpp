#include <cstdio>
#include "format/gguf.h"
#include "base/error.h"
int main(int argc, char** argv) {
  try {
    auto f = edgellm::gguf::File::open(argv[1]);
    for (auto& [k, v] : f->metadata()) printf("%s = %s\n", k.c_str(), v.to_display().c_str());
    for (auto& t : f->tensors()) printf("%s %s %s %zu\n", t.name.c_str(), edgellm::type_name(uint32_t(t.type)).c_str(), t.shape_string().c_str(), (size_t)t.nbytes);
  } catch (const edgellm::Error& e) { fprintf(stderr, "error: %s\n", e.what()); return 1; }
}
