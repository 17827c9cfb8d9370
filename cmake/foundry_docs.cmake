# The API reference: target foundry_docs runs Doxygen (Debian's `doxygen`) over the public
# headers with docs/Doxyfile.in. Undocumented public symbols are errors (EXTRACT_ALL=NO,
# WARN_AS_ERROR=FAIL_ON_WARNINGS): the target fails and lists them. Off by default;
# scripts/check-docs.sh is the CI check.
option(FOUNDRY_BUILD_DOCS "Add the target foundry_docs (the Doxygen API reference)" OFF)
if(FOUNDRY_BUILD_DOCS)
  find_package(Doxygen REQUIRED)
  set(FOUNDRY_DOCS_OUTPUT "${PROJECT_BINARY_DIR}/docs")
  file(MAKE_DIRECTORY "${FOUNDRY_DOCS_OUTPUT}")
  configure_file("${PROJECT_SOURCE_DIR}/docs/Doxyfile.in" "${FOUNDRY_DOCS_OUTPUT}/Doxyfile" @ONLY)
  file(GLOB_RECURSE foundry_public_headers CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/include/foundry/*.cuh")
  add_custom_command(
    OUTPUT "${FOUNDRY_DOCS_OUTPUT}/html/index.html"
    COMMAND Doxygen::doxygen "${FOUNDRY_DOCS_OUTPUT}/Doxyfile"
    DEPENDS "${FOUNDRY_DOCS_OUTPUT}/Doxyfile" ${foundry_public_headers}
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
    COMMENT "Doxygen: the API reference in ${FOUNDRY_DOCS_OUTPUT}/html (undocumented public symbols fail)"
    VERBATIM)
  add_custom_target(foundry_docs DEPENDS "${FOUNDRY_DOCS_OUTPUT}/html/index.html")
endif()
