#!/usr/bin/env python3
"""Copies the summary table of a benchmark report (made by bench_report.py) into
README.md between the results markers, so that the README's figures are the
script's output, never typed by hand.

usage: scripts/update-readme-results.py [REPORT] [README] [MARKER]
       (defaults: bench/results/h200/report.md, README.md, results): the table goes between
       <!-- MARKER:begin (scripts/update-readme-results.py) --> and <!-- MARKER:end -->
"""
import sys


def markers(name):
    return f"<!-- {name}:begin (scripts/update-readme-results.py) -->", f"<!-- {name}:end -->"


def summary(report_text):
    """The report's preamble and first table: everything before '## Every row'."""
    lines = report_text.splitlines()
    body = []
    for line in lines[1:]:  # skip the report's own title
        if line.startswith("## "):
            break
        body.append(line)
    return "\n".join(body).strip()


def main():
    report_path = sys.argv[1] if len(sys.argv) > 1 else "bench/results/h200/report.md"
    readme_path = sys.argv[2] if len(sys.argv) > 2 else "README.md"
    BEGIN, END = markers(sys.argv[3] if len(sys.argv) > 3 else "results")
    with open(report_path) as f:
        table = summary(f.read())
    with open(readme_path) as f:
        readme = f.read()
    if BEGIN not in readme or END not in readme:
        sys.exit(f"{readme_path}: the markers {BEGIN} ... {END} are missing")
    head, rest = readme.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(readme_path, "w") as f:
        f.write(f"{head}{BEGIN}\n{table}\n{END}{tail}")
    print(f"{readme_path}: results copied from {report_path}")


if __name__ == "__main__":
    main()
