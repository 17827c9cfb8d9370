#!/usr/bin/env bash
# The API reference check (CI): builds the target foundry_docs in build/docs, which fails
# on any undocumented public symbol under include/foundry (detail namespaces and folders
# excepted) and names each one. Installs Debian's doxygen if it is missing.
#   usage: scripts/check-docs.sh   (the HTML lands in build/docs/docs/html)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v doxygen >/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends doxygen >/dev/null
fi
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B build/docs -G Ninja -DFOUNDRY_BUILD_DOCS=ON -DFOUNDRY_BUILD_TESTS=OFF -DFOUNDRY_BUILD_BENCHMARKS=OFF \
  -DFOUNDRY_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build/docs --target foundry_docs
echo "check-docs: every public symbol is documented ($(doxygen --version))"
