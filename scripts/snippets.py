#!/usr/bin/env python3
"""Keeps the code and the figures quoted in the docs identical to their sources.

Code: a source marks a region with a line `// [snippet:NAME]` and a line `// [/snippet]`;
a Markdown file quotes it with

    <!-- snippet: examples/coalescing/main.cu#kernels -->
    ```cuda
    (filled in by this script)
    ```
    <!-- /snippet -->

Figures: `<!-- result: NAME -->` ... `<!-- /result -->` quotes the output that example NAME
printed on the H200, bench/results/h200/examples/NAME.txt, or says that it has not been
measured yet when the file does not exist.

  scripts/snippets.py [FILE.md ...]          fill every block (default: docs/guide.md)
  scripts/snippets.py --check [FILE.md ...]  exit 1, naming each block, if any differs (CI)
  scripts/snippets.py --split ALL.txt [DIR]  split the combined output of
                                             scripts/run-examples.sh ("=== NAME ===" headers)
                                             into DIR/NAME.txt (default DIR:
                                             bench/results/h200/examples); then fill
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "h200" / "examples"
SNIPPET_BLOCK = re.compile(r"(<!-- snippet: (\S+?)#(\S+) -->\n)(.*?)(<!-- /snippet -->)", re.S)
RESULT_BLOCK = re.compile(r"(<!-- result: (\S+) -->\n)(.*?)(<!-- /result -->)", re.S)
BEGIN = re.compile(r"^\s*// \[snippet:([\w-]+)\]\s*$")
END = re.compile(r"^\s*// \[/snippet\]\s*$")
SEPARATOR = re.compile(r"^=== (\S+) ===$")
LANGUAGE = {".cu": "cuda", ".cuh": "cuda", ".cpp": "cpp", ".py": "python", ".sh": "sh", ".cmake": "cmake"}


class SnippetError(Exception):
    pass


def cut(path: pathlib.Path, name: str) -> str:
    """The lines between `// [snippet:name]` and its `// [/snippet]`, dedented; markers of
    other snippets inside are dropped."""
    if not path.is_file():
        raise SnippetError(f"{path.relative_to(ROOT)}: no such file")
    lines, inside, found = [], False, False
    for line in path.read_text().splitlines():
        begin, end = BEGIN.match(line), END.match(line)
        if begin and begin.group(1) == name:
            if found:
                raise SnippetError(f"{path.relative_to(ROOT)}: snippet {name} marked twice")
            inside = found = True
        elif inside and end:
            inside = False
        elif inside and not begin and not end:
            lines.append(line)
    if not found:
        raise SnippetError(f"{path.relative_to(ROOT)}: no snippet named {name}")
    if inside:
        raise SnippetError(f"{path.relative_to(ROOT)}: snippet {name} has no // [/snippet]")
    indent = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
    return "\n".join(l[indent:] for l in lines).strip("\n") + "\n"


def fenced(text: str, language: str) -> str:
    fence = "````" if "```" in text else "```"
    return f"{fence}{language}\n{text}{fence}\n"


def result_text(name: str) -> str:
    path = RESULTS / f"{name}.txt"
    if not path.is_file():
        return (f"*Not yet measured on the H200: `scripts/run-examples.sh` on the GPU writes OUT/examples.txt, "
                f"`scripts/snippets.py --split` files it as `bench/results/h200/examples/{name}.txt` "
                f"and quotes it here.*\n")
    return fenced(path.read_text().rstrip("\n") + "\n", "text")


def render(markdown: str, source: pathlib.Path, problems: list) -> str:
    def snippet(m):
        path = ROOT / m.group(2)
        try:
            body = fenced(cut(path, m.group(3)), LANGUAGE.get(path.suffix, ""))
        except SnippetError as e:
            problems.append(f"{source.relative_to(ROOT)}: {e}")
            return m.group(0)
        return m.group(1) + body + m.group(5)

    def result(m):
        return m.group(1) + result_text(m.group(2)) + m.group(4)

    return RESULT_BLOCK.sub(result, SNIPPET_BLOCK.sub(snippet, markdown))


def split(combined: pathlib.Path, out: pathlib.Path) -> list:
    """Writes each `=== NAME ===` section of `combined` to out/NAME.txt; returns the names."""
    sections, name = {}, None
    for line in combined.read_text().splitlines():
        header = SEPARATOR.match(line)
        if header:
            name = header.group(1)
            sections[name] = []
        elif name is not None:
            sections[name].append(line)
    out.mkdir(parents=True, exist_ok=True)
    for name, lines in sections.items():
        (out / f"{name}.txt").write_text("\n".join(lines).strip("\n") + "\n")
    return list(sections)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", help="Markdown files (default: docs/guide.md)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a block differs")
    parser.add_argument("--split", metavar="ALL.txt", help="split run-examples.sh's combined output first")
    args = parser.parse_args()
    if args.split:
        # With --split, the one optional positional argument is the output folder.
        out = pathlib.Path(args.files.pop(0)) if args.files and not args.files[0].endswith(".md") else RESULTS
        names = split(pathlib.Path(args.split), out)
        print(f"snippets: wrote {len(names)} files to {out}: {' '.join(names)}")
    files = [pathlib.Path(f).resolve() for f in args.files] or [ROOT / "docs" / "guide.md"]
    problems, stale = [], []
    for path in files:
        before = path.read_text()
        after = render(before, path, problems)
        if after != before:
            stale.append(path)
            if not args.check:
                path.write_text(after)
    for p in problems:
        print(f"snippets: {p}", file=sys.stderr)
    if args.check:
        for path in stale:
            print(f"snippets: {path.relative_to(ROOT)} differs from its sources: run scripts/snippets.py",
                  file=sys.stderr)
        if not stale and not problems:
            print(f"snippets: {len(files)} file(s) match their sources")
        return 1 if stale or problems else 0
    for path in stale:
        print(f"snippets: updated {path.relative_to(ROOT)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
