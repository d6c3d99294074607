#include "supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>

extern char** environ;

namespace oar::conformance {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kReportFd = 3;          // the child's protocol descriptor
constexpr size_t kTailBytes = 4096;   // child output kept for a crash report

struct Child {
  pid_t pid = -1;
  int report = -1;  // read end of the protocol pipe
  int output = -1;  // read end of the child's stdout+stderr
  bool output_closed = false;  // the child closed it: no more polling
};

// Starts the child with fd 3 = protocol pipe, stdout/stderr = output pipe.
Child spawn(const ChildCommand& cmd, const std::vector<std::string>& extra) {
  int rep[2], out[2];
  if (pipe(rep) != 0 || pipe(out) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::vector<std::string> args = {cmd.executable};
  args.insert(args.end(), cmd.args.begin(), cmd.args.end());
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  env.insert(env.end(), cmd.env.begin(), cmd.env.end());
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);  // its own group: a hang is killed with everything it started
    dup2(out[1], 1);
    dup2(out[1], 2);
    dup2(rep[1], kReportFd);
    for (int fd : {rep[0], rep[1], out[0], out[1]})
      if (fd != kReportFd && fd > 2) close(fd);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(rep[1]);
  close(out[1]);
  return {pid, rep[0], out[0], false};
}

void kill_child(Child& c) {
  if (c.pid > 0) {
    kill(-c.pid, SIGKILL);
    kill(c.pid, SIGKILL);
  }
}

// Waits for the child to end; describes how it ended ("" for exit 0).
std::string reap(Child& c) {
  int status = 0;
  std::string how;
  if (c.pid > 0 && waitpid(c.pid, &status, 0) == c.pid) {
    if (WIFSIGNALED(status)) {
      int sig = WTERMSIG(status);
      how = std::string("killed by signal ") + std::to_string(sig) + " (SIG" + sigabbrev_np(sig) + ")";
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
      how = "exited with status " + std::to_string(WEXITSTATUS(status));
    }
  }
  if (c.report >= 0) close(c.report);
  if (c.output >= 0) close(c.output);
  c = Child{};
  return how;
}

struct Reader {  // splits a descriptor's bytes into lines
  std::string pending;
  bool eof = false;
  bool read_from(int fd, std::string* raw = nullptr) {
    char buf[8192];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) {
      if (n < 0 && errno == EINTR) return true;
      eof = true;
      return false;
    }
    if (raw) raw->append(buf, size_t(n));
    else pending.append(buf, size_t(n));
    return true;
  }
  bool next_line(std::string& line) {
    size_t nl = pending.find('\n');
    if (nl == std::string::npos) return false;
    line = pending.substr(0, nl);
    pending.erase(0, nl + 1);
    return true;
  }
};

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

void keep_tail(std::string& tail, const std::string& more) {
  tail += more;
  if (tail.size() > kTailBytes) tail.erase(0, tail.size() - kTailBytes);
}

// Waits for the child until `deadline`: its stdout/stderr go to `tail`, its
// protocol bytes to `rep`. False when the deadline passed first.
bool pump(Child& c, Reader& rep, std::string& tail, Clock::time_point deadline) {
  const int ms = int(std::chrono::duration<double, std::milli>(deadline - Clock::now()).count());
  if (ms <= 0) return false;
  pollfd fds[2] = {{c.report, POLLIN, 0}, {c.output_closed ? -1 : c.output, POLLIN, 0}};  // poll skips fd -1
  if (poll(fds, 2, ms) < 0) {
    if (errno != EINTR) rep.eof = true;
    return true;
  }
  if (fds[1].revents) {
    std::string raw;
    Reader out;
    if (out.read_from(c.output, &raw)) keep_tail(tail, raw);
    else c.output_closed = true;
  }
  if (fds[0].revents) rep.read_from(c.report);
  return true;
}

}  // namespace

std::string one_line(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\\') out += "\\\\";
    else out += c;
  }
  return out;
}

std::string from_one_line(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      char n = text[++i];
      out += n == 'n' ? '\n' : n == 't' ? '\t' : n;
    } else {
      out += text[i];
    }
  }
  return out;
}

void report_line(int fd, const std::string& line) {
  std::string s = line + "\n";
  const char* p = s.data();
  size_t left = s.size();
  while (left) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= size_t(n);
  }
}

std::string list_in_child(const ChildCommand& cmd, std::vector<CaseInfo>& cases,
                          std::vector<std::pair<std::string, std::string>>& info) {
  Child c = spawn(cmd, {"--child-list"});
  Reader rep;
  std::string tail;
  const auto deadline = after(cmd.startup_budget_s);
  bool timed_out = false;
  while (!rep.eof)
    if (!pump(c, rep, tail, deadline)) {
      timed_out = true;
      break;
    }
  if (timed_out) kill_child(c);
  std::string how = reap(c);
  std::string line;
  bool complete = false;
  while (rep.next_line(line)) {
    std::istringstream s(line);
    std::string kind;
    std::getline(s, kind, '\t');
    if (kind == "CASE") {
      CaseInfo ci;
      std::string budget;
      std::getline(s, ci.id, '\t');
      std::getline(s, budget, '\t');
      std::getline(s, ci.op, '\t');
      std::getline(s, ci.dtype, '\t');
      ci.budget_s = std::atof(budget.c_str());
      cases.push_back(ci);
    } else if (kind == "INFO") {
      std::string k, v;
      std::getline(s, k, '\t');
      std::getline(s, v);
      info.emplace_back(k, from_one_line(v));
    } else if (kind == "ERROR") {
      std::string v;
      std::getline(s, v);
      return from_one_line(v);
    } else if (kind == "DONE") {
      complete = true;
    }
  }
  if (timed_out) return "listing the cases took longer than " + std::to_string(int(cmd.startup_budget_s)) + " s";
  if (!complete) return "the child listing the cases " + (how.empty() ? "stopped early" : how) + "; its output:\n" + tail;
  return "";
}

void run_in_children(const ChildCommand& cmd, const std::vector<CaseInfo>& cases, std::vector<CaseResult>& results,
                     const std::function<void(size_t)>& progress, std::string& fatal) {
  results.assign(cases.size(), CaseResult{});
  char dir_template[] = "/tmp/oar-conformance-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (!dir) {
    fatal = std::string("mkdtemp: ") + std::strerror(errno);
    return;
  }
  const std::string list = std::string(dir) + "/cases";
  {
    std::ofstream f(list);
    for (const auto& c : cases) f << c.id << "\n";
  }
  size_t next = 0;
  while (next < cases.size()) {
    Child c = spawn(cmd, {"--child-run", list, std::to_string(next)});
    Reader rep;
    std::string tail;
    long current = -1;  // the case between BEGIN and END
    bool started_any = false;
    auto case_start = Clock::now();
    auto deadline = after(cmd.startup_budget_s);
    bool timed_out = false;
    while (!rep.eof) {
      if (!pump(c, rep, tail, deadline)) {
        timed_out = true;
        break;
      }
      std::string line;
      while (rep.next_line(line)) {
        std::istringstream s(line);
        std::string kind, index;
        std::getline(s, kind, ' ');
        std::getline(s, index, ' ');
        const long i = std::atol(index.c_str());
        if (i < 0 || size_t(i) >= cases.size()) continue;
        if (kind == "BEGIN") {
          current = i;
          started_any = true;
          tail.clear();
          case_start = Clock::now();
          deadline = after(cases[size_t(i)].budget_s);
        } else if (kind == "END") {
          std::string status, seconds, reason;
          std::getline(s, status, ' ');
          std::getline(s, seconds, ' ');
          std::getline(s, reason);
          CaseResult& r = results[size_t(i)];
          if (!parse_status(status, r.status)) r.status = Status::kFail;
          r.seconds = std::atof(seconds.c_str());
          r.reason = from_one_line(reason);
          current = -1;
          next = size_t(i) + 1;
          // Between cases the child gets the startup budget again (teardown of one, setup of the next).
          deadline = after(cmd.startup_budget_s);
          progress(size_t(i));
        }
      }
    }
    if (timed_out) kill_child(c);
    std::string how = reap(c);
    if (current >= 0) {
      CaseResult& r = results[size_t(current)];
      r.seconds = std::chrono::duration<double>(Clock::now() - case_start).count();
      r.output_tail = tail;
      if (timed_out) {
        r.status = Status::kTimeout;
        r.reason = "no result within its budget of " + std::to_string(int(cases[size_t(current)].budget_s)) + " s";
      } else {
        r.status = Status::kCrash;
        r.reason = "the process running it " + (how.empty() ? std::string("exited") : how);
      }
      progress(size_t(current));
      next = size_t(current) + 1;
    } else if (!started_any && next < cases.size()) {
      fatal = "the child process " + (timed_out ? std::string("did not start a case in time") : how.empty() ? "exited" : how) +
              " before its first case; its output:\n" + tail;
      break;
    }
    // A child that died between two cases blames none: the loop goes on from `next`.
  }
  std::remove(list.c_str());
  rmdir(dir);
}

}  // namespace oar::conformance
