"""PyTorch's bf16 peers of fq_bench_gemm (tools/bench/bench_grouped_gemm.cpp): the gate-up GEMM of a DeepSeek-V3-like
MoE layer (N = 2 x 2048, K = 7168) with bf16 operands, alone and followed by the activation y = silu(gate) * up *
prob (eager), on the same shapes: MoE E in {8, 32, 256}, M in {4096, 16384}, skewed and uniform group sizes;
dense E = 1, M in {128 .. 16384}.

MoE GEMM: torch._grouped_mm(A [M, K], W.transpose(-2, -1) [E, K, N], offs=int32 cumulative group ends), or, where
that is missing or refuses, one torch.matmul per non-empty group (the table and the JSON say which ran). Dense:
torch.matmul(A, W[0].t()). Timing as fq_bench_gemm: CUDA events around one call, 3 warm-up calls, then --reps
calls each after an L2 flush (a 256 MB fill outside the events); median and min.

Group sizes: --sizes-from FILE reads them from fq_bench_gemm's --json output (the same sizes, exactly); without it
they are drawn the same way (exp(z), z ~ N(0, 1), fixed seed; the 8 smallest of E = 256 empty) but from torch's
generator, so they differ in detail.

Usage: python3 tools/bench/bench_gemm_torch.py [--json FILE] [--sizes-from gemm-bench.json] [--reps N] [--quick]
Run on the device by tools/gpu-check.sh (stage gemm); not a dependency of the library.
"""
import argparse
import json
import math
import sys

import torch
import torch.nn.functional as F

N, H, K = 4096, 2048, 7168


def skewed_sizes(e, m):
    g = torch.Generator().manual_seed(1000 + e)
    w = torch.exp(torch.randn(e, generator=g, dtype=torch.float64))
    if e == 256:
        w[torch.argsort(w)[:8]] = 0.0
    exact = m * w / w.sum()
    sizes = torch.floor(exact).long()
    rest = torch.argsort(exact - sizes, descending=True)
    for i in range(m - int(sizes.sum())):
        sizes[rest[i % e]] += 1
    return [int(x) for x in sizes]


def uniform_sizes(e, m):
    return [m // e + (1 if g < m % e else 0) for g in range(e)]


def shapes(quick, sizes_from):
    known = {}
    if sizes_from:
        with open(sizes_from) as f:
            for r in json.load(f)["results"]:
                known[(r["kind"], r["E"], r["M"], r["dist"])] = r["sizes"]
    out = []
    for e in ([8] if quick else [8, 32, 256]):
        for m in ([4096] if quick else [4096, 16384]):
            for dist in ("skewed", "uniform"):
                s = known.get(("moe", e, m, dist)) or (skewed_sizes(e, m) if dist == "skewed" else uniform_sizes(e, m))
                out.append(dict(kind="moe", E=e, M=m, dist=dist, sizes=s, sizes_from_fq=("moe", e, m, dist) in known))
    for m in ([4096] if quick else [128, 512, 2048, 4096, 8192, 16384]):
        out.append(dict(kind="dense", E=1, M=m, dist="-", sizes=[m], sizes_from_fq=True))
    return out


class Timer:
    def __init__(self, reps):
        self.reps = reps
        self.flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")

    def time(self, fn):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        times = []
        for r in range(self.reps):
            self.flush.fill_(r & 0xFF)
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) * 1000.0)
        times.sort()
        return times[len(times) // 2], times[0]


def activation(c, prob):
    return F.silu(c[:, :H]) * c[:, H:] * prob[:, None]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json")
    ap.add_argument("--sizes-from")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("skipped: no CUDA device")
        return 77
    props = torch.cuda.get_device_properties(0)
    print(f"device: {props.name}; torch {torch.__version__} (CUDA {torch.version.cuda}); N = {N}, K = {K}, bf16 operands; "
          f"{args.reps} reps after an L2 flush each, median (min)")
    have_grouped = hasattr(torch, "_grouped_mm")
    print(f"torch._grouped_mm: {'present' if have_grouped else 'absent (per-group torch.matmul loop)'}")
    timer = Timer(args.reps)
    todo = shapes(args.quick, args.sizes_from)
    max_e = max(s["E"] for s in todo)
    max_m = max(s["M"] for s in todo)
    torch.manual_seed(0)
    w = torch.randn(max_e, N, K, dtype=torch.bfloat16, device="cuda").div_(math.sqrt(K))  # E weights [N, K]
    a_all = torch.randn(max_m, K, dtype=torch.bfloat16, device="cuda")
    prob_all = torch.rand(max_m, dtype=torch.float32, device="cuda").to(torch.bfloat16)
    results = []
    hdr = (f"{'kind':<5} {'E':>3} {'M':>6} {'dist':<7} {'impl':<12} | {'gemm us':>9} {'min':>9} {'TF/s':>6} | "
           f"{'gemm+act us':>11} {'min':>9} {'TF/s':>6}")
    print(hdr)
    for s in todo:
        e, m, sizes = s["E"], s["M"], s["sizes"]
        a, prob = a_all[:m], prob_all[:m]
        wt = w[:e].transpose(-2, -1)  # [E, K, N], column-major in the last two dimensions
        if s["kind"] == "dense":
            impl = "matmul"
            gemm = lambda: torch.matmul(a, w[0].t())
        else:
            offs = torch.tensor(sizes, dtype=torch.int32, device="cuda").cumsum(0).to(torch.int32)
            bounds = [0]
            for x in sizes:
                bounds.append(bounds[-1] + x)

            def loop():
                out = torch.empty(m, N, dtype=torch.bfloat16, device="cuda")
                for g in range(e):
                    if sizes[g]:
                        torch.matmul(a[bounds[g]:bounds[g + 1]], w[g].t(), out=out[bounds[g]:bounds[g + 1]])
                return out

            impl, gemm = "matmul loop", loop
            if have_grouped:
                try:
                    grouped = lambda: torch._grouped_mm(a, wt, offs=offs)
                    ref = loop()
                    got = grouped()
                    torch.cuda.synchronize()
                    rel = float((got.float() - ref.float()).norm() / ref.float().norm())
                    if rel > 1e-2:
                        raise RuntimeError(f"differs from the matmul loop: relative error {rel:.3g}")
                    impl, gemm = "_grouped_mm", grouped
                except Exception as exc:  # noqa: BLE001 - report and fall back
                    print(f"      torch._grouped_mm not used for this shape ({exc}); per-group torch.matmul loop",
                          file=sys.stderr)
        flops = 2.0 * m * N * K
        g_med, g_min = timer.time(gemm)
        ga_med, ga_min = timer.time(lambda: activation(gemm(), prob))
        r = dict(kind=s["kind"], E=e, M=m, dist=s["dist"], impl=impl, sizes=sizes, sizes_from_fq=s["sizes_from_fq"],
                 gemm_us=g_med, gemm_min_us=g_min, gemm_tflops=flops / g_med * 1e-6,
                 gemm_act_us=ga_med, gemm_act_min_us=ga_min, gemm_act_tflops=flops / ga_med * 1e-6)
        results.append(r)
        print(f"{s['kind']:<5} {e:>3} {m:>6} {s['dist']:<7} {impl:<12} | {g_med:>9.1f} {g_min:>9.1f} "
              f"{r['gemm_tflops']:>6.0f} | {ga_med:>11.1f} {ga_min:>9.1f} {r['gemm_act_tflops']:>6.0f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=props.name, torch=torch.__version__, cuda=torch.version.cuda, n=N, k=K,
                           reps=args.reps, grouped_mm_present=have_grouped,
                           method="CUDA events around one call, L2 flushed (256 MB fill) before each rep, 3 warm-up "
                                  "calls; median and min; TFLOP/s = 2*M*N*K/t; activation = silu(gate)*up*prob, eager",
                           results=results), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
