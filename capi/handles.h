// What the C API's opaque handles hold, and the one way every entry point
// runs: look the handle up, run the body, turn whatever it throws into a
// status and a message. No C++ exception leaves an edgellm_* function.
//
// Handles are checked against a registry of live ones before anything
// reads through them, so a NULL, freed or wrong-kind pointer is refused
// (EDGELLM_ERR_INVALID_HANDLE) instead of crashing. A context runs one call
// at a time: a lease (a compare-and-swap on `busy`, taken under the
// registry's lock) admits the call, and freeing waits for no one: it is
// refused while a lease is out.
#pragma once
#include <atomic>
#include <functional>
#include <cstdint>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "edgellm/edgellm.h"
#include "model/model.h"
#include "runtime/context_policy.h"
#include "runtime/memory_plan.h"
#include "runtime/memory_pressure.h"
#include "runtime/session.h"
#include "tokenizer/tokenizer.h"

namespace edgellm::capi {

// A refusal with its status, thrown inside a call and caught at its edge.
struct ApiError {
  edgellm_status status;
  std::string message;
};

template <class... Parts>
[[noreturn]] void refuse(edgellm_status status, const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw ApiError{status, os.str()};
}

// The last error of a handle: written by the call that failed, read by
// edgellm_last_error from any thread.
class ErrorSlot {
 public:
  void set(const std::string& m) {
    std::lock_guard<std::mutex> lk(mu_);
    text_ = m;
  }
  const char* get() {
    std::lock_guard<std::mutex> lk(mu_);
    return text_.c_str();
  }

 private:
  std::mutex mu_;
  std::string text_;
};

}  // namespace edgellm::capi

struct edgellm_model {
  std::shared_ptr<edgellm::Model> model;  // shared with the contexts made from it
  int n_threads = 1;                      // resolved (0 became the default count)
  bool pin_threads = false;
  uint64_t memory_limit = 0;
  edgellm::capi::ErrorSlot error;
};

struct edgellm_context {
  std::shared_ptr<edgellm::Model> model;  // keeps the weights alive past edgellm_model_free
  edgellm::MemoryPlan plan;               // as created (n_threads: the configured count)
  bool pin_threads = false;
  edgellm::ContextPolicy policy;
  std::string spill_path;
  std::unique_ptr<edgellm::Session> session;
  std::unique_ptr<edgellm::PressureValve> valve;  // bound to *session
  std::unique_ptr<edgellm::Detokenizer> detok;    // fed every token the context holds
  int n_threads = 1;                              // of the session now (thermal state lowers it)

  // The logits after the last evaluated token; valid when logits_ready.
  std::vector<float> logits;  // [n_vocab], allocated at creation
  bool logits_ready = false;
  // A generated id passed to the callback but not yet evaluated (-1: none):
  // the next call that needs logits, or a prefill, evaluates it first.
  int32_t pending = -1;

  int64_t n_prefilled = 0, n_generated = 0;
  double prefill_ms = 0, generate_ms = 0;

  // Set from any thread.
  std::atomic<bool> busy{false};
  std::atomic<bool> cancel{false};
  std::atomic<int> pressure_request{0};  // EDGELLM_MEMORY_PRESSURE_*, applied when the lease ends
  std::atomic<int> thermal_state{0};     // EDGELLM_THERMAL_*, applied at the next call that runs the model
  edgellm::capi::ErrorSlot error;
};

namespace edgellm::capi {

enum class Kind { Model, Context };

// The registry of live handles.
void register_handle(const void* h, Kind k);
// Removes a model handle (false if it was not a live model).
bool unregister_model(edgellm_model* m);
// Removes a context unless a call holds it: INVALID_HANDLE, BUSY or OK.
edgellm_status unregister_context(edgellm_context* c);
// Whether h is a live handle, of kind k when given.
bool is_live(const void* h, Kind k);
// The handle's error text (from any thread); null if h is not live.
const char* live_error_text(const void* h);

// Records an error on the calling thread (and on the handle, if any).
void set_thread_error(const std::string& message);
const char* thread_error();

// Runs body (returning nothing) and maps what it throws to a status, the
// message prefixed with the function's name and stored in `slot` (may be
// null) and on the thread. `fallback` is the status for edgellm::Error.
template <class F>
edgellm_status guarded(const char* fn, ErrorSlot* slot, edgellm_status fallback, F&& body);

// A call on a context: admits it (live, not busy), runs body, applies a
// memory-pressure request that arrived meanwhile, releases the context.
template <class F>
edgellm_status with_context(const char* fn, edgellm_context* c, F&& body);
// A call on a model (no lease: a model is only read, from any thread).
template <class F>
edgellm_status with_model(const char* fn, edgellm_model* m, F&& body);

// Implementation details the templates need.
edgellm_status report(const char* fn, ErrorSlot* slot, edgellm_status status, const std::string& what);
// Admits a call on c (live, and no other call running): OK, or the refusal reported.
edgellm_status acquire(const char* fn, edgellm_context* c);
// The same, reporting nothing: OK, EDGELLM_ERR_INVALID_HANDLE or EDGELLM_ERR_BUSY.
edgellm_status try_acquire(edgellm_context* c);
// Runs op (which must not throw) on c while c cannot be freed, leased or
// not: for the calls any thread may make. False if c is not a live context.
bool with_live_context(edgellm_context* c, const std::function<void(edgellm_context&)>& op);
void finish_call(edgellm_context* c);
void log(int level, const std::string& message);

template <class F>
edgellm_status guarded(const char* fn, ErrorSlot* slot, edgellm_status fallback, F&& body) {
  try {
    body();
    return EDGELLM_OK;
  } catch (const ApiError& e) {
    return report(fn, slot, e.status, e.message);
  } catch (const Error& e) {
    return report(fn, slot, fallback, e.what());
  } catch (const std::bad_alloc&) {
    return report(fn, slot, EDGELLM_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return report(fn, slot, EDGELLM_ERR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return report(fn, slot, EDGELLM_ERR_INTERNAL, "internal error: an unknown exception");
  }
}

template <class F>
edgellm_status with_context(const char* fn, edgellm_context* c, F&& body) {
  if (const edgellm_status st = acquire(fn, c); st != EDGELLM_OK) return st;
  const edgellm_status st = guarded(fn, &c->error, EDGELLM_ERR_FAILED, [&] { body(*c); });
  finish_call(c);
  return st;
}

template <class F>
edgellm_status with_model(const char* fn, edgellm_model* m, F&& body) {
  if (!m) return report(fn, nullptr, EDGELLM_ERR_INVALID_HANDLE, "the model is NULL");
  if (!is_live(m, Kind::Model))
    return report(fn, nullptr, EDGELLM_ERR_INVALID_HANDLE, "not a live model (freed, or not a model handle)");
  return guarded(fn, &m->error, EDGELLM_ERR_FAILED, [&] { body(*m); });
}

// Argument checks shared by the entry points (each throws ApiError).
void need(const void* p, const char* name);                 // not null
void need_size(int64_t n, const char* name);                // >= 0
void check_struct(uint32_t got, size_t want, const char* name);  // struct_size as the header says
void check_utf8(std::string_view text, const char* name);
// Copies text and a NUL to buffer; *length = text.size(); BUFFER_TOO_SMALL
// when capacity <= text.size().
void copy_out(const std::string& text, char* buffer, int32_t capacity, int32_t* length);

}  // namespace edgellm::capi
