#pragma once
/// \file
/// foundry's version, the one its CMake package declares (`project(foundry VERSION ...)`
/// in CMakeLists.txt). Configuring the project fails if the two differ
/// (cmake/foundry_version.cmake), so they cannot drift apart.

/// Major version: incremented by incompatible API changes.
#define FOUNDRY_VERSION_MAJOR 0
/// Minor version: incremented by compatible additions.
#define FOUNDRY_VERSION_MINOR 1
/// Patch version: incremented by fixes.
#define FOUNDRY_VERSION_PATCH 0
/// The version as one integer, major * 10000 + minor * 100 + patch, for `#if` comparisons.
#define FOUNDRY_VERSION (FOUNDRY_VERSION_MAJOR * 10000 + FOUNDRY_VERSION_MINOR * 100 + FOUNDRY_VERSION_PATCH)
/// The version as a string, "major.minor.patch".
#define FOUNDRY_VERSION_STRING "0.1.0"
