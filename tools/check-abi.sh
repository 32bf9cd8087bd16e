#!/usr/bin/env bash
# The ABI of libfusedquant is frozen within a major version (docs/abi.md). This builds the library
# (host backend, Release with debug info, in build-abi/), dumps its ABI with abidw -- public surface only:
# the types of include/fusedquant -- and compares it with the stored baseline abi/libfusedquant.abi using
# abidiff (abigail-tools). It fails when a function or variable was removed or changed (signature,
# parameter or return types, the types they reach), or abidiff reports an incompatible change; added
# functions and variables are compatible and pass. Enumerations cross the ABI as int32_t, so a new enum
# value does not show in the ABI at all: the values the header freezes (every enum constant, attribute id
# with its C type and size, status code, FQ_SCALE_INFO id and public macro) are checked first, against the
# table abi/values.txt, by tools/abi_values.py: a changed or vanished value fails, and so does a header entry
# the table lacks (appending it is the only way the table grows).
#
#   tools/check-abi.sh              check (CI)
#   tools/check-abi.sh --update     after a deliberate compatible change (a new function, attribute or enum
#                                   value): check, then append the new values to abi/values.txt and store the
#                                   new dump as the baseline (commit abi/values.txt and abi/libfusedquant.abi)
#   tools/check-abi.sh --new-major  a new major version (SOVERSION bump): store the dump and the table afresh,
#                                   whatever changed
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-check}
build=${FQ_ABI_BUILD:-build-abi}
baseline=abi/libfusedquant.abi

# 1. The values (a few seconds; no library needed).
case $mode in
  --update) python3 tools/abi_values.py --update ;;
  --new-major) python3 tools/abi_values.py --new-major ;;
  *) python3 tools/abi_values.py ;;
esac

# 2. The functions.
command -v abidw >/dev/null || { echo "check-abi: abidw not found (apt-get install abigail-tools)"; exit 1; }
# Debug info for abidw, with the checkout's path mapped away so the dump is the same from any directory.
flags="-g -fdebug-prefix-map=$PWD=."
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_FLAGS=$flags" "-DCMAKE_CXX_FLAGS=$flags" -DFQ_ENABLE_CUDA=OFF \
  -DFQ_BUILD_TESTS=OFF -DFQ_BUILD_TOOLS=OFF -DFQ_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" --target fusedquant -j"$(nproc)" >/dev/null
lib=$(readlink -f "$build/libfusedquant.so")

# The exported fq* functions and the types they reach, as declared in the public header; reproducible: no
# paths, no source locations, no DT_NEEDED, hashed type ids.
abidw --headers-dir include/fusedquant --drop-private-types --exported-interfaces-only --no-corpus-path \
  --no-comp-dir-path --no-show-locs \
  --no-elf-needed --type-id-style hash --out-file "$build/libfusedquant.abi" "$lib"

if [[ $mode == --new-major ]]; then
  mkdir -p abi
  cp "$build/libfusedquant.abi" "$baseline"
  echo "check-abi: stored a new baseline $baseline for $(basename "$lib") (new major version)"
  exit 0
fi
[[ -f $baseline ]] || { echo "check-abi: no baseline $baseline (tools/check-abi.sh --new-major creates it)"; exit 1; }

set +e
abidiff --no-default-suppression "$baseline" "$build/libfusedquant.abi" >"$build/abidiff.txt" 2>&1
status=$?
set -e
# abidiff's status is a bit mask: 1 error, 2 usage error, 4 ABI change, 8 incompatible ABI change.
report=$(cat "$build/abidiff.txt")
count() { { grep -oE "$1" <<<"$report" || true; } | { grep -oE '^[0-9]+' || true; } | awk '{s += $1} END {print s + 0}'; }
removed=$(count '[0-9]+ Removed( \([0-9]+ filtered out\))?,')
changed=$(count '[0-9]+ Changed( \([0-9]+ filtered out\))?,')
added=$(count '[0-9]+ Added (function|variable)s?$')
if ((status & 3)); then
  echo "$report"
  echo "check-abi: abidiff failed (status $status)"
  exit 1
fi
if ((status & 8)) || ((removed > 0)) || ((changed > 0)); then
  echo "$report"
  echo "check-abi: INCOMPATIBLE with $baseline: $removed removed, $changed changed (abidiff status $status)."
  echo "A 0.x release must keep every function and its signature; add a new function or attribute instead."
  exit 1
fi
if ((status & 4)); then
  echo "$report"
  echo "check-abi: compatible change ($added added)."
  if [[ $mode == --update ]]; then
    cp "$build/libfusedquant.abi" "$baseline"
    echo "check-abi: baseline $baseline updated; commit it with the change"
  else
    echo "check-abi: the baseline is older than the library; 'tools/check-abi.sh --update' stores the new dump"
  fi
else
  echo "check-abi: the ABI of $(basename "$lib") equals $baseline"
  [[ $mode == --update ]] && cp "$build/libfusedquant.abi" "$baseline"
fi
exit 0
