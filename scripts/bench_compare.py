#!/usr/bin/env python3
"""Compares two Google Benchmark JSON runs of the same rows: before and after a change.

    scripts/bench_compare.py BEFORE.json AFTER.json [--markdown out.md] [--filter REGEX]

For every row in both runs (the median of its repetitions where there are several,
else its one time), prints the time before and after and the speed of after relative
to before (before time / after time: above 1 is faster). A summary line per algorithm
(the name's first part) gives the geometric mean and the range of that ratio for
foundry's rows (naive twins included) and, separately, for the other rows (peers such
as CUB or cuBLAS, and cudaMemcpy): the code did not change under those, so their spread
is the noise of the two runs, which the foundry rows are to be read against. A last
column divides each foundry row's ratio by that of every other row with the same
algorithm and arguments (cuBLAS at the same shape, say), which takes the machine's
drift between the runs out.
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
    """foundry's own rows, its naive twins included (library code that a change may touch)."""
    parts = name.split("/")
    return len(parts) > 1 and any(parts[1] == v or parts[1].startswith(v + "_") for v in ("foundry", "naive"))


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
    ratios = {}
    for n in names:
        ratios[n] = before[n] / after[n]
        lines.append(f"| {n} | {before[n]:.2f} | {after[n]:.2f} | {ratios[n]:.3f} |")
        groups.setdefault(n.split("/")[0], ([], [], []))[0 if is_foundry(n) else 1].append(ratios[n])
    # A foundry row against the peer rows of its algorithm and arguments (same name but
    # the variant): its change divided by theirs, the machine's drift taken out.
    for n in names:
        if not is_foundry(n):
            continue
        parts = n.split("/")
        peers = [r for m, r in ratios.items()
                 if not is_foundry(m) and m.split("/")[0] == parts[0] and m.split("/")[2:] == parts[2:]]
        for r in peers:
            groups[parts[0]][2].append(ratios[n] / r)
    lines += ["", "| algorithm | foundry rows: geomean (range) | other rows: geomean (range) "
              "| foundry rows over the other rows of the same arguments |", "|---|---|---|---|"]
    for algorithm, (mine, others, relative) in sorted(groups.items()):
        lines.append(f"| {algorithm} | {summary(mine)} | {summary(others)} | {summary(relative)} |")
    text = "\n".join(lines) + "\n"
    if args.markdown == "-":
        sys.stdout.write(text)
    else:
        with open(args.markdown, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
