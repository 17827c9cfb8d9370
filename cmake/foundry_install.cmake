# `cmake --install` puts the headers and a CMake package in the prefix, so that
# consumers write find_package(foundry CONFIG) and link foundry::foundry.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY include/foundry DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS foundry EXPORT foundry-targets)
install(EXPORT foundry-targets NAMESPACE foundry:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/foundry)
if(TARGET foundry_bench)
  install(TARGETS foundry_bench EXPORT foundry-bench-targets)
  install(EXPORT foundry-bench-targets NAMESPACE foundry:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/foundry)
endif()
configure_package_config_file(cmake/foundry-config.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/foundry-config.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/foundry)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/foundry-config-version.cmake
  COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/foundry-config.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/foundry-config-version.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/foundry)
