#!/usr/bin/env bash
# Installs what foundry's build needs beyond the CUDA Toolkit and CMake, from
# Debian/Ubuntu packages, only if missing: Catch2 (tests), Google Benchmark
# (benchmarks), Ninja, and matplotlib (the roofline plot).
set -euo pipefail
packages=(catch2 libbenchmark-dev ninja-build python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || {
  echo "install-deps: the CUDA Toolkit (nvcc) is not installed: see https://developer.nvidia.com/cuda-downloads" >&2
  exit 1
}
