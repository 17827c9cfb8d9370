#pragma once
/// \file
/// NVTX ranges (NVTX3 from the CUDA Toolkit) in foundry's own domain, so that
/// Nsight Systems shows foundry's calls as named ranges beside the kernels.
/// With no tool attached, a range costs a few nanoseconds.
///
///     { foundry::nvtx_range r{"load inputs"}; ... }   // any host code

#include <nvtx3/nvtx3.hpp>

namespace foundry {

/// NVTX domain under which foundry's ranges appear.
struct nvtx_domain {
  /// The domain's name, as profilers show it.
  static constexpr const char* name{"foundry"};
};

/// A named NVTX range covering the object's lifetime, in the foundry domain.
using nvtx_range = nvtx3::scoped_range_in<nvtx_domain>;

}  // namespace foundry

/// Ranges the enclosing function under its own name, in the foundry domain.
#define FOUNDRY_NVTX_FUNCTION_RANGE() NVTX3_FUNC_RANGE_IN(::foundry::nvtx_domain)
