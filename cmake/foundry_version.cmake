# include/foundry/version.cuh is a checked-in header, so that `nvcc -I include` users have
# it too; this check makes configuring fail when it and project(VERSION) disagree, which
# is how CI (scripts/test.sh configures the project) catches a version bumped in one place.
file(READ "${PROJECT_SOURCE_DIR}/include/foundry/version.cuh" foundry_version_header)
foreach(part MAJOR MINOR PATCH)
  if(NOT foundry_version_header MATCHES "#define FOUNDRY_VERSION_${part} ([0-9]+)")
    message(FATAL_ERROR "include/foundry/version.cuh: FOUNDRY_VERSION_${part} not found")
  endif()
  set(foundry_header_${part} "${CMAKE_MATCH_1}")
endforeach()
if(NOT foundry_version_header MATCHES "#define FOUNDRY_VERSION_STRING \"([0-9.]+)\"")
  message(FATAL_ERROR "include/foundry/version.cuh: FOUNDRY_VERSION_STRING not found")
endif()
set(foundry_header_string "${CMAKE_MATCH_1}")
set(foundry_header_version "${foundry_header_MAJOR}.${foundry_header_MINOR}.${foundry_header_PATCH}")
if(NOT foundry_header_version STREQUAL PROJECT_VERSION OR NOT foundry_header_string STREQUAL PROJECT_VERSION)
  message(FATAL_ERROR "include/foundry/version.cuh says ${foundry_header_version} (string \"${foundry_header_string}\") "
                      "but CMakeLists.txt's project(VERSION) says ${PROJECT_VERSION}: change both (and CHANGELOG.md)")
endif()
