#pragma once

// Whether a node's last process stopped cleanly (KIP-966's clean shutdown tracking): a clean stop
// leaves <data-dir>/clean-shutdown once every log is flushed and closed and the checkpoints are
// written; the next process takes it away at start-up, before it writes anything, so a crash of
// that process is never taken for a clean stop. The node tells the controller in its
// registration: a replica whose node stopped cleanly holds every record it acknowledged, one
// whose node crashed may have lost what the page cache held (docs/controller.md, "Registration").

#include <filesystem>

#include "runtime/result.hpp"

namespace capstan {

inline constexpr const char* clean_shutdown_file_name = "clean-shutdown";

// True iff `dir` holds the marker; removes it (and fsyncs the directory). Blocking: for the
// start-up thread. KAFKA_STORAGE_ERROR when it cannot be removed.
result<bool> take_clean_shutdown_marker(const std::filesystem::path& dir);

// Leaves the marker (written atomically). Blocking: for the stopping thread, after the logs
// closed.
status write_clean_shutdown_marker(const std::filesystem::path& dir);

} // namespace capstan
