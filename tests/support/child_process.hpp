#pragma once

// A child process for system tests: started with posix_spawn, its stdout and stderr captured in
// files, waited for with a bound, and killed by pid when the object goes away.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace capstan::test {

class child_process {
public:
  // Starts `program` with `args`; output goes to `out_dir`/<label>.out and .err.
  child_process(const std::string& program, const std::vector<std::string>& args,
                const std::filesystem::path& out_dir, const std::string& label);
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int sig);
  // Exit code (128 + signal when killed by one), or nullopt if still running after `timeout`.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  // True once `text` appears in stderr, false if it did not within `timeout` or the child ended.
  bool wait_for_stderr(const std::string& text, std::chrono::milliseconds timeout);
  std::string stdout_text() const;
  std::string stderr_text() const;

private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  std::filesystem::path out_;
  std::filesystem::path err_;
};

// Runs `program` to completion (bounded by `timeout`, then killed) and returns its exit code,
// with stdout and stderr in the out-parameters.
int run_to_end(const std::string& program, const std::vector<std::string>& args,
               const std::filesystem::path& out_dir, std::string* out, std::string* err,
               std::chrono::milliseconds timeout = std::chrono::seconds(60));

// Whether the system python3 (/usr/bin/python3) imports `module`, e.g. "kafka" or
// "confluent_kafka" (the Kafka clients scripts/setup.sh installs); its output goes to `out_dir`.
bool python_module_present(const std::string& module, const std::filesystem::path& out_dir);

} // namespace capstan::test
