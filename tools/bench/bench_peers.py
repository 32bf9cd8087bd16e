"""Peer implementations of the problems of issue 48, timed the way `fq bench` times fq: many calls captured in
one CUDA graph over inputs rotated past 4x the L2, the median (and range) of graph replays; bf16 normal(0, 1)
inputs. The peers are torch.compile references of each problem with the token count T dynamic
(torch._dynamo.mark_dynamic on dimension 0, automatic_dynamic_shapes=False: one compilation per problem and
width, the way a serving engine compiles), their outputs returned rather than copied into preallocated
tensors (both choices change torch.compile's time 1.2-4x; issue 48). Peer libraries that are not installed
on the device (vLLM, FlashInfer, sgl-kernel) are left out. Writes JSON that tools/bench/perf_report.py joins with
`fq bench --file tools/fq/sweeps-peers.txt` of the same run (tools/gpu-check.sh peers).
Usage: python3 tools/bench/bench_peers.py OUT.json [--quick]"""
import json
import sys

import torch
import torch.nn.functional as F

FP8 = torch.float8_e4m3fn
FP8_MAX = 448.0


def silu_mul(x):
    h = x.shape[-1] // 2
    return F.silu(x[..., :h].float()) * x[..., h:].float()


def group_quant(y, group=128):
    g = y.unflatten(-1, (y.shape[-1] // group, group))
    amax = g.abs().amax(dim=-1, keepdim=True)
    scale = torch.clamp(amax / FP8_MAX, min=1e-10)
    q = (g / scale).clamp(-FP8_MAX, FP8_MAX).to(FP8).flatten(-2)
    return q, scale.squeeze(-1)


def silu_fp8_row(x):
    """SiLU(gate) * up, FP8 e4m3fn per group of 128, fp32 scales [T, H/128] row-major."""
    return group_quant(silu_mul(x))


def silu_fp8_col(x):
    """The same with column-major scales: [H/128, T] in memory (returned as its [T, H/128] transpose)."""
    q, s = group_quant(silu_mul(x))
    return q, s.t().contiguous().t()


def token_quant(y):
    """FP8 e4m3fn per token: one fp32 scale a row, amax / 448 (vLLM's dynamic per-token FP8 quantization)."""
    amax = y.abs().amax(dim=-1, keepdim=True)
    scale = torch.clamp(amax / FP8_MAX, min=1e-10)
    return (y / scale).clamp(-FP8_MAX, FP8_MAX).to(FP8), scale


def silu_fp8_token(x):
    """SiLU(gate) * up, FP8 e4m3fn per token."""
    return token_quant(silu_mul(x))


def fp8_token_plain(x):
    """The activation as it is (no activation, not gated), FP8 e4m3fn per token: a W8A8 GEMM's input."""
    return token_quant(x.float())


def mx_quant(y):
    """MXFP8: blocks of 32, E8M0 scale 2^(floor(log2 amax) - 8) (OCP MX), e4m3fn values."""
    g = y.unflatten(-1, (y.shape[-1] // 32, 32))
    amax = g.abs().amax(dim=-1, keepdim=True).clamp(min=2.0**-126)
    e = torch.floor(torch.log2(amax)) - 8
    q = (g * torch.exp2(-e)).clamp(-FP8_MAX, FP8_MAX).to(FP8).flatten(-2)
    return q, (e.squeeze(-1) + 127).to(torch.uint8)


def mxfp8_plain(x):
    return mx_quant(x.float())


def swiglu_oai_mxfp8(x, alpha=1.702, limit=7.0):
    """gpt-oss SwiGLU on [gate | up]: gate clamped above at 7, up to [-7, 7], gate * sigmoid(alpha gate) * (up + 1)."""
    h = x.shape[-1] // 2
    g = x[..., :h].float().clamp(max=limit)
    u = x[..., h:].float().clamp(-limit, limit)
    return mx_quant(g * torch.sigmoid(alpha * g) * (u + 1))


def silu_fp8_masked(x, counts):
    """MoE MASKED [E, max_m, 2H]: every slot row computed (the reference has no row skipping), rows past each
    expert's count zeroed in the scales."""
    q, s = group_quant(silu_mul(x))
    valid = torch.arange(x.shape[1], device=x.device)[None, :] < counts[:, None]
    return q, s * valid[..., None]


def skewed_counts(experts, cap):
    """fq bench's skewed distribution (tools/fq/bench_case.cpp, kSkewFormula)."""
    nonempty = experts - experts // 8
    out = []
    for e in range(experts):
        r = e - e // 8
        out.append(0 if e % 8 == 7 else (cap if nonempty == 1 else cap - 6 * cap * r // (7 * (nonempty - 1))))
    return out


# problem name (as perf_report.py joins it with fq bench's results), function, widths H, tokens T, gated.
PROBLEMS = [
    ("silu-fp8-token", silu_fp8_token, [2048, 7168, 18432], [1, 16, 128, 256, 512, 1024, 4096], True),
    ("fp8-token-plain", fp8_token_plain, [7168], [1, 16, 128, 1024], False),
    ("silu-fp8-g128-row", silu_fp8_row, [2048, 7168], [1, 16, 128, 1024, 4096, 16384], True),
    ("silu-fp8-g128-col", silu_fp8_col, [2048, 7168], [1, 16, 128, 1024, 4096, 16384], True),
    ("mxfp8-plain", mxfp8_plain, [7168], [1, 16, 128, 1024, 16384], False),
    ("swiglu-oai-mxfp8", swiglu_oai_mxfp8, [2048, 18432], [1, 16, 128, 1024, 16384], True),
]
QUICK_TOKENS = [1, 16, 128, 1024]


def timing(fn, inputs, iters, reps=7):
    """Time per call over `iters` calls captured in one graph, inputs rotated: median, min, max of replays."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(3):
            fn(inputs[i % len(inputs)])
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(iters):
            fn(inputs[i % len(inputs)])
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        graph.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0 / iters)
    times.sort()
    del graph
    return times[len(times) // 2], times[0], times[-1]


def rotation(nbytes, l2):
    iters = max(2, min(8000, int(4e9 // nbytes)))
    return iters, min(iters, max(2, -(-4 * l2 // nbytes)))


def compiled(fn):
    torch._dynamo.reset()
    return torch.compile(fn)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else None
    quick = "--quick" in sys.argv
    torch._dynamo.config.automatic_dynamic_shapes = False
    torch._dynamo.config.cache_size_limit = 64
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    gen = torch.Generator(device="cuda").manual_seed(0x5EED0048)
    rows = []

    def save():
        """The results so far (after every problem: a run stopped by a time limit keeps what it measured)."""
        if out:
            with open(out, "w") as f:
                json.dump(dict(device=torch.cuda.get_device_name(0), torch=torch.__version__, tool="tools/bench/bench_peers.py",
                               method="CUDA-graph replay over rotated inputs (4x L2), median (min, max) of 7 replays; "
                                      "bf16 randn inputs; torch.compile with T dynamic (mark_dynamic, "
                                      "automatic_dynamic_shapes=False), outputs returned",
                               results=rows), f, indent=1)

    print(f"{'problem':<20} {'tokens':>7} {'hidden':>6} {'peer':<14} {'us':>9} {'min-max':>15}")

    def run(problem, fn, inputs, t, h, extra=None):
        iters, _ = rotation(inputs[0].numel() * 2, l2)
        med, lo, hi = timing(fn, inputs, iters)
        row = dict(problem=problem, tokens=t, hidden=h, peer="torch.compile", us=med, us_min=lo, us_max=hi)
        row.update(extra or {})
        rows.append(row)
        print(f"{problem:<20} {t:>7} {h:>6} {'torch.compile':<14} {med:>9.2f} {lo:>7.2f}-{hi:<7.2f}", flush=True)

    for problem, fn, widths, tokens, gated in PROBLEMS:
        for h in widths:
            cfn = compiled(fn)  # one compilation per problem and width: T dynamic
            for t in (QUICK_TOKENS if quick else tokens):
                w = 2 * h if gated else h
                _, nbuf = rotation(t * w * 2, l2)
                inputs = [torch.randn(t, w, device="cuda", dtype=torch.bfloat16, generator=gen) for _ in range(nbuf)]
                for x in inputs:
                    torch._dynamo.mark_dynamic(x, 0)
                run(problem, cfn, inputs, t, h)
                del inputs
                torch.cuda.empty_cache()
            save()

    # MoE MASKED, E = 32, max_m = 1024, H = 7168, skewed counts (fq bench --moe masked --skew skewed).
    e, max_m, h = 32, 1024, 7168
    counts = torch.tensor(skewed_counts(e, max_m), device="cuda", dtype=torch.int32)
    _, nbuf = rotation(e * max_m * 2 * h * 2, l2)
    inputs = [torch.randn(e, max_m, 2 * h, device="cuda", dtype=torch.bfloat16, generator=gen) for _ in range(nbuf)]
    cfn = compiled(lambda x: silu_fp8_masked(x, counts))
    run("silu-fp8-g128-masked", cfn, inputs, max_m, h, dict(experts=e, skew="skewed", valid_rows=int(counts.sum())))
    del inputs
    torch.cuda.empty_cache()
    save()


if __name__ == "__main__":
    main()
