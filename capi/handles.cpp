// The registry of live handles, the error slots and the argument checks
// every entry point shares (capi/handles.h).
#include "capi/handles.h"

#include <unordered_map>

#include "capi/context_ops.h"
#include "template/utf8.h"

namespace edgellm::capi {

namespace {

// Live handles and their kinds. A freed handle leaves the map before its
// memory is released, so a later call with it is refused without reading it.
std::mutex& registry_mutex() {
  static std::mutex mu;
  return mu;
}
std::unordered_map<const void*, Kind>& registry() {
  static std::unordered_map<const void*, Kind> live;
  return live;
}

thread_local std::string t_error;

}  // namespace

void register_handle(const void* h, Kind k) {
  std::lock_guard<std::mutex> lk(registry_mutex());
  registry()[h] = k;
}

bool unregister_model(edgellm_model* m) {
  std::lock_guard<std::mutex> lk(registry_mutex());
  auto it = registry().find(m);
  if (it == registry().end() || it->second != Kind::Model) return false;
  registry().erase(it);
  return true;
}

edgellm_status unregister_context(edgellm_context* c) {
  std::lock_guard<std::mutex> lk(registry_mutex());
  auto it = registry().find(c);
  if (it == registry().end() || it->second != Kind::Context) return EDGELLM_ERR_INVALID_HANDLE;
  if (c->busy.load()) return EDGELLM_ERR_BUSY;
  registry().erase(it);
  return EDGELLM_OK;
}

bool is_live(const void* h, Kind k) {
  std::lock_guard<std::mutex> lk(registry_mutex());
  auto it = registry().find(h);
  return it != registry().end() && it->second == k;
}

const char* live_error_text(const void* h) {
  std::lock_guard<std::mutex> lk(registry_mutex());
  auto it = registry().find(h);
  if (it == registry().end()) return nullptr;
  if (it->second == Kind::Model) return static_cast<edgellm_model*>(const_cast<void*>(h))->error.get();
  return static_cast<edgellm_context*>(const_cast<void*>(h))->error.get();
}

void set_thread_error(const std::string& message) { t_error = message; }
const char* thread_error() { return t_error.c_str(); }

edgellm_status report(const char* fn, ErrorSlot* slot, edgellm_status status, const std::string& what) {
  const std::string message = std::string(fn) + ": " + what;
  if (slot) slot->set(message);
  set_thread_error(message);
  log(EDGELLM_LOG_DEBUG, message);
  return status;
}

edgellm_status try_acquire(edgellm_context* c) {
  std::lock_guard<std::mutex> lk(registry_mutex());
  auto it = registry().find(c);
  if (!c || it == registry().end() || it->second != Kind::Context) return EDGELLM_ERR_INVALID_HANDLE;
  bool expected = false;
  return c->busy.compare_exchange_strong(expected, true) ? EDGELLM_OK : EDGELLM_ERR_BUSY;
}

edgellm_status acquire(const char* fn, edgellm_context* c) {
  if (!c) return report(fn, nullptr, EDGELLM_ERR_INVALID_HANDLE, "the context is NULL");
  switch (try_acquire(c)) {
    case EDGELLM_OK: return EDGELLM_OK;
    case EDGELLM_ERR_BUSY:
      return report(fn, &c->error, EDGELLM_ERR_BUSY,
                    "another call is running on this context (one call at a time per context)");
    default:
      return report(fn, nullptr, EDGELLM_ERR_INVALID_HANDLE, "not a live context (freed, or not a context handle)");
  }
}

bool with_live_context(edgellm_context* c, const std::function<void(edgellm_context&)>& op) {
  std::lock_guard<std::mutex> lk(registry_mutex());
  auto it = registry().find(c);
  if (!c || it == registry().end() || it->second != Kind::Context) return false;
  op(*c);
  return true;
}

void finish_call(edgellm_context* c) {
  // Memory pressure that arrived during the call (from another thread).
  if (const int level = c->pressure_request.exchange(EDGELLM_MEMORY_PRESSURE_NONE)) {
    try {
      apply_pressure(*c, level);
    } catch (const std::exception& e) {
      log(EDGELLM_LOG_ERROR, std::string("memory pressure: ") + e.what());
    }
  }
  c->busy.store(false);
}

void need(const void* p, const char* name) {
  if (!p) refuse(EDGELLM_ERR_INVALID_ARGUMENT, name, " is NULL");
}

void need_size(int64_t n, const char* name) {
  if (n < 0) refuse(EDGELLM_ERR_INVALID_ARGUMENT, name, " is ", n, ": a size cannot be negative");
}

void check_struct(uint32_t got, size_t want, const char* name) {
  if (got != want)
    refuse(EDGELLM_ERR_INVALID_ARGUMENT, name, "->struct_size is ", got, ", this library's ", name, " has ", want,
           " bytes: initialize it with its _init function, and build against the header of the library you load");
}

void check_utf8(std::string_view text, const char* name) {
  const size_t at = tmpl::utf8_invalid_at(text);
  if (at != std::string_view::npos)
    refuse(EDGELLM_ERR_INVALID_ARGUMENT, name, " is not valid UTF-8 (byte ", at, " of ", text.size(), ")");
}

void copy_out(const std::string& text, char* buffer, int32_t capacity, int32_t* length) {
  need(length, "length");
  need_size(capacity, "capacity");
  if (capacity > 0) need(buffer, "buffer");
  if (text.size() > size_t(INT32_MAX) - 1)
    refuse(EDGELLM_ERR_FAILED, "the text is ", text.size(), " bytes, more than an int32_t length can say");
  *length = int32_t(text.size());
  if (size_t(capacity) <= text.size()) {
    if (capacity > 0) buffer[0] = '\0';
    refuse(EDGELLM_ERR_BUFFER_TOO_SMALL, "the buffer holds ", capacity, " bytes; the text needs ", text.size() + 1,
           " (with its NUL)");
  }
  text.copy(buffer, text.size());
  buffer[text.size()] = '\0';
}

}  // namespace edgellm::capi
