#!/usr/bin/env python3
"""The table of session 30's skinny along-k probe (skinny_along_k_probe.cu): for each problem and
variant, the mean of its runs in us and, in brackets, A's (the large operand's) bytes over that
time as a fraction of the device copy measured in the same call (2 x bytes / copy time).
usage: skinny_probe_table.py call1-skinny-probe.csv"""
import collections
import statistics
import sys

rows = []
for line in open(sys.argv[1]):
    f = line.strip().split(',')
    rows.append([f[0], f[1], ','.join(f[2:-5])] + f[-5:])  # the plan's text holds commas
times, cublas, copy = collections.defaultdict(list), collections.defaultdict(list), collections.defaultdict(list)
for variant, problem, _, us, cublas_us, copy_us, _, _ in rows:
    times[(problem, variant)].append(float(us))
    cublas[problem].append(float(cublas_us))
    copy[problem].append(float(copy_us))
problems = list(dict.fromkeys(r[1] for r in rows))
variants = list(dict.fromkeys(r[0] for r in rows))
print('%-30s' % 'problem', ' '.join('%13s' % v for v in variants), '       cublas  copy TB/s')
for p in problems:
    large = int(next(r for r in rows if r[1] == p)[6])
    ceiling = 2 * large / statistics.median(copy[p])
    cells = []
    for v in variants:
        t = times.get((p, v))
        cells.append('%7.1f(%.2f)' % (statistics.mean(t), large / statistics.mean(t) / ceiling) if t else '%13s' % '-')
    c = statistics.median(cublas[p])
    print('%-30s' % p[:30], ' '.join(cells), ' %6.1f(%.2f) %5.2f' % (c, large / c / ceiling, ceiling / 1e6))
