#pragma once

#include <cstdint>

namespace capstan::test {

// A port the kernel just handed out on 127.0.0.1 (free unless someone takes it meanwhile).
uint16_t free_port();

} // namespace capstan::test
