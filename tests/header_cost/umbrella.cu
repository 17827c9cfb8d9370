// Includes every public header and calls nothing: the device code it compiles is what any
// translation unit pays for #include <foundry/foundry.cuh>. tests/CMakeLists.txt compiles it
// to PTX and checks that the PTX holds no kernel (check_no_kernels.cmake): a kernel
// referenced from a non-template function in a header would be compiled into every unit
// that includes it, whether or not it is called: rungs 2 and 3 of the GEMM and the split-K
// reduce once made examples/vector_add take 48 s to compile for sm_80 and sm_90; 21 s since.
#include <foundry/foundry.cuh>
