// Version, status names and edgellm_last_error: the entry points that need
// no handle.
#include <string>

#include "base/build_info.h"
#include "capi/handles.h"

using namespace edgellm::capi;

extern "C" EDGELLM_API const char* edgellm_version(void) {
  // Built once; the strings it is made of are constants.
  static const std::string v = std::string("edgellm ") + EDGELLM_VERSION_STRING + " (api " +
                               std::to_string(EDGELLM_API_VERSION) + ", commit " + edgellm::build_commit() + ", " +
                               edgellm::build_type() + ")";
  return v.c_str();
}

extern "C" EDGELLM_API int32_t edgellm_api_version(void) { return EDGELLM_API_VERSION; }

extern "C" EDGELLM_API const char* edgellm_status_name(edgellm_status status) {
  switch (status) {
    case EDGELLM_OK: return "EDGELLM_OK";
    case EDGELLM_ERR_INVALID_ARGUMENT: return "EDGELLM_ERR_INVALID_ARGUMENT";
    case EDGELLM_ERR_INVALID_HANDLE: return "EDGELLM_ERR_INVALID_HANDLE";
    case EDGELLM_ERR_BUFFER_TOO_SMALL: return "EDGELLM_ERR_BUFFER_TOO_SMALL";
    case EDGELLM_ERR_LOAD: return "EDGELLM_ERR_LOAD";
    case EDGELLM_ERR_OUT_OF_MEMORY: return "EDGELLM_ERR_OUT_OF_MEMORY";
    case EDGELLM_ERR_CONTEXT_FULL: return "EDGELLM_ERR_CONTEXT_FULL";
    case EDGELLM_ERR_CANCELLED: return "EDGELLM_ERR_CANCELLED";
    case EDGELLM_ERR_BUSY: return "EDGELLM_ERR_BUSY";
    case EDGELLM_ERR_FAILED: return "EDGELLM_ERR_FAILED";
    case EDGELLM_ERR_INTERNAL: return "EDGELLM_ERR_INTERNAL";
  }
  return "unknown status";
}

extern "C" EDGELLM_API const char* edgellm_last_error(const void* handle) {
  if (!handle) return thread_error();
  if (const char* text = live_error_text(handle)) return text;
  return "edgellm_last_error: not a live handle (freed, or not a model or context)";
}
