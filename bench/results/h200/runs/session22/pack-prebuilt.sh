#!/bin/bash
# Packs the build tree of /tmp/w22 (h200 preset) for s22p.sh: all but its objects and
# archives, host symbols stripped, into .prebuilt/build.tar.xz of the repository it runs in.
set -euo pipefail
W=/tmp/w22; dest=$PWD/.prebuilt; mkdir -p "$dest"; stage=$(mktemp -d)
cd $W
find build/h200 -type f ! -name '*.o' ! -name '*.a' ! -name '.ninja_deps' | while read -r f; do mkdir -p "$stage/$(dirname "$f")"; cp -p "$f" "$stage/$f"; done
find "$stage" -type f -perm -u+x -exec sh -c 'file -b "$1" | grep -q ELF && strip --strip-unneeded "$1"' _ {} \;
tar cJf "$dest/build.tar.xz" -C "$stage" build
du -h "$dest/build.tar.xz"; rm -rf "$stage"
