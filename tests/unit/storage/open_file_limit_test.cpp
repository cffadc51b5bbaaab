#include "runtime/storage/open_file_limit.hpp"

#include <sys/resource.h>

#include <catch2/catch.hpp>

using namespace capstan;

TEST_CASE("open-file limit: the soft limit is raised to the hard one", "[storage][rlimit]") {
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
  REQUIRE(saved.rlim_max != RLIM_INFINITY);
  REQUIRE(saved.rlim_max >= 1000);
  rlimit lowered = saved;
  lowered.rlim_cur = 1000;
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &lowered) == 0);
  const auto raised = raise_open_file_limit();
  rlimit now{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &now) == 0);
  const auto again = raise_open_file_limit();
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &saved) == 0);

  REQUIRE(raised);
  CHECK(raised->soft_before == 1000);
  CHECK(raised->soft_after == saved.rlim_max);
  CHECK(raised->hard == saved.rlim_max);
  CHECK(now.rlim_cur == saved.rlim_max);
  REQUIRE(again);
  CHECK(again->soft_before == saved.rlim_max);
  CHECK(again->soft_after == saved.rlim_max);
}
