#pragma once

// The process's open-file limit (RLIMIT_NOFILE). A node holds three descriptors per partition
// replica at the least (runtime/cluster/topic_validation.hpp, max.broker.partitions), so it raises
// its soft limit to the hard limit at start, as Kafka's packaging asks of the operator.

#include <cstdint>

#include "runtime/result.hpp"

namespace capstan {

struct open_file_limit {
  uint64_t soft_before = 0; // RLIM_INFINITY stays as it is
  uint64_t soft_after = 0;
  uint64_t hard = 0;
};

// Sets the soft RLIMIT_NOFILE to the hard one when it is lower. The error (UNKNOWN_SERVER_ERROR,
// with errno's text) when getrlimit or setrlimit fails; the limit is then unchanged.
result<open_file_limit> raise_open_file_limit();

} // namespace capstan
