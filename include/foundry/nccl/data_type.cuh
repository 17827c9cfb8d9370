#pragma once
/// \file
/// The element types and reductions that NCCL moves: `nccl_data_type<T>()` maps a C++
/// type to its `ncclDataType_t` at compile time (a type NCCL cannot move is a compile
/// error, not a run-time one), and `reduction` names NCCL's reduction operators.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <nccl.h>

#include <cstdint>
#include <type_traits>

namespace foundry::nccl {

namespace detail {
template <class T>
struct nccl_type_of {
  static constexpr bool supported = false;
};
/// Declares that C++ type `cpp_type` travels as NCCL type `nccl_type`.
#define FOUNDRY_NCCL_MAP_TYPE(cpp_type, nccl_type) \
  template <> \
  struct nccl_type_of<cpp_type> { \
    static constexpr bool supported = true; \
    static constexpr ncclDataType_t value = nccl_type; \
  }
FOUNDRY_NCCL_MAP_TYPE(float, ncclFloat32);
FOUNDRY_NCCL_MAP_TYPE(double, ncclFloat64);
FOUNDRY_NCCL_MAP_TYPE(__half, ncclFloat16);
FOUNDRY_NCCL_MAP_TYPE(__nv_bfloat16, ncclBfloat16);
FOUNDRY_NCCL_MAP_TYPE(signed char, ncclInt8);
FOUNDRY_NCCL_MAP_TYPE(unsigned char, ncclUint8);
FOUNDRY_NCCL_MAP_TYPE(int, ncclInt32);
FOUNDRY_NCCL_MAP_TYPE(unsigned int, ncclUint32);
// std::int64_t is `long` on Linux and `long long` elsewhere: both 64-bit types map to NCCL's.
FOUNDRY_NCCL_MAP_TYPE(long, sizeof(long) == 8 ? ncclInt64 : ncclInt32);
FOUNDRY_NCCL_MAP_TYPE(unsigned long, sizeof(unsigned long) == 8 ? ncclUint64 : ncclUint32);
FOUNDRY_NCCL_MAP_TYPE(long long, ncclInt64);
FOUNDRY_NCCL_MAP_TYPE(unsigned long long, ncclUint64);
#undef FOUNDRY_NCCL_MAP_TYPE
}  // namespace detail

/// Whether NCCL can move elements of `T` (cv-qualifiers ignored): float, double, __half,
/// __nv_bfloat16, and the 8-, 32- and 64-bit integers. `char` (neither signed nor
/// unsigned char), bool, 16-bit integers and structs are not.
template <class T>
inline constexpr bool is_nccl_type_v = detail::nccl_type_of<std::remove_cv_t<T>>::supported;

/// The `ncclDataType_t` of `T`; a compile error names the supported types otherwise.
template <class T>
[[nodiscard]] constexpr ncclDataType_t nccl_data_type() noexcept {
  static_assert(is_nccl_type_v<T>,
                "foundry::nccl: NCCL has no data type for this element type (supported: float, double, __half, "
                "__nv_bfloat16, int8/uint8, int32/uint32, int64/uint64)");
  return detail::nccl_type_of<std::remove_cv_t<T>>::value;
}

/// NCCL's reduction operators. `average` is the sum divided by the rank count (NCCL's
/// ncclAvg; integer division for integer types).
enum class reduction { sum, product, min, max, average };

/// NCCL's reduction operation for `op`.
[[nodiscard]] constexpr ncclRedOp_t to_nccl(reduction op) noexcept {
  switch (op) {
    case reduction::sum: return ncclSum;
    case reduction::product: return ncclProd;
    case reduction::min: return ncclMin;
    case reduction::max: return ncclMax;
    case reduction::average: return ncclAvg;
  }
  return ncclSum;
}

}  // namespace foundry::nccl
