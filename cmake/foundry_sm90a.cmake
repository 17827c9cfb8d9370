# sm_90a for the Hopper GEMM rung (include/foundry/gemm/gemm_wgmma.cuh).
#
# wgmma and setmaxnreg exist only in sm_90a, the architecture-specific variant of
# sm_90: its code runs on compute capability 9.0 (H100, H200) and nowhere else, and
# compute_90a PTX cannot be compiled for any later GPU. So foundry keeps the portable
# compute_90 PTX and swaps only the sm_90 machine code for sm_90a machine code:
#
#   foundry_enable_sm90a(<target>...)
#
# rewrites each target's CUDA architectures, "90" (= 90-real + 90-virtual) becoming
# "90-virtual;90a-real" and "90-real" becoming "90a-real", and defines
# FOUNDRY_HAS_SM90A=1 on the target, which lets foundry::gemm pick the wgmma rung on a
# 9.0 device. (A 9.0 device then finds sm_90a SASS and never JIT-compiles the
# compute_90 PTX, in which the wgmma kernel is only a trap.) A list that already names
# 90a is left alone; "native" is resolved first. Lists without 90 (80 only, 100, "all",
# ...) are left alone and get no FOUNDRY_HAS_SM90A: the rung is then never offered and
# the mma.sync rung serves Hopper as before.
#
# Only the targets that call foundry::gemm with 16-bit inputs need it (test_gemm_wgmma,
# test_gemm_dispatch, bench_gemm): the extra device pass costs build time.
# Users of the installed package get the same effect with
#   set_property(TARGET app PROPERTY CUDA_ARCHITECTURES 90-virtual 90a-real)
#   target_compile_definitions(app PRIVATE FOUNDRY_HAS_SM90A=1)
# CMake 3.25 (CI) and CMake 4 (the H200 machine) both accept the "a" suffix.
option(FOUNDRY_SM90A "Build sm_90a code (the wgmma GEMM rung) where sm_90 is built, for the targets that need it" ON)

function(foundry_enable_sm90a)
  if(NOT FOUNDRY_SM90A)
    return()
  endif()
  foreach(target IN LISTS ARGN)
    if(NOT TARGET ${target})
      continue()
    endif()
    get_target_property(archs ${target} CUDA_ARCHITECTURES)
    if(NOT archs)
      set(archs "${CMAKE_CUDA_ARCHITECTURES}")
    endif()
    if(archs STREQUAL "native")
      set(archs "${CMAKE_CUDA_ARCHITECTURES_NATIVE}")  # e.g. "90-real" on an H200
    endif()
    set(rewritten "")
    set(has_sm90a FALSE)
    foreach(arch IN LISTS archs)
      if(arch MATCHES "^90a(-real)?$")
        set(has_sm90a TRUE)
        list(APPEND rewritten ${arch})
      elseif(arch STREQUAL "90")
        set(has_sm90a TRUE)
        list(APPEND rewritten 90-virtual 90a-real)
      elseif(arch STREQUAL "90-real")
        set(has_sm90a TRUE)
        list(APPEND rewritten 90a-real)
      else()
        list(APPEND rewritten ${arch})
      endif()
    endforeach()
    if(has_sm90a)
      set_property(TARGET ${target} PROPERTY CUDA_ARCHITECTURES ${rewritten})
      target_compile_definitions(${target} PRIVATE FOUNDRY_HAS_SM90A=1)
    endif()
  endforeach()
endfunction()
