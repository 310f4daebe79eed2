#include "base/build_info.h"

// Set for this file only by CMakeLists.txt, so a new commit recompiles one file.
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
