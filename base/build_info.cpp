#include "base/build_info.h"

// build_stamp.h: written at build time by cmake/build_stamp.cmake (only this
// file includes it, so a new commit or an edit recompiles one file). Builds
// without it (other build systems) report "unknown".
#if __has_include("build_stamp.h")
#include "build_stamp.h"
#endif
#ifndef EDGELLM_BUILD_COMMIT
#define EDGELLM_BUILD_COMMIT "unknown"
#endif
#ifndef EDGELLM_BUILD_DESCRIBE
#define EDGELLM_BUILD_DESCRIBE EDGELLM_BUILD_COMMIT
#endif
#ifndef EDGELLM_BUILD_TYPE
#define EDGELLM_BUILD_TYPE "unspecified"
#endif
#ifndef EDGELLM_BUILD_NUMBER
#define EDGELLM_BUILD_NUMBER 0
#endif

namespace edgellm {

const char* build_commit() { return EDGELLM_BUILD_COMMIT[0] ? EDGELLM_BUILD_COMMIT : "unknown"; }
int build_number() { return EDGELLM_BUILD_NUMBER; }
const char* build_describe() { return EDGELLM_BUILD_DESCRIBE[0] ? EDGELLM_BUILD_DESCRIBE : "unknown"; }
const char* build_type() { return EDGELLM_BUILD_TYPE[0] ? EDGELLM_BUILD_TYPE : "unspecified"; }

}  // namespace edgellm
