#!/usr/bin/env python3
"""Compares two Google Benchmark JSON runs of the same rows: before and after a change.

    scripts/bench_compare.py BEFORE.json AFTER.json [--markdown out.md] [--filter REGEX]

For every row in both runs (the median of its repetitions where there are several,
else its one time), prints the time before and after and the speed of after relative
to before (before time / after time: above 1 is faster). A summary line per algorithm
(the name's first part) gives the geometric mean and the range of that ratio for
foundry's rows and, separately, for the other rows (peers such as CUB or cuBLAS, and
cudaMemcpy): the code did not change under those, so their spread is the noise of the
two runs, which the foundry rows are to be read against.
"""

import argparse
import json
import math
import re
import sys

SUFFIX = re.compile(r"/(manual_time|real_time|process_time)$")


def medians(path):
    with open(path) as f:
        data = json.load(f)
    rows, singles = {}, {}
    for b in data.get("benchmarks", []):
        if b.get("error_occurred"):
            continue
        name = SUFFIX.sub("", b.get("run_name", b["name"]))
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                rows[name] = b["real_time"]
        else:
            singles.setdefault(name, b["real_time"])
    for name, t in singles.items():
        rows.setdefault(name, t)
    return rows


def is_foundry(name):
    parts = name.split("/")
    return len(parts) > 1 and (parts[1] == "foundry" or parts[1].startswith("foundry_"))


def summary(ratios):
    if not ratios:
        return "-"
    g = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    return f"{g:.3f} ({min(ratios):.3f}-{max(ratios):.3f}, {len(ratios)} rows)"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--markdown", default="-", help="output (default: standard output)")
    parser.add_argument("--filter", default="", help="only rows whose name matches this regular expression")
    args = parser.parse_args()
    before, after = medians(args.before), medians(args.after)
    names = sorted(n for n in before if n in after and re.search(args.filter, n))
    if not names:
        sys.exit("bench_compare: the two runs share no row")
    lines = ["| row | before | after | after speed / before |", "|---|---:|---:|---:|"]
    groups = {}
    for n in names:
        ratio = before[n] / after[n]
        lines.append(f"| {n} | {before[n]:.2f} | {after[n]:.2f} | {ratio:.3f} |")
        groups.setdefault(n.split("/")[0], ([], []))[0 if is_foundry(n) else 1].append(ratio)
    lines += ["", "| algorithm | foundry rows: geomean (range) | other rows: geomean (range) |", "|---|---|---|"]
    for algorithm, (mine, others) in sorted(groups.items()):
        lines.append(f"| {algorithm} | {summary(mine)} | {summary(others)} |")
    text = "\n".join(lines) + "\n"
    if args.markdown == "-":
        sys.stdout.write(text)
    else:
        with open(args.markdown, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
