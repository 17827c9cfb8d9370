#!/bin/bash
# Sourced by s22p.sh and runs/session23/s23.sh from the repository root, with S (the summary
# file) set: copies the tree to W (default /tmp/w22, the path the pack was built at, so that
# ctest's files hold), applies the patches PATCHES names there, in order (none by default:
# model-refit-v2 is on main since session 25), unpacks .prebuilt/build.tar.xz
# over it (or, where .prebuilt is not carried, builds it there with gpu-check.sh), and leaves the shell in W with ROOT naming the repository root. Returns non-zero
# on any failure.
ROOT=$PWD; W=${W:-/tmp/w22}; R=bench/results/h200/runs/session21
unpack_prebuilt() {
  rm -rf $W && mkdir -p $W && tar cf - --exclude=./.prebuilt --exclude=./.git . | tar xf - -C $W || return 1
  cd $W || return 1
  for p in ${PATCHES-}; do
    patch -p1 < $p >> $S 2>&1 || { cat $S; return 1; }
  done
  if [ -f $ROOT/.prebuilt/build.tar.xz ]; then
    tar xJf $ROOT/.prebuilt/build.tar.xz -C $W || return 1
  else  # no pack carried: build here (~190 s on 16 cores)
    scripts/gpu-check.sh $O/b build >> $S 2>&1 || { tail -30 $S; return 1; }
    rm -f $O/b/build.log; echo "built at ${SECONDS}s" >> $S
  fi
  # ctest's files name the cmake and nvcc of the CPU machine
  [ -x /usr/bin/cmake ] || ln -s "$(command -v cmake)" /usr/bin/cmake
  [ -x /usr/local/cuda/bin/nvcc ] || echo "no /usr/local/cuda/bin/nvcc: the consumer tests will fail" >> $S
  echo "unpacked at ${SECONDS}s" >> $S
}
