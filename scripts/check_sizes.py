#!/usr/bin/env python3
"""The size limits of docs/design.md, checked (scripts/lint sizes): no C++/CUDA source under src/ or
bench/ over 600 lines, no function there over 60 lines (lizard's length: first to last line).

Today's exceptions are listed with their size in scripts/size-allowlist.txt, which may only shrink:
a listed file or function that grew, shrank (lower its entry), fell under the limit (remove its
entry) or no longer exists (remove it) fails the check too, so every exception is exact and the
list ratchets down. Exit 1 with one line per finding; 2 when lizard is missing.

    python3 scripts/check_sizes.py            # check
    python3 scripts/check_sizes.py --write    # rewrite the allowlist from today's tree
    python3 scripts/check_sizes.py ROOT LIST  # another git work tree and allowlist (tests)
"""
import subprocess
import sys
from pathlib import Path

FILE_LIMIT = 600
FUNCTION_LIMIT = 60
ROOT = Path(__file__).resolve().parent.parent
ALLOWLIST = ROOT / "scripts" / "size-allowlist.txt"
SUFFIXES = (".cpp", ".hpp", ".h", ".cu", ".cuh")


def sources(root):
    out = subprocess.run(["git", "ls-files", "src", "bench"], cwd=root, check=True, capture_output=True, text=True)
    return [p for p in out.stdout.split() if p.endswith(SUFFIXES)]


def measure(root, paths):
    """{key: lines} for every file and function over its limit; key is FILE or FILE:FUNCTION."""
    try:
        import lizard
    except ImportError:
        print("collbench lint: sizes needs lizard (scripts/lint installs it into its venv)", file=sys.stderr)
        sys.exit(2)
    over = {}
    for path in paths:
        text = (root / path).read_text(encoding="utf-8")
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if lines > FILE_LIMIT:
            over[path] = lines
        for fn in lizard.analyze_file.analyze_source_code(path, text).function_list:
            if fn.length > FUNCTION_LIMIT:
                key = f"{path}:{fn.name}"
                over[key] = max(over.get(key, 0), fn.length)
    return over


def read_allowlist(path):
    allowed = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, _, size = line.rpartition(" ")
        if not key or not size.isdigit():
            print(f"{path}:{n}: expected 'FILE[:FUNCTION] LINES', got '{line}'")
            sys.exit(1)
        allowed[key.strip()] = int(size)
    return allowed


def findings(over, allowed):
    out = []
    for key, size in sorted(over.items()):
        limit = FILE_LIMIT if ":" not in key else FUNCTION_LIMIT
        if key not in allowed:
            out.append(f"{key}: {size} lines, over the limit of {limit}")
        elif size > allowed[key]:
            out.append(f"{key}: grew from {allowed[key]} to {size} lines (limit {limit}; the allowlist only shrinks)")
        elif size < allowed[key]:
            out.append(f"{key}: shrank from {allowed[key]} to {size} lines: lower its allowlist entry to {size}")
    for key, size in sorted(allowed.items()):
        if key not in over:
            out.append(f"{key}: allowlisted at {size} lines but no longer over the limit (or gone): "
                       "remove its allowlist entry")
    return out


def main():
    args = sys.argv[1:]
    write = "--write" in args
    args = [a for a in args if a != "--write"]
    # ROOT [ALLOWLIST]: another tree (a git work tree) and allowlist, for tests/e2e/test_lint.py.
    root = Path(args[0]).resolve() if args else ROOT
    allowlist = Path(args[1]) if len(args) > 1 else ALLOWLIST
    over = measure(root, sources(root))
    if write:
        lines = [f"{k} {v}" for k, v in sorted(over.items())]
        header = ("# Files over 600 lines and functions over 60 (scripts/check_sizes.py) as of today, with their\n"
                  "# size: the list may only shrink. FILE LINES or FILE:FUNCTION LINES.\n")
        allowlist.write_text(header + "\n".join(lines) + "\n", encoding="utf-8")
        return 0
    problems = findings(over, read_allowlist(allowlist))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
