"""Markdown tables for docs/perf.md from the JSON that tools/gpu-check.sh leaves under $OUT:
bench.json, bench-pdl.json, bench-block2d.json, bench-sweeps.json, bench-moe.json,
peers-fq.json, variants-*.json (`fq bench --variants a,b,... --json`; all `fq bench --json`), peers.json (tools/bench/bench_peers.py), host-overhead.json
(fq_bench_host_overhead) and host-overhead-py.json (tools/bench/bench_host_overhead.py). Each table is printed
when its file is there. Results `fq bench` skipped or failed (status other than "ok") are left out. Every time is
the median of graph replays; "copy" is the fastest of fq bench's three same-bytes copies, named beside it.
Usage: python3 tools/bench/perf_report.py DIR > tables.md"""
import json
import sys
from pathlib import Path


def load(d, name):
    p = Path(d) / name
    if not p.exists():
        return None
    doc = json.loads(p.read_text())
    if "results" in doc and name != "peers.json":
        doc["results"] = [r for r in doc["results"] if r.get("status", "ok") == "ok"]
    return doc


def scheme_label(r):
    given = " (given global amax)" if r.get("global_amax") == "given" else ""
    return r["scheme"] + (str(r["group"]) if r["scheme"] == "per_group" else "") + given


def print_sweep_table(results):
    print("| scheme | activation | out | scales | layout | variant | tokens | hidden | us | copy us | % of copy |")
    print("|---|---|---|---|---|---|---:|---:|---:|---:|---:|")
    for r in results:
        variant = r["variant"] + ("+pdl" if r.get("pdl") else "")
        print(f"| {scheme_label(r)} | {r['activation']} | {r['out_type']} | {r['scale_type']} | {r['layout']} | {variant} | "
              f"{r['tokens']} | {r['hidden']} | {r['us']:.2f} | {r['copy_us']:.2f} | {r['pct_of_copy']:.1f}% |")


def print_moe_table(doc, results):
    """MoE layouts: one row per measurement, bytes of valid rows only."""
    print()
    print("MoE layouts (`fq bench --moe masked|contiguous`): bytes, GB/s and the copy count valid rows only; "
          "max_m / M is --tokens (masked: rows per expert slot, input [E, max_m, 2H]; contiguous: stacked rows). "
          f"Skew: {doc.get('skew_formula', '')}.")
    print()
    print("| layout | scheme | scales | act | E | H | max_m / M | skew | valid rows | us | GB/s | copy us | % of copy |")
    print("|---|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    order = lambda r: (r["moe"], scheme_label(r), r["layout"], r["activation"], r.get("outputs", "row"), r["experts"],
                       r["hidden"], r["tokens"], r["skew"])
    for r in sorted(results, key=order):
        scheme = scheme_label(r) + ("" if r.get("outputs", "row") == "row" else " " + outputs_label(r))
        print(f"| {r['moe']} | {scheme} | {r['layout']} | {r['activation']} | {r['experts']} | {r['hidden']} | "
              f"{r['tokens']} | {r['skew']} | {r['valid_rows']} | {r['us']:.2f} | {r['gbps']:.0f} | {r['copy_us']:.2f} | "
              f"{r['pct_of_copy']:.1f}% |")


def outputs_label(r):
    if r["outputs"] == "row":
        return "row"
    return f"{r['outputs']} (block {r['col_block']}{', transposed' if r['col_transpose'] else ''})"


def pass_shape(r):
    """What a rowwise and a columnwise measurement of the same problem share."""
    return (r.get("moe", "none"), r.get("experts", 0), r.get("skew", ""), r["tokens"], r["hidden"], scheme_label(r),
            r["layout"], r["activation"], r["out_type"], r["variant"], r.get("pdl", 0))


def pass_groups(results):
    """{pass_shape + (col block, transposed): {outputs: result}} of the columnwise measurements."""
    groups = {}
    for r in results:
        if r.get("outputs", "row") != "row":
            groups.setdefault(pass_shape(r) + (r["col_block"], r["col_transpose"]), {})[r["outputs"]] = r
    return groups


def print_pass_table(results):
    """Rowwise + columnwise: one call writing both (`both`) against a rowwise call then a columnwise call
    (`col+row-separate`), same bytes; `row` and `col` alone where measured."""
    rows = {pass_shape(r): r for r in results if r.get("outputs", "row") == "row"}
    pairs = [(k, v) for k, v in sorted(pass_groups(results).items()) if "both" in v and "col+row-separate" in v]
    if not pairs:
        return
    print()
    print("Rowwise and columnwise outputs: one pass (`--outputs both`, one call) against two passes "
          "(`col+row-separate`: a rowwise call, then a columnwise call, in the same graph); both count the same "
          "bytes (input once, both outputs). `row` and `col`: each output alone.")
    print()
    print("| scheme | scales | tokens | hidden | col block | transposed | bytes | row us | col us | one pass us "
          "| two passes us | one pass GB/s | % of copy (one / two) | two / one |")
    print("|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for k, v in pairs:
        one, two = v["both"], v["col+row-separate"]
        row, col = rows.get(k[:-2]), v.get("col")
        row_us = f"{row['us']:.2f}" if row else "-"
        col_us = f"{col['us']:.2f}" if col else "-"
        moe = "" if one.get("moe", "none") == "none" else f" {one['moe']} E={one['experts']} {one['skew']}"
        print(f"| {scheme_label(one)}{moe} | {one['layout']} | {one['tokens']} | {one['hidden']} | {one['col_block']} | "
              f"{'yes' if one['col_transpose'] else 'no'} | {one['bytes']} | {row_us} | {col_us} | {one['us']:.2f} | "
              f"{two['us']:.2f} | {one['gbps']:.0f} | {one['pct_of_copy']:.1f}% / {two['pct_of_copy']:.1f}% | "
              f"{two['us'] / one['us']:.2f}x |")


def print_moe_sweeps(moe):
    results = moe["results"]
    print()
    print(f"Issue 5 sweeps (`fq bench --file tools/fq/sweeps-moe.txt`), device: {moe['device']}")
    in_moe = [r for r in results if r.get("moe", "none") != "none"]
    if in_moe:
        print_moe_table(moe, in_moe)
    print_pass_table(results)
    compared = {k[:-2] for k in pass_groups(results)}  # rowwise rows already in the pass table
    other = [r for r in results if r.get("moe", "none") == "none" and r.get("outputs", "row") == "row"
             and pass_shape(r) not in compared]
    if other:
        print()
        print("The other rows of the file (no MoE layout, rowwise only):")
        print()
        print_sweep_table(other)


def main(d):
    bench, pdl, block2d, sweeps, moe, peers_fq, peers = (load(d, n) for n in (
        "bench.json", "bench-pdl.json", "bench-block2d.json", "bench-sweeps.json",
        "bench-moe.json", "peers-fq.json", "peers.json"))
    if bench:
        print_main_tables(bench, pdl, block2d, sweeps)
    if moe:
        print_moe_sweeps(moe)
    if peers_fq:
        print_peer_tables(peers_fq, peers)
        print_other_problems(peers_fq)
    for path in sorted(Path(d).glob("variants-*.json")):
        print_variant_table(load(d, path.name))
    c_calls, py_calls = load(d, "host-overhead.json"), load(d, "host-overhead-py.json")
    if c_calls or py_calls:
        print_host_overhead(c_calls, py_calls)


def print_host_overhead(c_calls, py_calls):
    """Host time per call at T tokens (median of eager calls), each against the empty kernel launch of its run."""
    print()
    print("Host overhead per call (" + " / ".join(f"{doc['device']}" for doc in (c_calls, py_calls) if doc)
          + "): the median of eager calls, silu_and_mul 7168 -> e4m3 per-group 128 at T tokens; "
          "CUDA calls time the enqueue, host-backend calls at T = 0 the synchronous call. "
          "Goals: fqPlanExecute <= 0.5 us and fqQuantize <= 1.5 us above the empty launch, Python <= 10 us in all.")
    print()
    print("| layer | call | backend | T | median us | p10 us | p90 us | above empty launch us |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for layer, doc in (("C", c_calls), ("Python", py_calls)):
        if not doc:
            continue
        empty = next((r["median_us"] for r in doc["results"] if r["name"] == "empty_launch"), None)
        for r in doc["results"]:
            if r["backend"] == "host" and r["tokens"] > 0:
                continue  # the reference's compute, not the cost of a call
            above = f"{r['median_us'] - empty:+.2f}" if empty is not None and r["backend"] == "cuda" and \
                r["name"] != "empty_launch" else ""
            print(f"| {layer} | {r['name']} | {r['backend']} | {r['tokens']} | {r['median_us']:.2f} | "
                  f"{r['p10_us']:.2f} | {r['p90_us']:.2f} | {above} |")


def copy_label(r):
    """The copy a result is compared with, and which of fq bench's three it was (older JSON: memcpy)."""
    return f"{r['copy_us']:.2f} ({r.get('copy', 'memcpy')})"


def us_range(r):
    return f"{r['us']:.2f} ({r['us_min']:.2f}-{r['us_max']:.2f})" if "us_min" in r else f"{r['us']:.2f}"


def problem_of(r):
    """The name tools/bench/bench_peers.py gives the problem of an fq bench result (None: not one of issue 48's)."""
    if r.get("moe", "none") != "none" or r.get("outputs", "row") != "row":
        return "silu-fp8-g128-masked" if r.get("moe") == "masked" and r.get("skew") == "skewed" else None
    if r["scheme"] == "per_group" and r["activation"] == "silu":
        return "silu-fp8-g128-" + ("row" if r["layout"] == "row" else "col")
    if r["scheme"] == "mxfp8" and r["activation"] == "identity":
        return "mxfp8-plain"
    if r["scheme"] == "mxfp8" and r["activation"] == "swiglu_oai":
        return "swiglu-oai-mxfp8"
    if r["scheme"] == "per_token" and r["activation"] in ("silu", "identity"):
        return "silu-fp8-token" if r["activation"] == "silu" else "fp8-token-plain"
    return None


def print_peer_tables(fq, peers):
    """Issue 48's problems: fq (the dispatcher's choice), the copy and each peer, one table per problem."""
    by_peer = {}
    for p in (peers or {}).get("results", []):
        by_peer.setdefault((p["problem"], p["tokens"], p["hidden"]), []).append(p)
    print()
    print(f"Issue 48's problems, fq against its peers, device: {fq['device']}"
          + (f"; PyTorch {peers['torch']}" if peers else "; no peers measured") + f"; input: {fq.get('input', 'constant')}.")
    print("us: median (fastest-slowest) of 7 graph replays; copy: the fastest same-bytes copy (which one in brackets); "
          "vs best peer: the best peer's time / fq's (above 1: fq is faster).")
    problems = {}
    for r in fq["results"]:
        name = problem_of(r)
        if name:
            problems.setdefault(name, []).append(r)
    for name, results in sorted(problems.items()):
        print()
        print(f"**{name}**")
        print()
        print("| scales | T | H | copy us (which) | fq us | fq % of copy | kernel | torch.compile us | vs best peer |")
        print("|---|---:|---:|---:|---:|---:|---|---:|---:|")
        for r in sorted(results, key=lambda r: (r["layout"], r["hidden"], r["tokens"])):
            ps = by_peer.get((name, r["tokens"], r["hidden"]), [])
            comp = next((p for p in ps if p["peer"] == "torch.compile"), None)
            best = min((p["us"] for p in ps), default=None)
            compiled = f"{comp['us']:.2f}" if comp else "-"  # "-": no peer measured at this shape
            ratio = f"{best / r['us']:.2f}x" if best else "-"
            print(f"| {r['layout']} | {r['tokens']} | {r['hidden']} | {copy_label(r)} | {us_range(r)} | "
                  f"{r['pct_of_copy']:.1f}% | {r['kernel']} | {compiled} | {ratio} |")


def problem_label(r):
    """One line naming a problem that has no peer: scheme, activation, MoE layout, outputs."""
    parts = [scheme_label(r), r["activation"]]
    if r.get("moe", "none") != "none":
        parts.append(f"{r['moe']} E = {r['experts']} {r['skew']} ({r['valid_rows']} valid rows)")
    if r.get("outputs", "row") != "row":
        parts.append(f"outputs {r['outputs']}")
    return ", ".join(parts)


def print_other_problems(fq):
    """The rest of issue 48's table: problems no peer runs on this device, fq against the copy."""
    other = [r for r in fq["results"] if problem_of(r) is None]
    if not other:
        return
    print()
    print("**Problems without a peer on this device** (fq against the same-bytes copy; MoE: the valid rows' bytes)")
    print()
    print("| problem | scales | T | H | copy us (which) | fq us | fq % of copy | kernel |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for r in other:
        print(f"| {problem_label(r)} | {r['layout']} | {r['tokens']} | {r['hidden']} | {copy_label(r)} | {us_range(r)} | "
              f"{r['pct_of_copy']:.1f}% | {r['kernel']} |")


def print_variant_table(doc):
    """An `fq bench --variants a,b,...` run (variants-*.json): each shape with every variant's time side by side."""
    variants, shapes = [], {}
    for r in doc["results"]:
        if r["variant"] not in variants:
            variants.append(r["variant"])
        key = (problem_label(r), r["layout"], r["tokens"], r["hidden"])
        shapes.setdefault(key, {})[r["variant"]] = r
    print()
    print(f"Kernel variants side by side (`fq bench --variants {','.join(variants)}`), device: {doc['device']}; "
          f"input: {doc.get('input', 'constant')}; us: median (fastest-slowest) of the graph replays, % of the copy.")
    print()
    print("| problem | scales | T | H | copy us (which) | " + " | ".join(f"{v} us" for v in variants) + " |")
    print("|---|---|---:|---:|---:|" + "---:|" * len(variants))
    for (label, layout, t, h), by in shapes.items():
        first = next(iter(by.values()))
        cells = [f"{us_range(by[v])} ({by[v]['pct_of_copy']:.0f}%)" if v in by else "-" for v in variants]
        print(f"| {label} | {layout} | {t} | {h} | {copy_label(first)} | " + " | ".join(cells) + " |")


def print_main_tables(bench, pdl, block2d, sweeps):
    rows = {}
    for r in bench["results"]:
        rows.setdefault((r["tokens"], r["hidden"]), {})[r["layout"]] = r
    print(f"Device: {bench['device']}; input: {bench.get('input', 'constant')}")
    print()
    print("| tokens | hidden | bytes | copy us (which) | fq row us | fq col us | GB/s (row) | % of copy (row / col) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (t, h), lay in sorted(rows.items()):
        r, c = lay.get("row"), lay.get("col")
        print(f"| {t} | {h} | {r['bytes']} | {copy_label(r)} | {r['us']:.2f} | {c['us'] if c else 0:.2f} | "
              f"{r['gbps']:.0f} | {r['pct_of_copy']:.1f}% / {c['pct_of_copy'] if c else 0:.1f}% |")
    if pdl:
        print()
        print("With programmatic dependent launch allowed (`fq bench --pdl 1`, row-major scales):")
        print()
        print("| tokens | hidden | copy us | fq us | % of copy |")
        print("|---:|---:|---:|---:|---:|")
        for r in pdl["results"]:
            print(f"| {r['tokens']} | {r['hidden']} | {r['copy_us']:.2f} | {r['us']:.2f} | {r['pct_of_copy']:.1f}% |")
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
        print_sweep_table(sweeps["results"])


if __name__ == "__main__":
    main(sys.argv[1])
