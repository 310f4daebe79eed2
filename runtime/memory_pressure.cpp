#include "runtime/memory_pressure.h"

#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "runtime/session_file.h"

namespace edgellm {

PressureValve::PressureValve(Session& s, std::string path) : s_(s), path_(std::move(path)) {}

PressureValve::~PressureValve() {
  if (tmp_) std::fclose(tmp_);
}

uint64_t PressureValve::release() {
  if (released_) return 0;
  if (path_.empty()) {
    if (!tmp_) tmp_ = std::tmpfile();
    if (!tmp_) fail("memory pressure: cannot create a temporary file for the session: ", std::strerror(errno));
    save_session(s_, tmp_);
  } else {
    save_session(s_, path_);
  }
  uint64_t freed = s_.kv().bytes();
  s_.kv().release();
  if (s_.executor().buffers_resident()) {
    freed += s_.plan().arena.total;
    s_.executor().release_buffers();
  }
  released_ = true;
  return freed;
}

void PressureValve::restore() {
  if (!released_) return;
  s_.kv().reallocate();
  if (tmp_) load_session(s_, tmp_);
  else load_session(s_, path_);
  released_ = false;
}

}  // namespace edgellm
