#include "tests/support/child_process.hpp"

#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace capstan::test {

namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

child_process::child_process(const std::string& program, const std::vector<std::string>& args,
                             const std::filesystem::path& out_dir, const std::string& label)
    : out_(out_dir / (label + ".out")), err_(out_dir / (label + ".err")) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int rc = posix_spawn(&pid_, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("posix_spawn " + program + " failed: " + std::to_string(rc));
}

child_process::~child_process() {
  if (!status_) {
    ::kill(pid_, SIGKILL);
    wait(std::chrono::seconds(10));
  }
}

void child_process::signal(int sig) {
  if (!status_) ::kill(pid_, sig);
}

std::optional<int> child_process::wait(std::chrono::milliseconds timeout) {
  if (status_) return status_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      return status_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool child_process::wait_for_stderr(const std::string& text, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (stderr_text().find(text) != std::string::npos) return true;
    if (wait(std::chrono::milliseconds(0))) return stderr_text().find(text) != std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::string child_process::stdout_text() const { return read_file(out_); }
std::string child_process::stderr_text() const { return read_file(err_); }

int run_to_end(const std::string& program, const std::vector<std::string>& args,
               const std::filesystem::path& out_dir, std::string* out, std::string* err,
               std::chrono::milliseconds timeout) {
  static int counter = 0;
  child_process p(program, args, out_dir, "run" + std::to_string(++counter));
  auto code = p.wait(timeout);
  if (!code) {
    p.signal(SIGKILL);
    code = p.wait(std::chrono::seconds(10));
  }
  if (out) *out = p.stdout_text();
  if (err) *err = p.stderr_text();
  return code.value_or(-1);
}

bool python_module_present(const std::string& module, const std::filesystem::path& out_dir) {
  std::string out, err;
  return run_to_end("/usr/bin/python3", {"-c", "import " + module}, out_dir, &out, &err,
                    std::chrono::seconds(30)) == 0;
}

} // namespace capstan::test
