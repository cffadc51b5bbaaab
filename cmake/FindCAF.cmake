# Finds the C++ Actor Framework installed by Debian's libcaf-dev, which ships no CMake config.
# Defines CAF::core, CAF::io and CAF::openssl (as requested by COMPONENTS) and CAF_VERSION.
find_package(Threads REQUIRED)
find_path(CAF_INCLUDE_DIR caf/config.hpp)

if(CAF_INCLUDE_DIR AND EXISTS "${CAF_INCLUDE_DIR}/caf/config.hpp")
  file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" caf_version_line
       REGEX "^#define CAF_VERSION [0-9]+")
  string(REGEX REPLACE "^#define CAF_VERSION ([0-9]+).*" "\\1" caf_version_number
         "${caf_version_line}")
  math(EXPR caf_major "${caf_version_number} / 10000")
  math(EXPR caf_minor "(${caf_version_number} / 100) % 100")
  math(EXPR caf_patch "${caf_version_number} % 100")
  set(CAF_VERSION "${caf_major}.${caf_minor}.${caf_patch}")
endif()

foreach(component IN LISTS CAF_FIND_COMPONENTS)
  find_library(CAF_${component}_LIBRARY NAMES caf_${component})
  if(CAF_${component}_LIBRARY)
    set(CAF_${component}_FOUND TRUE)
    if(NOT TARGET CAF::${component})
      add_library(CAF::${component} SHARED IMPORTED)
      set_target_properties(CAF::${component} PROPERTIES
        IMPORTED_LOCATION "${CAF_${component}_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}"
        INTERFACE_LINK_LIBRARIES Threads::Threads)
    endif()
  endif()
endforeach()

if(TARGET CAF::io AND TARGET CAF::core)
  set_property(TARGET CAF::io APPEND PROPERTY INTERFACE_LINK_LIBRARIES CAF::core)
endif()
if(TARGET CAF::openssl AND TARGET CAF::io)
  set_property(TARGET CAF::openssl APPEND PROPERTY INTERFACE_LINK_LIBRARIES CAF::io)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CAF
  REQUIRED_VARS CAF_INCLUDE_DIR
  VERSION_VAR CAF_VERSION
  HANDLE_COMPONENTS)
