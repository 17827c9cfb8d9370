# Warning policy for foundry's own targets (not imposed on consumers):
# -Wall -Wextra on host code, every warning an error, nvcc's included.
add_library(foundry_warnings INTERFACE)
target_compile_options(foundry_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Werror --Werror=all-warnings>)
