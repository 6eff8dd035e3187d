#!/usr/bin/env bash
# A GPU machine is sent the checkout's tracked files plus what a run carries (the .deb set of
# cmake/device_deps.sh): 64 MiB at most. This fails when the two together pass 60 MiB, leaving
# room for the run's own files. Exit 77 (skipped) when the package lists cannot size the .deb set.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
limit=$((60 * 1024 * 1024))

# The tracked files as they are in the working tree (a clean clone's checkout).
tree=$(git -C "$root" ls-files -z | (cd "$root" && xargs -0 stat -L -c %s 2>/dev/null) | awk '{s += $1} END {print s + 0}')
set +e
debs=$(bash "$root/cmake/device_deps.sh" --size)
status=$?
set -e
[[ $status -eq 0 ]] || exit "$status"
total=$((tree + debs))
mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB", b / 1048576}'; }
echo "tracked files $(mib "$tree") + .deb set $(mib "$debs") = $(mib "$total") (limit $(mib "$limit"))"
if [[ $total -gt $limit ]]; then
  echo "check_device_transfer_size: over the limit; the largest tracked files:" >&2
  git -C "$root" ls-files -z | (cd "$root" && xargs -0 stat -L -c '%s %n') | sort -n | tail -10 >&2
  exit 1
fi
