"""Markdown tables for docs/perf.md from the JSON that tools/gpu-check.sh leaves under $OUT:
bench.json, bench-pdl.json, bench-hwexp.json, bench-block2d.json (all `fq bench --json`), bench-torch.json
(tools/bench_torch.py). Results `fq bench` skipped (status other than "ok") are left out.
Usage: python3 tools/perf_report.py DIR > tables.md"""
import json
import sys
from pathlib import Path


def load(d, name):
    p = Path(d) / name
    if not p.exists():
        return None
    doc = json.loads(p.read_text())
    if "results" in doc and name != "bench-torch.json":
        doc["results"] = [r for r in doc["results"] if r.get("status", "ok") == "ok"]
    return doc


def main(d):
    bench, pdl, hwexp, torch, block2d, sweeps = (load(d, n) for n in (
        "bench.json", "bench-pdl.json", "bench-hwexp.json", "bench-torch.json", "bench-block2d.json", "bench-sweeps.json"))
    peers = {(r["tokens"], r["hidden"]): r for r in (torch or {}).get("results", [])}
    rows = {}
    for r in bench["results"]:
        rows.setdefault((r["tokens"], r["hidden"]), {})[r["layout"]] = r
    print(f"Device: {bench['device']}" + (f"; PyTorch {torch['torch']}" if torch else ""))
    print()
    print("| tokens | hidden | bytes | copy us | fq row us | fq col us | GB/s (row) | % of copy (row / col) "
          "| eager us | compile us | fq vs compile |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (t, h), lay in sorted(rows.items()):
        r, c = lay.get("row"), lay.get("col")
        p = peers.get((t, h))
        has_comp = p and p["compile_us"] == p["compile_us"]  # NaN: not compiled for this shape
        eager = f"{p['eager_us']:.2f}" if p else "-"
        comp = f"{p['compile_us']:.2f}" if has_comp else "-"
        ratio = f"{p['compile_us'] / r['us']:.2f}x" if has_comp else "-"
        print(f"| {t} | {h} | {r['bytes']} | {r['copy_us']:.2f} | {r['us']:.2f} | {c['us'] if c else 0:.2f} | "
              f"{r['gbps']:.0f} | {r['pct_of_copy']:.1f}% / {c['pct_of_copy'] if c else 0:.1f}% | {eager} | {comp} | {ratio} |")
    if pdl:
        print()
        print("With programmatic dependent launch allowed (`fq bench --pdl 1`, row-major scales):")
        print()
        print("| tokens | hidden | copy us | fq us | % of copy |")
        print("|---:|---:|---:|---:|---:|")
        for r in pdl["results"]:
            print(f"| {r['tokens']} | {r['hidden']} | {r['copy_us']:.2f} | {r['us']:.2f} | {r['pct_of_copy']:.1f}% |")
    if hwexp:
        print()
        print("What the portable exponential costs (`sm90.group` against the benchmark-only `sm90.group.hwexp`, "
              "which uses the MUFU exponential and is not bit-exact):")
        print()
        print("| tokens | hidden | portable exp us | hardware exp us | cost |")
        print("|---:|---:|---:|---:|---:|")
        by = {}
        for r in hwexp["results"]:
            by.setdefault((r["tokens"], r["hidden"]), {})[r["variant"]] = r
        for (t, h), v in sorted(by.items()):
            a, b = v["sm90.group"]["us"], v["sm90.group.hwexp"]["us"]
            print(f"| {t} | {h} | {a:.2f} | {b:.2f} | {100 * (a / b - 1):.0f}% |")
    if block2d:
        print()
        print("BLOCK_2D weight quantization (`fq bench --scheme block2d --act identity --not-gated --layouts col`: "
              "a bf16 [rows, cols] weight to e4m3fn with one fp32 scale per 128x128 tile):")
        print()
        print("| rows | cols | kernel | bytes | us | GB/s | % of copy |")
        print("|---:|---:|---|---:|---:|---:|---:|")
        for r in block2d["results"]:
            print(f"| {r['tokens']} | {r['hidden']} | {r['kernel']} | {r['bytes']} | {r['us']:.2f} | {r['gbps']:.0f} | "
                  f"{r['pct_of_copy']:.1f}% |")

    if sweeps:
        print()
        print("Every sweep of `tools/fq/sweeps.txt` (`fq bench --file`): schemes, activations, layouts, variants:")
        print()
        print("| scheme | activation | out | scales | layout | variant | tokens | hidden | us | copy us | % of copy |")
        print("|---|---|---|---|---|---|---:|---:|---:|---:|---:|")
        for r in sweeps["results"]:
            scheme = r["scheme"] + (str(r["group"]) if r["scheme"] == "per_group" else "")
            variant = r["variant"] + ("+pdl" if r.get("pdl") else "")
            print(f"| {scheme} | {r['activation']} | {r['out_type']} | {r['scale_type']} | {r['layout']} | {variant} | "
                  f"{r['tokens']} | {r['hidden']} | {r['us']:.2f} | {r['copy_us']:.2f} | {r['pct_of_copy']:.1f}% |")


if __name__ == "__main__":
    main(sys.argv[1])
