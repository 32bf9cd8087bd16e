#!/usr/bin/env python3
"""Stall samples of SASS instruction ranges, from Nsight Compute's source page.

Reads the CSV that `ncu -i REPORT --page source --csv --print-source sass` writes (gzipped or not) and prints,
for each range [a, b) of instruction indices (rows of the CSV after its two header lines), its share of the
kernel's samples and its five largest stall reasons. Find the cut points with --list: each instruction's index,
samples, executions and text (the K loop starts at its first QGMMA's stage wait, the epilogue after its back branch).
  tools/lab/ncu_regions.py ncu-512-sass.csv.gz 0,170,473,602,4077,5044,6360
  tools/lab/ncu_regions.py ncu-512-sass.csv.gz --list
"""
import csv
import gzip
import sys


def main():
    path, cuts = sys.argv[1], sys.argv[2]
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        rows = list(csv.reader(f))
    header, data = rows[1], rows[2:]
    col = {h: i for i, h in enumerate(header)}
    stalls = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    samples = lambda r: int(r[col["# Samples"]] or 0)
    if cuts == "--list":
        for n, r in enumerate(data):
            print(f"{n:5d} {samples(r):6d} {r[col['Instructions Executed']]:>9s}  {r[col['Source']].strip()}")
        return
    total = sum(samples(r) for r in data)
    bounds = [int(x) for x in cuts.split(",")]
    for a, b in zip(bounds, bounds[1:]):
        part = data[a:b]
        n = sum(samples(r) for r in part)
        by_reason = sorted(((sum(int(r[col[h]] or 0) for r in part), h[len("stall_"):]) for h in stalls), reverse=True)
        print(f"[{a},{b}) samples {n} ({100 * n / total:.1f}%)", " ".join(f"{h}:{v}" for v, h in by_reason[:5]))


if __name__ == "__main__":
    main()
