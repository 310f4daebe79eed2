// Run a program from a test and capture what it did: exit status (or the
// signal that killed it), stdout and stderr. Output goes through temporary
// files, so a chatty child can never dead-lock on a full pipe.
//
//   RunResult r = run_command({EDGELLM_CLI, "inspect", path});
//   EXPECT_TRUE(r.exited_with(1)) << r.describe();
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace edgellm::test {

struct RunResult {
  bool exited = false;    // exited normally (exit_code is valid)
  int exit_code = -1;
  int signal = 0;         // the signal that killed it, if it did not exit
  bool timed_out = false; // killed by run_command after timeout_s
  std::string out, err;

  bool exited_with(int code) const { return exited && exit_code == code; }
  std::string describe() const {
    std::ostringstream os;
    if (exited) os << "exit status " << exit_code;
    else os << "killed by signal " << signal << (timed_out ? " (timed out)" : "");
    os << "\n--- stdout ---\n" << out << "\n--- stderr ---\n" << err;
    return os.str();
  }
};

namespace detail {
inline int temp_fd(std::string& path) {
  const char* dir = std::getenv("TMPDIR");
  path = std::string(dir && *dir ? dir : "/tmp") + "/edgellm_run_XXXXXX";
  return mkstemp(path.data());
}
inline std::string slurp_and_remove(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  unlink(path.c_str());
  return s;
}
}  // namespace detail

// Runs argv[0] (a path; no PATH search) with the given arguments and stdin;
// kills it (SIGKILL) after timeout_s seconds.
inline RunResult run_command(const std::vector<std::string>& argv,
                             const std::string& stdin_data = "", int timeout_s = 120) {
  RunResult r;
  std::string in_path, out_path, err_path;
  const int in_fd = detail::temp_fd(in_path), out_fd = detail::temp_fd(out_path),
            err_fd = detail::temp_fd(err_path);
  if (in_fd < 0 || out_fd < 0 || err_fd < 0 || argv.empty()) {
    r.err = "run_command: cannot create temporary files";
    return r;
  }
  for (size_t done = 0; done < stdin_data.size();) {
    const ssize_t n = write(in_fd, stdin_data.data() + done, stdin_data.size() - done);
    if (n <= 0) break;
    done += size_t(n);
  }
  lseek(in_fd, 0, SEEK_SET);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
  pid_t pid = -1;
  if (posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  close(in_fd);
  close(out_fd);
  close(err_fd);
  unlink(in_path.c_str());
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (int us = 20; pid > 0 && waitpid(pid, &status, WNOHANG) == 0; us = std::min(us * 2, 10000)) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(us));
  }
  r.exited = pid > 0 && WIFEXITED(status);
  r.exit_code = r.exited ? WEXITSTATUS(status) : -1;
  r.signal = pid > 0 && WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  r.out = detail::slurp_and_remove(out_path);
  r.err = detail::slurp_and_remove(err_path);
  if (pid < 0) r.err = "run_command: cannot start " + argv[0];
  return r;
}

// Runs a shell command line (/bin/sh -c).
inline RunResult run_shell(const std::string& cmdline, const std::string& stdin_data = "",
                           int timeout_s = 120) {
  return run_command({"/bin/sh", "-c", cmdline}, stdin_data, timeout_s);
}

}  // namespace edgellm::test
