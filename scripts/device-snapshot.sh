#!/usr/bin/env bash
# Packs a commit of this repository into .snap/tree.tgz (git-ignored) for a run on the
# lent GPU machine. The device tool sends the working tree as it is, helpers' half-made
# edits included; a run that builds from the snapshot checks exactly the commit named.
#   usage: scripts/device-snapshot.sh [REV]     (default: HEAD)
# Then, in the device call (carry: [".device-deps", ".snap"]):
#   mkdir -p /tmp/t && tar xzf .snap/tree.tgz -C /tmp/t && cp -r .device-deps /tmp/t/ &&
#     cd /tmp/t && scripts/gpu-check.sh $OUT [stages]
# Chain the whole command with && up to gpu-check.sh: if the snapshot is missing (no
# carry), the command must stop rather than build the working tree.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
mkdir -p .snap
git archive --format=tar.gz -o .snap/tree.tgz "$rev"
[ -d .device-deps ] || echo "device-snapshot: .device-deps/ is missing: run ../shared/device/pack-deps.sh first" >&2
echo "device-snapshot: .snap/tree.tgz holds $(git rev-parse --short "$rev") ($(du -h .snap/tree.tgz | cut -f1))"
