// Which source this binary was built from, for reports that must say so
// (bench's build_commit / build_number, as llama-bench prints them). Read
// from git at every build (cmake/build_stamp.cmake).
#pragma once

namespace edgellm {

const char* build_commit();  // short commit hash, "+dirty" if built from edited sources; "unknown" outside git
int build_number();          // commits in the history (llama.cpp's "build number"); 0 if unknown
const char* build_describe();  // `git describe --tags --always`; "unknown" outside a git checkout
const char* build_type();      // CMAKE_BUILD_TYPE: Release, RelWithDebInfo, ...

}  // namespace edgellm
