#!/usr/bin/env bash
# Copies fq's header-only build dependencies as Debian installed them here (libcli11-dev, nlohmann-json3-dev:
# their headers and CMake package files, paths kept relative to /usr) into DIR, for a machine that has no apt
# and lacks them (a CUDA container image). There: cmake -DCMAKE_PREFIX_PATH=DIR ... (tools/gpu-check.sh passes
# tools/.device-deps when it is there). Usage: tools/stage-tool-deps.sh [DIR]  (default tools/.device-deps)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-tools/.device-deps}
mkdir -p "$dir"
dpkg -L libcli11-dev nlohmann-json3-dev | grep -E '^/usr/(include|share/cmake)/' | while read -r f; do
  [[ -f $f ]] || continue
  mkdir -p "$dir/$(dirname "${f#/usr/}")"
  cp "$f" "$dir/${f#/usr/}"
done
echo "staged in $dir ($(du -sh "$dir" | cut -f1)): cmake -DCMAKE_PREFIX_PATH=$(cd "$dir" && pwd)"
