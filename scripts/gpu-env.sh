# Sourced by scripts/gpu-check.sh and scripts/multi-gpu.sh (from the repository root): the
# environment of a run on a GPU machine.
# - the toolkit's tools (compute-sanitizer, ncu) on PATH;
# - foundry::nccl: NCCL from the toolkit, else from the PyTorch wheel (nvidia-nccl-cu13:
#   include/ and lib/libnccl.so.2), whose directory becomes NCCL_ROOT for CMake;
# - NVLink multicast (NVLS) off on the lent machines, for every NCCL communicator;
# - Catch2 and Google Benchmark from .device-deps/ where the device README's pack carried them.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0
if [ -z "${NCCL_ROOT:-}" ] && [ ! -f /usr/local/cuda/include/nccl.h ]; then
  NCCL_ROOT=$(python3 -c "import nvidia.nccl as m; print(list(m.__path__)[0])" 2>/dev/null) &&
    export NCCL_ROOT LD_LIBRARY_PATH="$NCCL_ROOT/lib:${LD_LIBRARY_PATH:-}" || unset NCCL_ROOT
fi
if [ -d .device-deps ]; then
  export CMAKE_PREFIX_PATH="$PWD/.device-deps" LD_LIBRARY_PATH="$PWD/.device-deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi
