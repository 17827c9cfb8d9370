#pragma once
// Helpers for the tests of make_gemm_plan's packing and copies (test_gemm_dispatch.cu,
// test_gemm_tf32.cu): a device described on the host, fake operand addresses (a plan reads
// only their alignment), and a packing policy that copies at any size, so that every pad runs
// on shapes whose CPU reference is quick.
#include <foundry/gemm/gemm.cuh>
#include <foundry/runtime/device.cuh>

#include <cstdint>
#include <type_traits>

namespace foundry::test {

/// An H200-like device on the host: 132 SMs and 227 KiB of opt-in shared memory a block, at
/// compute capability `compute_capability` (e.g. 90).
inline device_properties h200_like(int compute_capability) {
  device_properties d;
  d.sm_count = 132;
  d.shared_memory_per_block_optin = 232448;  // 227 KiB, as the H100 and H200
  d.compute_capability_major = compute_capability / 10;
  d.compute_capability_minor = compute_capability % 10;
  return d;
}

/// An address that is never dereferenced: make_gemm_plan reads only its alignment.
template <class T>
const T* fake_address(std::uintptr_t address) {
  return reinterpret_cast<const T*>(address);
}

/// Copies whatever the product's size; the rule itself is checked with the default policy.
struct pack_any_size : gemm_kernels::gemm_pack_policy {
  static constexpr double flops_per_byte = 1e-30;
  static constexpr double min_flops = 0.0;
  static constexpr std::int64_t min_k = 0;  ///< fp32's packing (detail::pack_for_vector_loads): any K
  /// Never trade the copies for rung 4's fallback, however the time model compares them: the
  /// tests of the packed path need it taken (session 24: with model-refit.patch they did not).
  static constexpr double clear_gain = 0.0;
};

/// The plan foundry::gemm follows for `p` on this device, with rung `rung` and packing as
/// `Policy` says (the default policy: exactly make_gemm_plan's plan).
template <class Policy, class In>
gemm_plan plan_on_this_device(const gemm_problem<In, float>& p, gemm_rung rung) {
  const device_properties& d = get_device_properties();
  if constexpr (std::is_same_v<Policy, gemm_kernels::gemm_pack_policy>) {
    return make_gemm_plan(p, d);
  } else {
    const auto sm_count = [&d] { return d.sm_count; };
    const std::size_t optin = d.shared_memory_per_block_optin;
    return detail::pack_where_it_pays<Policy>(detail::plan_rung(rung, p, 0, sm_count, optin), rung, p, sm_count, optin);
  }
}

}  // namespace foundry::test
