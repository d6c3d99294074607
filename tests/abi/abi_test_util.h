// Helpers for the ABI suites: run a program (usually oar-info) in a fresh
// process with a fully controlled environment and capture its exit status,
// stdout and stderr; set the plugin environment of the current process before
// its runtime starts; read a text file. Plugins load once per process, so each
// scenario needs either its own process or its own executable.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace oar::abi_testing {

using EnvList = std::vector<std::pair<std::string, std::string>>;

struct ProcessResult {
  int exit_code = -1;    // -N when killed by signal N (a crash)
  std::string out, err;  // stdout, stderr
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `program args...` under `env -i` plus `env`, so nothing from the
// caller's environment (an OAR_PLUGIN_PATH of the developer's) leaks in.
// LD_LIBRARY_PATH is the exception: it is how the dynamic linker finds the
// plugins' libraries where they are not installed system-wide (a packed
// build on a GPU machine), and it is no oar setting.
inline ProcessResult run_process(const std::string& program, const std::vector<std::string>& args,
                                 const EnvList& env) {
  char err_path[] = "/tmp/oar_abi_stderr_XXXXXX";
  int fd = mkstemp(err_path);
  ProcessResult r;
  if (fd < 0) {
    r.err = "mkstemp failed";
    return r;
  }
  close(fd);
  // Appended piecewise: `" " + std::string` trips a false GCC 12 -Wrestrict.
  std::string cmd = "env -i PATH=/usr/bin:/bin";
  auto add = [&cmd](const std::string& word) {
    cmd += ' ';
    cmd += shell_quote(word);
  };
  if (const char* ld = std::getenv("LD_LIBRARY_PATH")) add(std::string("LD_LIBRARY_PATH=") + ld);
  for (const auto& [k, v] : env) add(k + "=" + v);
  add(program);
  for (const auto& a : args) add(a);
  cmd += " 2>";
  cmd += err_path;
  if (FILE* pipe = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) r.out.append(buf, n);
    int status = pclose(pipe);
    // The shell reports a signal-killed child as 128 + N.
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status) > 128 ? -(WEXITSTATUS(status) - 128)
                                                                   : WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) r.exit_code = -WTERMSIG(status);
  }
  r.err = read_file(err_path);
  std::remove(err_path);
  return r;
}

inline ProcessResult run_oar_info(const std::vector<std::string>& args, const EnvList& env) {
  return run_process(OAR_INFO_EXE, args, env);
}

// For scenario executables: called from main() before anything touches the
// runtime, so the first Runtime::get() sees exactly these plugin directories.
inline void set_plugin_environment(const std::string& plugin_path, bool default_dir) {
  setenv("OAR_PLUGIN_PATH", plugin_path.c_str(), 1);
  setenv("OAR_PLUGIN_DEFAULT_DIR", default_dir ? "1" : "0", 1);
}

inline std::string plugin_dir(const std::string& scenario) {
  return std::string(OAR_TEST_PLUGIN_DIR) + "/" + scenario;
}

}  // namespace oar::abi_testing
