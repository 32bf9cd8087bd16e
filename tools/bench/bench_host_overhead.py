"""Host time per call of the Python layer at T = 1 (a benchmark, not a test: it asserts nothing about the numbers).

The problem is fq_bench_host_overhead's: silu_and_mul of bf16 [T, 2 x 7168] to e4m3 [T, 7168], per-group 128. Each
row is the median (and 10th / 90th percentiles) of --calls eager calls, after 100 untimed ones; on CUDA the wall
time to return from the call (the work is enqueued), the stream synchronised every 256 calls outside the timing.

  fq.quantize            the public call (its descriptor, layouts and plan cached after the first call); on the
                         host backend on a NumPy array, and again on a torch CPU tensor (the tensor's own key)
  fq.quantize uncached   the same with fusedquant.clear_cache() before each call (descriptor, layouts, queries
                         and plan made again: what every call cost before the cache; --calls / 10 calls)
  Plan.run               a fusedquant.Plan made once, run on preallocated buffers: the floor of the binding
  torch.ops.fusedquant.quantize, fq.silu_and_mul_quant
                         fusedquant's torch operator (config string) and its functional name, where the package
                         registers them (fusedquant.torch_ops, issue 47 item 2); with its C++ kernel where built
  torch.ops.fusedquant.quantize_out, fq.per_tensor_quant (static scale)
                         the out= form into buffers made once, and vLLM's static per-tensor FP8 (a scale tensor:
                         silu_and_mul is not part of it, the input's whole row is quantized)
  aten.silu              torch.ops.aten.silu on the same input: what a torch op's dispatch costs
  empty_launch           torch.cuda._sleep(0): a kernel launch through torch's binding, the floor in Python

With a CUDA device (and torch) the inputs are torch CUDA tensors; the host backend's rows follow, on NumPy arrays
(and torch CPU tensors for the torch operators, where torch is installed), where T = 1 includes the reference's
compute and T = 0 shows the layer's cost alone.
Usage: python3 tools/bench/bench_host_overhead.py [--json FILE] [--calls N] [--host-only]
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bindings" / "python"))
import fusedquant as fq  # noqa: E402

HIDDEN, GROUP = 7168, 128
KW = dict(activation="silu", gate_layout="split", group_size=GROUP)


def time_calls(call, calls, sync=lambda: None):
    for _ in range(100):
        call()
    sync()
    us = []
    for i in range(calls):
        if i % 256 == 0:
            sync()
        t0 = time.perf_counter_ns()
        call()
        us.append((time.perf_counter_ns() - t0) / 1e3)
    sync()
    us.sort()
    q = lambda f: us[int(f * (len(us) - 1))]  # noqa: E731
    return {"calls": calls, "p10_us": q(0.1), "median_us": statistics.median(us), "p90_us": q(0.9)}


def fusedquant_torch_ops():
    """(name, callable) of fusedquant's torch operator and its functional name for this problem, where the package
    has them (fusedquant.torch_ops registers torch.ops.fusedquant.*); [] otherwise."""
    try:
        import fusedquant.torch_ops  # noqa: F401
        import torch
        op = torch.ops.fusedquant.quantize
    except (ImportError, AttributeError, RuntimeError) as e:
        print(f"bench_host_overhead.py: no torch.ops.fusedquant ({e})", file=sys.stderr)
        return []
    config = f"activation=silu;gate_layout=split;group_size={GROUP}"
    buffers, scale = {}, {}

    def quantize_out(x):  # into buffers made once per input (the out= form's use: CUDA graphs, static buffers)
        if id(x) not in buffers:
            buffers[id(x)] = [t.clone() for t in op(x, config)[:2]]
        out, scales = buffers[id(x)]
        torch.ops.fusedquant.quantize_out(x, config, out, scales, None, None)

    def static_scale(x):  # vLLM's static FP8: one scale tensor, made once per input's device
        if x.device not in scale:
            scale[x.device] = torch.ones(1, device=x.device)
        return fq.per_tensor_quant(x, scale[x.device])
    return [("torch.ops.fusedquant.quantize", lambda x: op(x, config)),
            ("fq.silu_and_mul_quant", lambda x: fq.silu_and_mul_quant(x, group_size=GROUP)),
            ("torch.ops.fusedquant.quantize_out", quantize_out),
            ("fq.per_tensor_quant (static scale)", static_scale)]


def cuda_rows(calls):
    import torch
    x = torch.randn(1, 2 * HIDDEN, device="cuda", dtype=torch.bfloat16)
    sync = torch.cuda.synchronize
    rows = []

    def add(name, call, n=calls):
        rows.append({"backend": "cuda", "name": name, "tokens": 1, **time_calls(call, n, sync)})

    add("empty_launch", lambda: torch.cuda._sleep(0))
    add("aten.silu", lambda: torch.ops.aten.silu(x))
    add("fq.quantize", lambda: fq.quantize(x, **KW))

    def uncached():
        fq.clear_cache()
        fq.quantize(x, **KW)
    add("fq.quantize uncached", uncached, max(calls // 10, 1))
    h = fq.Handle(fq.Backend.CUDA, torch.cuda.current_device())
    desc = fq.QuantDesc(**KW)
    plan = fq.Plan(h, desc, fq.TensorLayout("bf16", 1, 2 * HIDDEN), fq.TensorLayout("fp8_e4m3fn", 1, HIDDEN))
    y = torch.empty(1, HIDDEN, device="cuda", dtype=torch.uint8)
    s = torch.empty(plan.scale_buffer_size, device="cuda", dtype=torch.uint8)
    stream = torch.cuda.current_stream().cuda_stream
    add("Plan.run", lambda: plan.run(x.data_ptr(), y.data_ptr(), s.data_ptr(), plan.scale_buffer_size, 0, 0, stream))
    for name, fn in fusedquant_torch_ops():
        try:
            add(name, lambda fn=fn: fn(x))
        except Exception as e:  # say so, and measure the rest
            print(f"bench_host_overhead.py: {name} not timed: {e}", file=sys.stderr)
    return torch.cuda.get_device_name(), rows


def host_rows(calls):
    import numpy as np
    rows, torch_ops = [], fusedquant_torch_ops() if "torch" in sys.modules else []
    h = fq.Handle(fq.Backend.HOST)
    for tokens in (1, 0):
        x = np.full((tokens, 2 * HIDDEN), 0x3F80, np.uint16)  # 1.0 in bf16
        add = lambda name, call, n=calls: rows.append(  # noqa: E731
            {"backend": "host", "name": name, "tokens": tokens, **time_calls(call, n)})
        add("fq.quantize", lambda: fq.quantize(x, in_dtype="bf16", **KW))

        def uncached():
            fq.clear_cache()
            fq.quantize(x, in_dtype="bf16", **KW)
        add("fq.quantize uncached", uncached, max(calls // 10, 1))
        plan = fq.Plan(h, fq.QuantDesc(**KW), fq.TensorLayout("bf16", tokens, 2 * HIDDEN),
                       fq.TensorLayout("fp8_e4m3fn", tokens, HIDDEN))
        y, s = np.empty((tokens, HIDDEN), np.uint8), np.empty(max(plan.scale_buffer_size, 1), np.uint8)
        add("Plan.run", lambda: plan.run(x.ctypes.data, y.ctypes.data, s.ctypes.data, plan.scale_buffer_size))
        if "torch" in sys.modules:  # the same input as a torch CPU tensor
            import torch
            xt = torch.from_numpy(x).view(torch.bfloat16)
            add("fq.quantize (torch tensor)", lambda: fq.quantize(xt, **KW))
            for name, fn in torch_ops:
                add(name, lambda fn=fn: fn(xt))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json")
    ap.add_argument("--calls", type=int, default=10000)
    ap.add_argument("--host-only", action="store_true")
    args = ap.parse_args()
    device, rows = "host only", []
    try:
        import torch
        cuda = torch.cuda.is_available() and not args.host_only
    except ImportError:
        cuda = False
    if cuda:
        device, rows = cuda_rows(args.calls)
    rows += host_rows(args.calls)
    print(f"Python host time per call, silu_and_mul {HIDDEN} -> e4m3 g{GROUP} ({device}; {args.calls} calls)")
    print(f"{'backend':8} {'call':34} {'T':>3} {'p10 us':>10} {'median us':>10} {'p90 us':>10}")
    for r in rows:
        print(f"{r['backend']:8} {r['name']:34} {r['tokens']:3} {r['p10_us']:10.2f} {r['median_us']:10.2f} "
              f"{r['p90_us']:10.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"benchmark": "host_overhead_python", "device": device,
                                               "fusedquant": fq.library_path and str(fq.library_path),
                                               "results": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
