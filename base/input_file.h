// Reading an input the user named on the command line: a regular file, or
// standard input as "-" where the command allows it. The path is checked
// before anything is read, so a directory, a FIFO or a device is refused with
// a reason (a FIFO would otherwise block forever, a directory "read" as
// empty, /dev/zero fill memory), and an open that fails says why (errno text).
#pragma once
#include <cstddef>
#include <string>

namespace edgellm {

// The largest text input read whole (prompts, templates, message files,
// perplexity texts): generous for any of them, far below what would strain
// a device's memory.
constexpr size_t kMaxTextInputBytes = size_t(256) << 20;

// Reads all of `path` ("-": stdin, when allow_stdin). `what` names the input
// in messages, e.g. "-f" or "--template-file". Fails with one clear line.
std::string read_input_file(const std::string& path, const std::string& what, bool allow_stdin = true,
                            size_t max_bytes = kMaxTextInputBytes);

// Opens `path` for reading after checking it is a regular file (never
// blocking on a FIFO: the open is non-blocking and the type is checked on the
// open descriptor); returns the descriptor, or fails with one clear line.
int open_regular_file(const std::string& path, const std::string& what);

}  // namespace edgellm
