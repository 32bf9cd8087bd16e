"""GB/s against tokens per variant from `fq bench --json` output, one panel per hidden size, with the
same-bytes copy of the same run dashed. Used by `fq bench --plot F.png`; also runs on its own:
    python3 plot_bench.py bench.json out.png
Needs matplotlib (python3 -m pip install matplotlib)."""
import json
import sys


def main(json_path, png_path):
    try:
        import matplotlib
    except ImportError:
        sys.exit(f"plot_bench.py: matplotlib is not installed for {sys.executable}; install it with:\n"
                 f"    {sys.executable} -m pip install matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    doc = json.load(open(json_path))
    results = [r for r in doc["results"] if r.get("status", "ok") == "ok"]
    if not results:
        sys.exit("plot_bench.py: no measured results in " + json_path)
    hiddens = sorted({r["hidden"] for r in results})
    fig, axes = plt.subplots(1, len(hiddens), figsize=(5 * len(hiddens), 4), squeeze=False, sharey=True)
    for ax, h in zip(axes[0], hiddens):
        rows = [r for r in results if r["hidden"] == h]
        series = {}
        for r in rows:
            label = " ".join(str(r.get(k, "")) for k in ("scheme", "activation", "out_type", "layout", "variant"))
            label += " pdl" if r.get("pdl") else ""
            if r.get("moe", "none") != "none":  # fq bench --moe: tokens is max_m (masked) or M (contiguous)
                label += f" {r['moe']} E={r['experts']} {r['skew']}"
            if r.get("outputs", "row") != "row":
                label += f" {r['outputs']} block {r['col_block']}" + (" T" if r.get("col_transpose") else "")
            series.setdefault(label, []).append((r["tokens"], r["gbps"]))
        for label, pts in sorted(series.items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        copy = sorted({(r["tokens"], r["copy_gbps"]) for r in rows})
        ax.plot([c[0] for c in copy], [c[1] for c in copy], "k--", label="same-bytes copy")
        ax.set_xscale("log", base=2)
        ax.set_title(f"hidden {h}")
        ax.set_xlabel("tokens")
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("effective GB/s")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle(doc.get("device", ""))
    fig.tight_layout()
    fig.savefig(png_path, dpi=120)
    print(f"wrote {png_path}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
