// Memory pressure (Android onTrimMemory, iOS didReceiveMemoryWarning, the
// CLI chat's SIGUSR1): the session is written out and its KV cache and the
// executor's buffers are freed; the next use brings them back from the file
// and continues exactly where it was (the same rows, so the same output).
//
// The spill goes to the session's --session file when it has one, else to
// an unlinked temporary file (std::tmpfile: no name on disk, gone when the
// process ends) — the only place a --session-private cache ever reaches.
#pragma once
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "runtime/session.h"

namespace edgellm {

class PressureValve {
 public:
  // path: where to spill ("" = an unlinked temporary file).
  PressureValve(Session& s, std::string path = "");
  ~PressureValve();

  // Writes the session out, frees the KV cache and the executor's buffers;
  // returns the bytes freed (0 if already released).
  uint64_t release();
  bool released() const { return released_; }
  // Reallocates and reloads (no-op unless released).
  void restore();

 private:
  Session& s_;
  std::string path_;
  std::FILE* tmp_ = nullptr;
  bool released_ = false;
};

}  // namespace edgellm
