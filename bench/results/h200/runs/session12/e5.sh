#!/bin/bash
# After e4.sh on the same machine: the four tools on test_gemm_skinny with the patch applied.
O=$1; cd /tmp/t || exit 1
SANITIZE_JOBS=4 SANITIZE_TIMEOUT=${ST:-300} SANITIZE_BINARIES="test_gemm_skinny" scripts/gpu-check.sh $O/a sanitize | tail -6
grep -h "^== " $O/a/sanitizer.log
