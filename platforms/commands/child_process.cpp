#include "platforms/commands/child_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace kvtier {
namespace fs = std::filesystem;

namespace {
std::vector<char*> c_argv(std::vector<std::string>& argv) {
  std::vector<char*> v;
  for (auto& a : argv) v.push_back(a.data());
  v.push_back(nullptr);
  return v;
}
}  // namespace

fs::path self_executable() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec)
    throw std::runtime_error("cannot find the kvtier executable (/proc/self/exe): " + ec.message());
  return p;
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() &&
      s.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+%@") ==
          std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + shell_quote(a);
  return s;
}

pid_t start_child(const std::vector<std::string>& argv, const ChildOutput& output) {
  const int flags = O_WRONLY | O_CREAT | (output.append ? O_APPEND : O_TRUNC);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, output.stdout_file.c_str(), flags, 0644);
  if (output.stderr_file.empty()) posix_spawn_file_actions_adddup2(&fa, 1, 2);
  else posix_spawn_file_actions_addopen(&fa, 2, output.stderr_file.c_str(), flags, 0644);
  pid_t pid = 0;
  std::vector<std::string> args = argv;
  auto cargv = c_argv(args);
  const int rc = posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot start " + argv.at(0) + ": " + std::strerror(rc));
  return pid;
}

EndedChild wait_any_child() {
  EndedChild e;
  e.pid = waitpid(-1, &e.status, 0);
  if (e.pid < 0) throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
  return e;
}

int wait_child(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) < 0)
    throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
  return status;
}

int run_capture(const std::vector<std::string>& argv, std::string& out) {
  int pipefd[2];
  if (pipe(pipefd) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
  posix_spawn_file_actions_addclose(&fa, pipefd[0]);
  posix_spawn_file_actions_addclose(&fa, pipefd[1]);
  pid_t pid = 0;
  std::vector<std::string> args = argv;
  auto cargv = c_argv(args);
  const int rc = posix_spawnp(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(pipefd[1]);
  if (rc != 0) {
    close(pipefd[0]);
    throw std::runtime_error("cannot run '" + argv.at(0) + "': " + std::strerror(rc));
  }
  out.clear();
  char buf[4096];
  ssize_t n;
  while ((n = read(pipefd[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(pipefd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

bool exited_zero(int wait_status) {
  return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

int exit_status_of(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
}

std::string describe_wait_status(int wait_status) {
  if (WIFEXITED(wait_status))
    return "exited with status " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status))
    return "killed by signal " + std::to_string(WTERMSIG(wait_status)) + " (" +
           strsignal(WTERMSIG(wait_status)) + ")";
  return "ended with wait status " + std::to_string(wait_status);
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string tail_of(const fs::path& p, size_t max_chars) {
  const std::string s = read_text(p);
  return s.size() > max_chars ? "..." + s.substr(s.size() - max_chars) : s;
}

void write_text_atomically(const fs::path& p, const std::string& text) {
  const fs::path tmp = p.string() + ".tmp";
  {
    std::ofstream f(tmp);
    f << text;
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, p);
}

}  // namespace kvtier
