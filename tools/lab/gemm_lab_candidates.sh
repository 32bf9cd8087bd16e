#!/usr/bin/env bash
# One device call for kernel candidates built ahead (tools/lab/gemm_lab.sh with LAB_FLAGS, carried in build-lab/):
#  1. each candidate's 14 bit-exact lab checks (one that fails or hangs a check stops there and is not timed);
#  2. the A/B timings of the base and the passing candidates (gemm_lab_profile.sh's shapes, no Nsight Compute);
#  3. what the base's fused call is made of (gemm_lab_modes.sh), with SiLU and with the identity activation (the
#     epilogue's arithmetic nearly gone), and the SM clock and power per mode (gemm_lab_clocks.sh).
# Results under $OUT (checks.txt, ab.txt, modes.txt). All of it takes ~8 minutes for four candidates; LAB_PARTS
# ("checks ab modes" by default) runs fewer (ab times the candidates named, checked or not).
#   tools/lab/gemm_lab_candidates.sh gemm_lab_base "gemm_lab_x gemm_lab_y"
set -uo pipefail
cd "$(dirname "$0")/../.."
base=$1
parts=${LAB_PARTS:-checks ab modes}
passing=" $2"
[[ $parts == *checks* ]] && passing=""
for b in $2; do
  [[ $parts == *checks* ]] || break
  if LAB_STOP=1 LAB_TIMEOUT=10 tools/lab/gemm_lab_checks.sh "$b" >>"$OUT/checks.txt"; then passing="$passing $b"
  else echo "$b: a check failed or hung; not timed" | tee -a "$OUT/checks.txt"; fi
done
[[ $parts == *checks* ]] && echo "$(grep -c PASS "$OUT/checks.txt") PASS lines; timed: $base$passing"
if [[ $parts == *ab* ]]; then
  LAB_TIMEOUT=20 tools/lab/gemm_lab_profile.sh "$base$passing" none >/dev/null 2>&1
  cp /tmp/o/ab.txt "$OUT/ab.txt" 2>/dev/null
fi
[[ $parts == *modes* ]] && {
  tools/lab/gemm_lab_modes.sh "$base"
  LAB_ACT=identity tools/lab/gemm_lab_modes.sh "$base" | sed 's/^/identity: /'
  tools/lab/gemm_lab_clocks.sh "$base"
} 2>&1 | tee "$OUT/modes.txt"
[[ -f $OUT/ab.txt ]] && cat "$OUT/ab.txt"
