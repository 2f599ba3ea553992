#pragma once
// Child processes of the commands that fan out (sweep, experiment, plot): one place that finds
// this executable, starts a child with its output in files, collects what ended and says why a
// child failed, so that every command reports a failed child the same way.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace kvtier {

// This executable (/proc/self/exe): the commands run `kvtier run` as children of themselves.
std::filesystem::path self_executable();

// `s` as a POSIX shell reads it back: unchanged when it holds only safe characters, else in
// single quotes.
std::string shell_quote(const std::string& s);
// argv as one shell-quoted line, for logs and records.
std::string command_line(const std::vector<std::string>& argv);

// Where a started child's standard output and error go. An empty `stderr_file` sends standard
// error to the same file as standard output. `append` keeps what the files hold.
struct ChildOutput {
  std::filesystem::path stdout_file;
  std::filesystem::path stderr_file;
  bool append = false;
};

// Starts argv (argv[0] a path) with its output in files; returns its pid. Throws
// std::runtime_error naming the program when it cannot be started.
pid_t start_child(const std::vector<std::string>& argv, const ChildOutput& output);

// A child that ended: its pid and wait status.
struct EndedChild {
  pid_t pid = 0;
  int status = 0;
};
// Waits for any child of this process. Throws std::runtime_error when there is none.
EndedChild wait_any_child();
// Waits for `pid`; returns its wait status.
int wait_child(pid_t pid);

// Runs argv (argv[0] looked up in PATH) to its end with its standard output captured in `out`;
// standard error goes to ours. Returns the wait status. Throws when it cannot be started.
int run_capture(const std::vector<std::string>& argv, std::string& out);

// True when the wait status says the child exited with status 0.
bool exited_zero(int wait_status);
// The child's exit status, or -1 when a signal ended it.
int exit_status_of(int wait_status);
// "exited with status 3" or "killed by signal 9 (Killed)".
std::string describe_wait_status(int wait_status);

// A file's whole text (empty when it cannot be read).
std::string read_text(const std::filesystem::path& p);
// The last `max_chars` characters of a file, "..." in front when cut.
std::string tail_of(const std::filesystem::path& p, size_t max_chars = 2000);
// Writes `text` to `p` through a temporary file and a rename, so that a reader never sees half
// of it. Throws std::runtime_error when it cannot be written.
void write_text_atomically(const std::filesystem::path& p, const std::string& text);

}  // namespace kvtier
