#!/usr/bin/env python3
"""Turns foundry's Google Benchmark JSON into a Markdown report and a roofline plot.

    scripts/bench_report.py RESULTS.json [MORE.json ...] [--markdown report.md] [--plot roofline.png]

The report has the ceilings measured on the device (from the JSON context), a summary
table that pairs rows by name -- `<algorithm>/<variant>[/cold]/<args>`, the variant being
`naive`/`naive_<rung>`, `foundry`/`foundry_<rung>` or a peer (anything else) -- and a full
table with every row. The plot has two panels: a roofline (TFLOP/s against flop/byte under
the measured bandwidth and FLOP ceilings) for rows that do floating-point work, and the
achieved bandwidth of every row against the bandwidth ceilings. Without matplotlib the
report is still written and the script says the plot was skipped.
"""

import argparse
import json
import math
import os
import re
import sys

# Name parts that Google Benchmark appends and that do not identify a benchmark.
GB_SUFFIX = re.compile(r"^(manual_time|real_time|process_time|(iterations|repeats|threads|min_time|min_warmup_time):.*)$")
STANDARD_COUNTERS = {"GB/s", "TFLOP/s", "flop/byte", "pct_of_ceiling", "noise_pct", "samples"}
TIME_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
FLOP_CEILINGS = ["fp32_cuda_cores", "fp32_cublas", "tf32_tensor", "bf16_tensor", "bf16_mma_sync"]


def variant_class(variant):
    if variant == "naive" or variant.startswith("naive_"):
        return "naive"
    if variant == "foundry" or variant.startswith("foundry_"):
        return "foundry"
    return "peer"


def parse_name(name):
    """'copy/naive/cold/1048576/manual_time' -> ('copy', 'naive', 'cold', ('1048576',))."""
    parts = [p for p in name.split("/") if p and not GB_SUFFIX.match(p)]
    algorithm = parts[0] if parts else name
    variant = parts[1] if len(parts) > 1 else ""
    rest = parts[2:]
    mode = "cold" if "cold" in rest else "hot"
    rest = tuple(p for p in rest if p not in ("hot", "cold"))
    return algorithm, variant, mode, rest


def pretty_arg(arg):
    """Powers of two from 2^16 up read as 2^k (sizes); smaller values (shapes) stay as written."""
    if re.fullmatch(r"\d+", arg):
        value = int(arg)
        if value >= 65536 and value & (value - 1) == 0:
            return "2^%d" % (value.bit_length() - 1)
    return arg


def pretty_size(rest, mode):
    numeric = [pretty_arg(a) for a in rest if re.fullmatch(r"\d+", a)]
    words = [a for a in rest if not re.fullmatch(r"\d+", a)]
    text = " ".join(words + (["×".join(numeric)] if numeric else []))
    return (text + " cold").strip() if mode == "cold" else (text or "-")


def size_sort_key(rest):
    return tuple((0, int(a), "") if re.fullmatch(r"\d+", a) else (1, 0, a) for a in rest)


def load_rows(paths):
    """Rows from every file: per-iteration runs, or the median aggregate when repeated; a row
    that several files hold is taken from the last of them."""
    contexts, rows, where = [], [], {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        benchmarks = data.get("benchmarks", [])
        context = dict(data.get("context", {}))
        context["binaries"] = sorted({b["binary"] for b in benchmarks if "binary" in b})
        contexts.append(context)
        medians = {b.get("run_name"): b for b in benchmarks
                   if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median"}
        groups = sort_groups(benchmarks)
        seen, file_rows = set(), []
        for b, group in zip(benchmarks, groups):
            run_name = b.get("run_name", b.get("name", ""))
            if b.get("run_type") == "aggregate" or run_name in seen:
                continue
            seen.add(run_name)
            # Registration order within each binary, whatever order the runs took
            # (--benchmark_enable_random_interleaving).
            order = (group, b.get("family_index", len(file_rows)), b.get("per_family_instance_index", 0))
            file_rows.append((order, make_row(medians.get(run_name, b), run_name)))
        for _, row in sorted(file_rows, key=lambda item: item[0]):
            # A later file measured the row again (a newer run of the same binary): its
            # figure replaces the earlier one, in the earlier one's place.
            if row["name"] in where:
                rows[where[row["name"]]] = row
            else:
                where[row["name"]] = len(rows)
                rows.append(row)
    return contexts, rows


def sort_groups(benchmarks):
    """For each entry, the rank of the group it is sorted in, in file order: the benchmark
    binary it came from where scripts/bench.sh tagged it (`binary`), else its algorithm
    (the first name component; family indices restart in each binary, so rows of two
    binaries must not be sorted together, and an algorithm comes from one binary, except
    `copy`, whose rows from the harness and the transform binary then interleave)."""
    if benchmarks and all("binary" in b for b in benchmarks):
        groups = [b["binary"] for b in benchmarks]
    else:
        groups = [b.get("run_name", b.get("name", "")).split("/")[0] for b in benchmarks]
    order = list(dict.fromkeys(groups))
    return [order.index(g) for g in groups]


def pct_of_ceiling(counters):
    """The row's share of its ceiling; a row that ran on several GPUs (bench_nccl's `gpus`
    counter) is measured against the ceiling of all of them, not of one."""
    pct = counters.get("pct_of_ceiling")
    gpus = counters.get("gpus") or 1
    return None if pct is None else pct / max(gpus, 1)


def make_row(b, run_name):
    algorithm, variant, mode, rest = parse_name(run_name)
    unit = TIME_UNIT_SECONDS.get(b.get("time_unit", "ns"), 1e-9)
    label = b.get("label", "") or ""
    counters = {k: v for k, v in b.items() if isinstance(v, (int, float)) and k not in (
        "family_index", "per_family_instance_index", "repetitions", "repetition_index", "threads",
        "iterations", "real_time", "cpu_time")}
    return {
        "name": "/".join([algorithm, variant] + (["cold"] if mode == "cold" else []) + list(rest)),
        "algorithm": algorithm, "variant": variant, "class": variant_class(variant), "mode": mode, "rest": rest,
        "seconds": b.get("real_time", float("nan")) * unit,
        "manual_time": "manual_time" in run_name.split("/"),
        "error": b.get("error_message") if b.get("error_occurred") else None,
        "gbps": counters.get("GB/s"), "tflops": counters.get("TFLOP/s"),
        "intensity": counters.get("flop/byte"), "pct": pct_of_ceiling(counters),
        "noise": counters.get("noise_pct"),
        "compute_bound": "compute-bound" in label,
        "label": label,
        "extra": {k: v for k, v in counters.items() if k not in STANDARD_COUNTERS},
    }


def ceilings_from(contexts):
    """GB/s and TFLOP/s ceilings from the first context that has them."""
    for ctx in contexts:
        if "ceiling_copy_GB/s" in ctx:
            def number(key):
                try:
                    return float(ctx[key])
                except (KeyError, ValueError):
                    return float("nan")
            return {
                "copy_GBps": number("ceiling_copy_GB/s"),
                "theoretical_GBps": number("ceiling_theoretical_GB/s"),
                "flops": {name: number("ceiling_%s_TFLOP/s" % name) for name in FLOP_CEILINGS},
            }
    return None


def fmt_time(seconds):
    if seconds is None or math.isnan(seconds):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return "%.3g %s" % (seconds / scale, unit)
    return "%.3g ns" % (seconds / 1e-9)


def fmt_num(value, digits=3):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if abs(value) >= 10 ** digits:
        return "%.0f" % value
    return "%.*g" % (digits, value)


def throughput(row):
    """The figure a reader compares: TFLOP/s when compute-bound, else GB/s."""
    if row["error"]:
        return "FAILED"
    if row["compute_bound"] and row["tflops"] is not None:
        return "%s TFLOP/s" % fmt_num(row["tflops"])
    if row["gbps"] is not None:
        return "%s GB/s" % fmt_num(row["gbps"])
    return fmt_time(row["seconds"])


def best(rows):
    ok = [r for r in rows if not r["error"]]
    return min(ok, key=lambda r: r["seconds"]) if ok else (rows[0] if rows else None)


def pick(rows, cls):
    """The plain variant (`naive`, `foundry`) when present, else the fastest rung."""
    members = [r for r in rows if r["class"] == cls]
    plain = [r for r in members if r["variant"] == cls]
    return plain[0] if plain else best(members)


def cell(row, with_name):
    if row is None:
        return "-"
    text = throughput(row)
    return "%s: %s" % (row["variant"], text) if with_name else text


def summary_table(rows):
    groups, order = {}, []
    for r in rows:
        key = (r["algorithm"], r["mode"], r["rest"])
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(r)
    algorithms = list(dict.fromkeys(k[0] for k in order))
    order.sort(key=lambda k: (algorithms.index(k[0]), k[1] != "hot", size_sort_key(k[2])))
    lines = ["| algorithm | size | naive | foundry | peer | foundry/peer | % of ceiling |",
             "|---|---|---|---|---|---|---|"]
    for key in order:
        if key[0].startswith(SWEEP_PREFIX):
            continue  # hundreds of shapes: sweep_tables summarises them, the full table lists them
        members = groups[key]
        if all(r["class"] == "peer" for r in members):
            continue  # variants of one operation with no foundry row: variants_tables shows them
        naive, foundry, peer = pick(members, "naive"), pick(members, "foundry"), best(
            [r for r in members if r["class"] == "peer"])
        ratio = "-"
        if foundry and peer and not foundry["error"] and not peer["error"] and foundry["seconds"] > 0:
            ratio = "%.3f×" % (peer["seconds"] / foundry["seconds"])
        headline = foundry or peer or naive
        pct = "-" if headline is None or headline["error"] or headline["pct"] is None else "%.1f%%" % headline["pct"]
        naive_named = naive is not None and naive["variant"] != "naive"
        foundry_named = foundry is not None and foundry["variant"] != "foundry"
        lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            key[0], pretty_size(key[2], key[1]), cell(naive, naive_named), cell(foundry, foundry_named),
            cell(peer, True), ratio, pct))
    return lines


# The GEMM ladder's rungs, in the order a reader climbs them (bench/bench_gemm.cu's variants).
GEMM_RUNGS = (("naive", "1 naive"), ("foundry_shared_tiled", "2 shared-memory tiled"),
              ("foundry_register_blocked", "3 register-blocked"), ("foundry_tensor_core", "4 mma.sync"),
              ("foundry_wgmma", "5 wgmma + TMA"))


def ladder_table(rows):
    """Each GEMM rung's TFLOP/s with its ratio to cuBLAS (the time of the `cublas` row of the
    same precision and shape over the rung's), one line per precision and shape; empty when
    the input has no GEMM rows."""
    gemm = [r for r in rows if r["algorithm"].startswith("gemm_") and r["mode"] == "hot"]
    rungs = [(v, title) for v, title in GEMM_RUNGS if any(r["variant"] == v for r in gemm)]
    if not gemm or not rungs:
        return []
    keys = list(dict.fromkeys((r["algorithm"], r["rest"]) for r in gemm))
    lines = ["| precision | M×N×K | " + " | ".join("rung " + title for _, title in rungs) + " | cuBLAS |",
             "|---|---|" + "---|" * (len(rungs) + 1)]
    for algorithm, rest in keys:
        members = {}
        for r in gemm:  # the first file's row of each variant, as in the summary
            if (r["algorithm"], r["rest"]) == (algorithm, rest):
                members.setdefault(r["variant"], r)
        if not any(v in members for v, _ in rungs):
            continue
        peer = members.get("cublas")
        cells = []
        for variant, _ in rungs:
            r = members.get(variant)
            if r is None:
                cells.append("-")
            elif r["error"]:
                cells.append("FAILED")
            elif peer and not peer["error"] and r["seconds"] > 0:
                cells.append("%s (%.2f×)" % (fmt_num(r["tflops"]), peer["seconds"] / r["seconds"]))
            else:
                cells.append(fmt_num(r["tflops"]))
        lines.append("| %s | %s | %s | %s |" % (algorithm[len("gemm_"):], pretty_size(rest, "hot"), " | ".join(cells),
                                               "-" if peer is None else throughput(peer)))
    return lines


# The GEMM shape sweep (bench/gemm_sweep.cuh): rows gemm_sweep_<precision>/{foundry,cublas}/<shape>, the
# class of each problem in the counter sweep_class.
SWEEP_PREFIX = "gemm_sweep_"
SWEEP_CLASSES = ((0, "random"), (1, "vector/skinny"), (2, "K ≤ 64"), (3, "K ≥ 8192"), (4, "committed"))


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def packing_lines(sweep, members):
    """What fp32 packing gains: over the problems with a foundry_unpacked row (rung 3 without the
    copies) beside a foundry row (the plan, copies included), the geometric mean and range of the
    unpacked time over the planned one (above 1: the copies pay). Empty without such rows."""
    pairs = []
    for (algorithm, rest, variant), r in members.items():
        planned = members.get((algorithm, rest, "foundry"))
        if variant != "foundry_unpacked" or planned is None or r["error"] or planned["error"]:
            continue
        if "packed (" not in planned["label"]:
            continue  # the planned row comes from a later run whose plan no longer packs
        if r["seconds"] > 0 and planned["seconds"] > 0:
            pairs.append((r["seconds"] / planned["seconds"], " ".join(rest)))
    if not pairs:
        return []
    pairs.sort()
    return ["", "Packing misaligned fp32 operands for rung 3's float4 loads, on the %d problems whose plan packs: "
            "unpacked time / packed time, geometric mean %.3f× (%s %.2f× to %s %.2f×)." % (
                len(pairs), geometric_mean([x for x, _ in pairs]), pairs[0][1], pairs[0][0], pairs[-1][1],
                pairs[-1][0])]


def sweep_tables(rows):
    """One line per precision of the shape sweep: over the problems whose foundry and cublas rows
    both ran, the geometric mean of cuBLAS's time over foundry's (above 1: foundry is faster), the
    worst such ratio, the five worst shapes with their ratios, and the geometric mean per class of
    problem; then every failed row with its reason. Empty when the input has no sweep rows."""
    sweep = [r for r in rows if r["algorithm"].startswith(SWEEP_PREFIX) and r["mode"] == "hot"]
    if not sweep:
        return []
    members = {}
    for r in sweep:  # the first file's row of each variant, as in the summary
        members.setdefault((r["algorithm"], r["rest"], r["variant"]), r)
    lines = ["| precision | problems | compared | geometric mean | worst | worst five (cuBLAS time / foundry time) | " +
             " | ".join(name for _, name in SWEEP_CLASSES) + " |",
             "|---|---|---|---|---|---|" + "---|" * len(SWEEP_CLASSES)]
    failed = []
    plans = []
    for algorithm in dict.fromkeys(r["algorithm"] for r in sweep):
        shapes = list(dict.fromkeys(r["rest"] for r in sweep if r["algorithm"] == algorithm))
        ratios = []  # (ratio, shape, class)
        for rest in shapes:
            foundry, cublas = members.get((algorithm, rest, "foundry")), members.get((algorithm, rest, "cublas"))
            for r in (foundry, cublas):
                if r is not None and r["error"]:
                    failed.append(r)
            if foundry is None or cublas is None or foundry["error"] or cublas["error"]:
                continue
            if foundry["seconds"] > 0 and cublas["seconds"] > 0:
                kind = foundry["extra"].get("sweep_class", cublas["extra"].get("sweep_class"))
                plan = foundry["label"].split("; plan: ", 1)[1] if "; plan: " in foundry["label"] else ""
                ratios.append((cublas["seconds"] / foundry["seconds"], " ".join(rest), kind, plan))
        ratios.sort()
        per_class = []
        for code, _ in SWEEP_CLASSES:
            of_class = [x for x, _, kind, _ in ratios if kind is not None and int(kind) == code]
            per_class.append("%.3f (%d)" % (geometric_mean(of_class), len(of_class)) if of_class else "-")
        worst_five = ", ".join("%s %.2f" % (shape, x) for x, shape, _, _ in ratios[:5]) or "-"
        lines.append("| %s | %d | %d | %s | %s | %s | %s |" % (
            algorithm[len(SWEEP_PREFIX):], len(shapes), len(ratios),
            "%.3f×" % geometric_mean([x for x, _, _, _ in ratios]) if ratios else "-",
            "%.3f×" % ratios[0][0] if ratios else "-", worst_five, " | ".join(per_class)))
        plans += ["- %s %s %.2f×: %s" % (algorithm[len(SWEEP_PREFIX):], shape, x, plan)
                  for x, shape, _, plan in ratios[:5] if plan]
    if plans:
        lines += ["", "The plans of the worst five (as `gemm_plan::describe()` printed them in the run):", ""] + plans
    lines += packing_lines(sweep, members)
    if failed:
        lines += ["", "Failed sweep rows (not in the figures above):", ""]
        lines += ["- %s: %s" % (r["name"], r["error"]) for r in failed]
    return lines


def multi_gpu_table(rows):
    """The rows of bench_nccl (those with a `gpus` counter), one line each in registration order:
    time, the headline figure, nccl-tests' algorithm and bus bandwidths for the all-reduce
    (busbw = algbw * 2(n-1)/n), and the scaling efficiency against one GPU (t1 / (gpus * t)) for
    the sharded algorithms; empty when the input has no such rows."""
    multi = [r for r in rows if "gpus" in r["extra"]]
    if not multi:
        return []
    lines = ["| benchmark | GPUs | time | figure | algbw GB/s | busbw GB/s | scaling efficiency |",
             "|---|---|---|---|---|---|---|"]
    for r in multi:
        extra = r["extra"]
        size = " ".join(a for a in r["rest"][:-1]) if len(r["rest"]) > 1 else pretty_size(r["rest"], r["mode"])
        name = "%s/%s %s" % (r["algorithm"], r["variant"], size)
        if r["error"]:
            lines.append("| %s | %d | FAILED | | | | |" % (name, int(extra["gpus"])))
            continue
        lines.append("| %s | %d | %s | %s | %s | %s | %s |" % (
            name, int(extra["gpus"]), fmt_time(r["seconds"]), throughput(r),
            fmt_num(extra.get("algbw_GB/s")), fmt_num(extra.get("busbw_GB/s")),
            "-" if extra.get("scaling_efficiency") is None else "%.3f" % extra["scaling_efficiency"]))
    return lines


def variants_tables(rows):
    """One table per algorithm whose rows are all peers (ways of doing one operation, such as
    h2d/pageable against h2d/pinned, with no foundry row to rank them against): a column per
    variant, in registration order, with the time per item where the row counts items
    (us_per_item), else its throughput."""
    peer_only = [a for a in dict.fromkeys(r["algorithm"] for r in rows)
                 if all(r["class"] == "peer" for r in rows if r["algorithm"] == a)]
    lines = []
    for algorithm in peer_only:
        members = [r for r in rows if r["algorithm"] == algorithm]
        variants = list(dict.fromkeys(r["variant"] for r in members))
        sizes = sorted(dict.fromkeys((r["mode"], r["rest"]) for r in members),
                       key=lambda k: (k[0] != "hot", size_sort_key(k[1])))
        lines += ["", "| %s | %s |" % (algorithm, " | ".join(variants)), "|---|" + "---|" * len(variants)]
        for mode, rest in sizes:
            cells = []
            for v in variants:
                r = next((r for r in members if r["variant"] == v and (r["mode"], r["rest"]) == (mode, rest)), None)
                if r is not None and not r["error"] and "us_per_item" in r["extra"]:
                    cells.append("%s us each" % fmt_num(r["extra"]["us_per_item"]))
                else:
                    cells.append("-" if r is None else throughput(r))
            lines.append("| %s | %s |" % (pretty_size(rest, mode), " | ".join(cells)))
    return lines


def full_table(rows):
    lines = ["| benchmark | time | GB/s | TFLOP/s | flop/byte | % of ceiling | noise | bound | notes |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["error"]:
            lines.append("| %s | FAILED | | | | | | | %s |" % (r["name"], r["error"].replace("|", "\\|")))
            continue
        notes = ", ".join("%s=%s" % (k, fmt_num(v, 4)) for k, v in sorted(r["extra"].items()))
        if not r["manual_time"]:
            notes = (notes + ", " if notes else "") + "not manual time (host clock)"
        bound = "" if r["gbps"] is None else ("compute" if r["compute_bound"] else "memory")
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["name"], fmt_time(r["seconds"]), fmt_num(r["gbps"]), fmt_num(r["tflops"]), fmt_num(r["intensity"]),
            "-" if r["pct"] is None else "%.1f" % r["pct"],
            "-" if r["noise"] is None else "%.1f%%" % r["noise"], bound, notes))
    return lines


def context_lines(contexts, ceilings):
    ctx = contexts[0] if contexts else {}
    keys = ["gpu", "gpu_compute_capability", "gpu_sm_count", "gpu_sm_clock_max_mhz", "gpu_memory_clock_max_mhz",
            "gpu_l2_mib", "gpu_ecc", "nvidia_driver", "cuda_runtime", "cublas", "cccl", "date"]
    found = ["%s: %s" % (k, ctx[k]) for k in keys if k in ctx]
    lines = ["Measured on: " + "; ".join(found) + "." if found else "No device context in the input."]
    if len(contexts) > 1:
        runs = ["%s (%s)" % (", ".join(ctx["binaries"]) or os.path.basename(ctx.get("executable", "?")),
                             ctx.get("date", "no date")) for ctx in contexts]
        lines += ["", "Rows from %d runs of the benchmark script, each on the device above: %s. The ceilings "
                  "are the first run's." % (len(contexts), ", ".join(runs))]
    if ceilings:
        flops = ", ".join("%s %s TFLOP/s" % (k, fmt_num(v)) for k, v in ceilings["flops"].items())
        lines.append("")
        lines.append("Ceilings measured in the same run: device-to-device copy %s GB/s (theoretical %s GB/s); %s." % (
            fmt_num(ceilings["copy_GBps"]), fmt_num(ceilings["theoretical_GBps"]), flops))
    return lines


def write_markdown(path, contexts, rows, ceilings, excluded=()):
    out = ["# Benchmark results", ""] + context_lines(contexts, ceilings) + [""]
    out += [line + "\n" for line in excluded]
    out += ["Figures are GB/s (bytes read + written) or TFLOP/s of the median sample; foundry/peer is the peer's "
            "time over foundry's (above 1: foundry is faster); % of ceiling is foundry's (or the best row's) share "
            "of the ceiling that binds it.", ""]
    out += summary_table(rows)
    sections = [
        ("The GEMM ladder",
         "TFLOP/s of each rung (the rung called directly, its own tiling and split-K choice) and, in brackets, "
         "cuBLAS's time over the rung's at the same precision and shape (above 1: the rung is faster).",
         ladder_table(rows)),
        ("GEMM shape sweep",
         "foundry::gemm against cuBLAS on the problems of bench/gemm_sweep.cuh (random shapes, layouts and "
         "leading-dimension pads from a fixed seed, then named classes), each row checked against cuBLAS before it "
         "was timed. Ratios are cuBLAS's time over foundry's (above 1: foundry is faster); compared counts the "
         "problems whose two rows both ran; the class columns give the geometric mean and, in brackets, the "
         "problems of each class. Issue 21's goal: geometric mean ≥ 1.0 and worst ≥ 0.8 for each precision.",
         sweep_tables(rows)),
        ("Multi-GPU (foundry::nccl)",
         "bench_nccl's rows: the all-reduce's algorithm bandwidth (bytes / time) and bus bandwidth (algbw * 2(n-1)/n, "
         "as nccl-tests reports it; 0 on one GPU), and for the sharded algorithms the scaling efficiency "
         "t1 / (gpus * t) against foundry::gemm / reduce_sum on one GPU.",
         multi_gpu_table(rows)),
        ("Variants of one operation", "Rows with no foundry variant to rank against: each variant side by side.",
         variants_tables(rows)),
    ]
    for title, intro, table in sections:
        if table:  # a section only for the rows the input has
            out += ["", "### " + title, "", intro] + ([""] if table[0] else []) + table
    out += ["", "## Every row", ""] + full_table(rows)
    failed = [r for r in rows if r["error"]]
    if failed:
        out += ["", "**%d benchmark(s) failed.**" % len(failed)]
    text = "\n".join(out) + "\n"
    if path == "-":
        sys.stdout.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)


def write_plot(path, rows, ceilings):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot skipped: matplotlib not installed", file=sys.stderr)
        return
    colors = {"naive": "#7f7f7f", "foundry": "#1f77b4", "peer": "#ff7f0e"}
    markers = "osD^v<>phX*"
    ok = [r for r in rows if not r["error"] and r["gbps"] is not None and r["seconds"] > 0]
    algorithms = list(dict.fromkeys(r["algorithm"] for r in ok))
    marker_of = {a: markers[i % len(markers)] for i, a in enumerate(algorithms)}
    fig, (ax_roof, ax_bw) = plt.subplots(1, 2, figsize=(15, 6.5))

    def scatter(ax, r, x, y):
        face = colors[r["class"]] if r["mode"] == "hot" else "none"
        ax.scatter([x], [y], marker=marker_of[r["algorithm"]], s=40, facecolors=face, edgecolors=colors[r["class"]],
                   linewidths=1.2, zorder=3)

    # Roofline: performance against arithmetic intensity.
    flop_rows = [r for r in ok if r["tflops"] and r["intensity"]]
    xs = [r["intensity"] for r in flop_rows] or [1.0]
    x_lo, x_hi = min(min(xs) / 4, 0.05), max(max(xs) * 4, 2000)
    if ceilings:
        grid = [x_lo * (x_hi / x_lo) ** (i / 200) for i in range(201)]
        peaks = [p for p in ceilings["flops"].values() if p and not math.isnan(p)]
        top = max(peaks) if peaks else float("inf")
        for bw, style, name in ((ceilings["copy_GBps"], "-", "copy"), (ceilings["theoretical_GBps"], ":", "theoretical")):
            if bw and not math.isnan(bw):
                # The bandwidth roof, up to the highest FLOP ceiling.
                line = [(x, bw * 1e-3 * x) for x in grid if bw * 1e-3 * x <= top]
                ax_roof.plot([p[0] for p in line], [p[1] for p in line], "k" + style, lw=1,
                             label="bandwidth, %s: %s GB/s" % (name, fmt_num(bw)))
        for i, (name, peak) in enumerate(ceilings["flops"].items()):
            if peak and not math.isnan(peak):
                roof = [min(peak, ceilings["copy_GBps"] * 1e-3 * x) for x in grid]
                ax_roof.plot(grid, roof, color="C%d" % (i + 2), lw=1.2, label="%s: %s TFLOP/s" % (name, fmt_num(peak)))
    for r in flop_rows:
        scatter(ax_roof, r, r["intensity"], r["tflops"])
    ax_roof.set_xscale("log")
    ax_roof.set_yscale("log")
    ax_roof.set_xlim(x_lo, x_hi)
    ax_roof.set_xlabel("arithmetic intensity (flop/byte)")
    ax_roof.set_ylabel("TFLOP/s")
    ax_roof.set_title("Roofline (rows with floating-point work)")
    ax_roof.grid(True, which="both", alpha=0.25)
    ax_roof.legend(fontsize=7, loc="lower right")

    # Bandwidth: every row, against the bandwidth ceilings.
    for r in ok:
        scatter(ax_bw, r, r["gbps"] * 1e9 * r["seconds"], r["gbps"])
    if ceilings:
        for bw, style, name in ((ceilings["copy_GBps"], "-", "copy"), (ceilings["theoretical_GBps"], ":", "theoretical")):
            if bw and not math.isnan(bw):
                ax_bw.axhline(bw, color="k", ls=style, lw=1, label="%s: %s GB/s" % (name, fmt_num(bw)))
    ax_bw.set_xscale("log")
    ax_bw.set_xlabel("bytes moved per call (read + written)")
    ax_bw.set_ylabel("GB/s")
    ax_bw.set_title("Achieved bandwidth (filled: hot L2, hollow: cold)")
    ax_bw.grid(True, which="both", alpha=0.25)
    handles = [plt.Line2D([], [], ls="", marker="o", color=c, label=k) for k, c in colors.items()]
    handles += [plt.Line2D([], [], ls="", marker=marker_of[a], color="k", mfc="none", label=a) for a in algorithms]
    first = ax_bw.legend(handles=handles, fontsize=7, loc="lower right")
    ax_bw.add_artist(first)
    ax_bw.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print("plot written: %s" % path, file=sys.stderr)


def reexec_with_system_python():
    """matplotlib usually comes from Debian's python3-matplotlib, which only the system
    interpreter sees; when another python3 (pyenv, a venv) runs this script without it,
    run again under /usr/bin/python3 if that one has it."""
    try:
        import matplotlib  # noqa: F401
        return
    except ImportError:
        pass
    system = "/usr/bin/python3"
    if os.environ.get("FOUNDRY_REPORT_REEXEC") or not os.path.exists(system) or \
            os.path.realpath(sys.executable) == os.path.realpath(system):
        return
    import subprocess
    if subprocess.run([system, "-c", "import matplotlib"], capture_output=True).returncode == 0:
        os.environ["FOUNDRY_REPORT_REEXEC"] = "1"
        os.execv(system, [system] + sys.argv)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", nargs="+", help="Google Benchmark JSON files (--benchmark_out)")
    parser.add_argument("--markdown", default="-", help="Markdown output (default: standard output)")
    parser.add_argument("--plot", default=None,
                        help="roofline PNG (default: roofline.png beside the Markdown, or in the current folder)")
    parser.add_argument("--no-plot", action="store_true", help="write only the Markdown")
    parser.add_argument("--exclude", action="append", default=[], metavar="REGEX=REASON",
                        help="leave out the rows whose name matches REGEX; the report lists them with REASON")
    args = parser.parse_args()
    if not args.no_plot:
        reexec_with_system_python()

    contexts, rows = load_rows(args.json)
    excluded = []
    for spec in args.exclude:
        pattern, _, reason = spec.partition("=")
        left_out = [r for r in rows if re.search(pattern, r["name"])]
        rows = [r for r in rows if not re.search(pattern, r["name"])]
        excluded.append("%d row(s) matching `%s` left out: %s" % (len(left_out), pattern, reason or "no reason given"))
    ceilings = ceilings_from(contexts)
    write_markdown(args.markdown, contexts, rows, ceilings, excluded)
    if not args.no_plot:
        plot = args.plot or os.path.join(os.path.dirname(args.markdown) if args.markdown != "-" else ".", "roofline.png")
        write_plot(plot, rows, ceilings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
