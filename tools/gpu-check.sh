#!/usr/bin/env bash
# One call on the GPU machine: build for its architecture, run every test (host and GPU), the kernel
# benchmark and the PyTorch peers, and leave logs under $OUT (or ./gpu-out). Usage:
#   tools/gpu-check.sh [all|test|check|mlp|sanitize|python|bench|moe|peers|host-overhead|gemm|quick|profile|profile-columnwise|test,bench]  (default all)
# peers: issue 48's problems, fq (fq bench --file tools/fq/sweeps-peers.txt: $out/peers-fq.json) and then the
#   torch.compile references (tools/bench/bench_peers.py: $out/peers.json) in the same call on the same device, and the
#   tables of tools/bench/perf_report.py ($out/perf-tables.md). FQ_PEERS_TORCH=0: fq only; FQ_PEERS_QUICK=1: the peers at
#   T <= 1024 only. (torch: the same stage, its old name.)
# host-overhead: host time per call at T = 1 (issue 47): fq_bench_host_overhead (fqQuantize, fqPlanExecute, an empty
#   kernel's launch, the host backend; $out/host-overhead.json) and tools/bench/bench_host_overhead.py (fq.quantize,
#   the planned path, torch's aten.silu and torch.ops.fusedquant; $out/host-overhead-py.json), then perf_report.py's
#   "Host overhead per call" table ($out/host-overhead.md). Builds its target itself.
# gemm: fqGroupedGemm's GPU tests (fq_gemm_gpu_tests), fq_bench_gemm (fused against cuBLASLt per group + fqQuantize;
#   $out/gemm-bench.json/.csv) and torch's bf16 grouped GEMM + activation (tools/bench/bench_gemm_torch.py; $out/gemm-torch.json);
#   builds its two targets itself, so it also runs after a build limited by FQ_BUILD_TARGET. FQ_GEMM_TORCH=0 leaves
#   out torch's peers (up to 15 minutes): `FQ_BUILD_TARGET=fq_gemm_gpu_tests FQ_GEMM_TORCH=0 tools/gpu-check.sh gemm`
#   builds, tests and benchmarks the grouped GEMM inside one 10-minute device call.
# profile-columnwise (not part of all): ncu of the columnwise kernel, per-SASS-instruction counts.
# moe: issue 5's sweeps (tools/fq/sweeps-moe.txt: MoE layouts, rowwise+columnwise one pass against two).
# profile (not part of all): Nsight Compute on the group kernel at the tracked shapes (issue rate, warp
#   states, memory, per-SASS-instruction execution counts) beside a copy kernel.
# quick (not part of all): the few shapes that track the speed goals, for A/B runs between kernel changes
#   (FQ_QUICK_VARIANTS=a,b: those variants side by side; default the dispatcher's choice).
# FQ_BUILD_TARGET=fq builds only the library and the fq tool (the bench and profile stages need no more).
# FQ_PREBUILT=1: no build; build-gpu/ was built on another machine and carried (see the build step below).
# Carry bindings/python/.device (cffi wheels for the device's Python) for the python stage, and
# tools/.device-deps (tools/stage-tool-deps.sh: CLI11 and nlohmann-json headers) where the image lacks them for fq.
set -uo pipefail
what=${1:-all}
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
arch=${FQ_CUDA_ARCHS:-90a}
jobs=$(nproc)
status=0

prebuilt=${FQ_PREBUILT:-0}
if [[ $prebuilt == 1 ]]; then
  # build-gpu/ holds what another machine built for this GPU (no GPU needed to build: `cmake -S . -B build-gpu
  # -DFQ_CUDA_ARCHS=90a && cmake --build build-gpu --target fusedquant fq fq_gpu_tests`), carried here: the device's
  # time goes to the tests and benchmarks. The stages that need more of the build tree (ctest, the Python and
  # GEMM stages, host-overhead) need a build here.
  echo "== build: none (FQ_PREBUILT=1: build-gpu/ as carried)"
  for f in build-gpu/libfusedquant.so build-gpu/tools/fq build-gpu/tests/fq_gpu_tests; do
    [[ -e $f ]] || { echo "FQ_PREBUILT=1 but $f is missing"; exit 1; }
  done
  export LD_LIBRARY_PATH=$PWD/build-gpu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}  # the build tree's RPATH is the other machine's
else
  echo "== build (sm_${arch})"
  deps=()
  [[ -d tools/.device-deps ]] && deps=(-DCMAKE_PREFIX_PATH="$PWD/tools/.device-deps")
  # The Python on PATH (the one that runs the Python stages) builds the torch operators' C++ kernel where it has torch.
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DFQ_CUDA_ARCHS="$arch" "${deps[@]}" \
    -DPython3_EXECUTABLE="$(command -v python3)" >"$out/build.log" 2>&1 &&
    cmake --build build-gpu -j"$jobs" ${FQ_BUILD_TARGET:+--target $FQ_BUILD_TARGET} >>"$out/build.log" 2>&1 ||
    { tail -40 "$out/build.log"; exit 1; }
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv >"$out/device.txt" 2>&1
cat "$out/device.txt"

has() { [[ $what == all || ,$what, == *,$1,* ]]; }
asked() { [[ ,$what, == *,$1,* ]]; }  # stages that run only when named
# fq bench NAME ARGS...: tables on stdout ($out/NAME.txt), progress on stderr ($out/NAME-progress.log), every
# result in $out/NAME.json and $out/NAME.csv.
bench() { local name=$1; shift; ./build-gpu/tools/fq bench "$@" --json "$out/$name.json" --csv "$out/$name.csv" \
            2>"$out/$name-progress.log" | tee "$out/$name.txt"; }
# prof NAME KERNEL_REGEX FQ_BENCH_ARGS...: Nsight Compute on the first launch of the kernels matching the regex
# (issue rate, warp states, memory, per-SASS-instruction execution counts): NAME.txt, NAME-sass.csv, NAME.log.
prof() { local name=$1 regex=$2; shift 2
  ncu --clock-control none -k "regex:$regex" -c 1 --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section SchedulerStats --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis \
    --section SourceCounters -f -o "$out/$name" ./build-gpu/tools/fq bench "$@" >/dev/null 2>"$out/$name.log"
  ncu -i "$out/$name.ncu-rep" --print-details all >"$out/$name.txt" 2>&1
  ncu -i "$out/$name.ncu-rep" --page source --csv --print-source sass >"$out/$name-sass.csv" 2>&1
  rm -f "$out/$name.ncu-rep"
  echo "-- $name"; grep -E "Duration|DRAM Throughput|Issue Slots Busy|Executed Ipc Active|Achieved Occupancy|Registers Per|Executed Instructions  " "$out/$name.txt" | head -12
}
if has test; then
  echo "== tests"
  if [[ $prebuilt != 1 ]]; then
    (cd build-gpu && ctest --output-on-failure -j1) >"$out/ctest.log" 2>&1 || status=1
    tail -15 "$out/ctest.log"
  fi
  ./build-gpu/tests/fq_gpu_tests -s=false >"$out/gpu-tests-full.log" 2>&1 || status=1
  tail -8 "$out/gpu-tests-full.log" | tee "$out/gpu-tests.log"
  if [[ -x build-gpu/tests/fq_cublaslt_tests ]]; then
    echo "-- cuBLASLt reads fq's scale layouts (VEC128_32F, BLK128x128_32F)"
    ./build-gpu/tests/fq_cublaslt_tests 2>&1 | tail -25 | tee "$out/cublaslt-tests.log"
  fi
fi

if has sanitize; then
  echo "== compute-sanitizer: every variant of the random matrix (smaller), graphs and threads, under each tool"
  for tool in memcheck racecheck initcheck synccheck; do
    FQ_GPU_TEST_RANDOM_CASES=24 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 20 \
      ./build-gpu/tests/fq_gpu_tests -tce="*2^31*,*every 16-bit*" >"$out/sanitizer-$tool.log" 2>&1
    rc=$?
    echo "$tool: rc=$rc  $(grep -E 'ERROR SUMMARY|test cases:' "$out/sanitizer-$tool.log" | tr '\n' ' ')"
    if ((rc != 0)); then status=1; grep -vE "^\s*$" "$out/sanitizer-$tool.log" | tail -25; fi
  done
fi

if has python; then
  echo "== Python bindings: pytest on the device (torch CUDA tensors against the host backend)"
  # The device has no cffi: carry bindings/python/.device/*.whl (cp312 wheels, fetched here with pip download).
  python3 -m pip install -q --no-index --no-deps --target /tmp/fq-site bindings/python/.device/*.whl 2>&1 | tail -2
  PYTHONPATH=/tmp/fq-site:bindings/python FUSEDQUANT_LIBRARY=$PWD/build-gpu/libfusedquant.so \
    python3 -m pytest -q -p no:cacheprovider bindings/python/tests 2>&1 | tee "$out/pytest-gpu.log" | tail -6
  grep -qE "[0-9]+ failed|error" "$out/pytest-gpu.log" && status=1
fi

if has check; then
  echo "== fq check: every variant against the host reference"
  ./build-gpu/tools/fq check --cases 400 >"$out/check.txt" 2>"$out/check-progress.log" || status=1
  tail -30 "$out/check.txt"
fi

if has mlp; then
  echo "== examples/mlp_cublaslt: FP8 MLP, fq scales read by cuBLASLt (VEC128_32F / BLK128x128_32F)"
  ./build-gpu/fq_mlp_cublaslt 2>&1 | tee "$out/mlp.txt"
  ./build-gpu/fq_mlp_cublaslt --tokens 4096 --hidden 7168 --inter 18432 --iters 20 2>&1 | tee -a "$out/mlp.txt"
  grep -q FAIL "$out/mlp.txt" && status=1
fi

if has bench; then
  echo "== fq bench"
  bench bench --layouts row,col
  echo "== fq bench: programmatic dependent launch allowed (small batches)"
  bench bench-pdl --pdl 1 --tokens 1,16,128 --layouts row
  echo "== fq bench: BLOCK_2D weights (identity, 128x128 scales, COL_MAJOR as cuBLASLt reads them)"
  bench bench-block2d --tokens 2048,7168,18432 --hidden 2048,7168 --scheme block2d --act identity --not-gated --layouts col
  echo "== fq bench: tools/fq/sweeps.txt (every scheme; the ones without a kernel are listed as skipped)"
  bench bench-sweeps --file tools/fq/sweeps.txt
  if python3 -c "import matplotlib" 2>/dev/null; then
    python3 tools/fq/plot_bench.py "$out/bench.json" "$out/bench.png"
  fi
fi
if asked quick; then
  # The shapes that track issues 3-5's speed goals, for a quick A/B between kernel changes.
  echo "== fq bench (quick): silu + fp8 g128 row-major; plain and silu MXFP8 swizzled; masked MoE"
  v=${FQ_QUICK_VARIANTS:-auto}
  bench quick-group --tokens 1,1024,16384 --hidden 7168 --layouts row,col --variants $v
  bench quick-mx-plain --tokens 16384 --hidden 7168 --scheme mxfp8 --act identity --not-gated --layouts swizzled,row --variants $v
  bench quick-mx-silu --tokens 16384 --hidden 7168 --scheme mxfp8,mxfp4,nvfp4 --layouts swizzled --global-amax device,given --variants $v
  bench quick-swiglu --tokens 1,16384 --hidden 18432 --act swiglu_oai --scheme mxfp8 --layouts swizzled --variants $v
  bench quick-moe --tokens 1024 --hidden 7168 --moe masked --experts 32 --skew skewed --layouts row
fi
if asked profile; then
  echo "== ncu (plain_quant / group_quant): sm90.group, silu + fp8 g128 16384x7168 row-major and plain MXFP8 16384x7168 swizzled / row-major"
  g="group_quant|plain_quant"
  prof prof-silu "$g" --tokens 16384 --hidden 7168 --layouts row --variants sm90.group
  prof prof-mx "$g" --tokens 16384 --hidden 7168 --scheme mxfp8 --act identity --not-gated --layouts swizzled --variants sm90.group
  prof prof-mx-row "$g" --tokens 16384 --hidden 7168 --scheme mxfp8 --act identity --not-gated --layouts row --variants sm90.group
fi
if asked profile-columnwise; then
  # Issue 5: Nsight Compute on the columnwise kernel (per-SASS-instruction execution counts), MXFP8 blocks of 32
  # and per-group 128 transposed, 16384 x 7168, columnwise output only and rowwise + columnwise.
  echo "== ncu (columnwise_quant): silu 16384x7168, MXFP8 col / both, per-group 128 transposed col"
  prof prof-col-mx columnwise_quant --tokens 16384 --hidden 7168 --scheme mxfp8 --layouts swizzled --outputs col --col-block 32
  prof prof-both-mx columnwise_quant --tokens 16384 --hidden 7168 --scheme mxfp8 --layouts swizzled --outputs both --col-block 32
  prof prof-col-g128t columnwise_quant --tokens 16384 --hidden 7168 --scheme per-group --layouts row --outputs col --col-block 128 --transpose 1
fi
if has moe; then
  echo "== fq bench: tools/fq/sweeps-moe.txt (MoE masked/contiguous, skewed counts; single pass vs two passes)"
  bench bench-moe --file tools/fq/sweeps-moe.txt || status=1   # 1: a measurement failed at execution
fi
if has peers || asked torch; then
  echo "== peers (issue 48): fq bench of tools/fq/sweeps-peers.txt, then tools/bench/bench_peers.py (torch.compile, T dynamic)"
  bench peers-fq --file tools/fq/sweeps-peers.txt
  if [[ ${FQ_PEERS_TORCH:-1} != 0 ]]; then
    timeout 500 python3 tools/bench/bench_peers.py "$out/peers.json" ${FQ_PEERS_QUICK:+--quick} 2>&1 | grep -v Warning | tee "$out/peers.txt"
  fi
  python3 tools/bench/perf_report.py "$out" >"$out/perf-tables.md" && echo "tables: $out/perf-tables.md"
fi
if has host-overhead; then
  echo "== host overhead per call (issue 47): fq_bench_host_overhead, tools/bench/bench_host_overhead.py"
  cmake --build build-gpu -j"$jobs" --target fq_bench_host_overhead >>"$out/build.log" 2>&1 ||
    { echo "build of fq_bench_host_overhead failed"; tail -30 "$out/build.log"; status=1; }
  ./build-gpu/tools/bench/fq_bench_host_overhead --json "$out/host-overhead.json" 2>&1 | tee "$out/host-overhead.txt" ||
    status=1
  # cffi from the carried wheels, as the python stage installs it (a no-op when that stage ran first).
  python3 -m pip install -q --no-index --no-deps --target /tmp/fq-site bindings/python/.device/*.whl 2>&1 | tail -2
  PYTHONPATH=/tmp/fq-site FUSEDQUANT_LIBRARY=$PWD/build-gpu/libfusedquant.so timeout 300 python3 tools/bench/bench_host_overhead.py \
    --json "$out/host-overhead-py.json" 2>&1 | grep -v Warning | tee "$out/host-overhead-py.txt"
  python3 tools/bench/perf_report.py "$out" >"$out/host-overhead.md" && echo "table: $out/host-overhead.md"
fi
if has gemm; then
  echo "== fqGroupedGemm: GPU tests, fq_bench_gemm (fused vs cuBLASLt per group + fqQuantize), torch bf16 peers"
  cmake --build build-gpu -j"$jobs" --target fq_gemm_gpu_tests fq_bench_gemm >>"$out/build.log" 2>&1 ||
    { echo "build of fq_gemm_gpu_tests / fq_bench_gemm failed"; tail -30 "$out/build.log"; status=1; }
  ./build-gpu/tests/fq_gemm_gpu_tests >"$out/gemm-tests.log" 2>&1
  rc=$?
  ((rc == 0 || rc == 77)) || status=1   # 77: not sm_90 (after checking that the call is refused there)
  echo "fq_gemm_gpu_tests: rc=$rc"
  grep -E "MESSAGE|ERROR|FATAL|test cases|assertions|Status|skipped|sm_" "$out/gemm-tests.log" | head -60
  ./build-gpu/tools/bench/fq_bench_gemm --json "$out/gemm-bench.json" --csv "$out/gemm-bench.csv" >"$out/gemm-bench.log" 2>&1
  rc=$?
  ((rc == 0)) || status=1
  cat "$out/gemm-bench.log"
fi
if has gemm && [[ ${FQ_GEMM_TORCH:-1} != 0 ]]; then
  sizes=()
  [[ -s $out/gemm-bench.json ]] && sizes=(--sizes-from "$out/gemm-bench.json")
  timeout 900 python3 tools/bench/bench_gemm_torch.py --json "$out/gemm-torch.json" ${sizes[@]+"${sizes[@]}"} >"$out/gemm-torch.log" 2>&1
  echo "bench_gemm_torch.py: rc=$?"
  grep -v Warning "$out/gemm-torch.log"
fi
exit $status
