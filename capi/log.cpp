// The log: the library's messages (a model ready, a context policy at work,
// memory pressure, thermal changes, errors) go to the app's callback, never
// to stderr; without one they are dropped. Calls are serialized, so a
// callback needs no lock of its own.
#include <mutex>

#include "capi/handles.h"

namespace edgellm::capi {

namespace {
struct LogSink {
  std::recursive_mutex mu;  // a callback that calls back in (and logs) does not deadlock
  edgellm_log_callback callback = nullptr;
  void* user = nullptr;
  int min_level = EDGELLM_LOG_INFO;
};
LogSink& sink() {
  static LogSink s;
  return s;
}
}  // namespace

void log(int level, const std::string& message) {
  LogSink& s = sink();
  std::lock_guard<std::recursive_mutex> lk(s.mu);
  if (!s.callback || level < s.min_level) return;
  s.callback(level, message.c_str(), s.user);
}

}  // namespace edgellm::capi

using namespace edgellm::capi;

extern "C" EDGELLM_API edgellm_status edgellm_set_log_callback(edgellm_log_callback callback, void* user_data,
                                                              int32_t min_level) {
  return guarded("edgellm_set_log_callback", nullptr, EDGELLM_ERR_FAILED, [&] {
    if (min_level < EDGELLM_LOG_DEBUG || min_level > EDGELLM_LOG_ERROR)
      refuse(EDGELLM_ERR_INVALID_ARGUMENT, "min_level ", min_level, " is not an EDGELLM_LOG_* level (0-3)");
    LogSink& s = sink();
    std::lock_guard<std::recursive_mutex> lk(s.mu);
    s.callback = callback;
    s.user = user_data;
    s.min_level = min_level;
  });
}
