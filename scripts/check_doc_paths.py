#!/usr/bin/env python3
"""Every path that docs/architecture.md and docs/design.md name exists (scripts/lint docpaths).

A path is a `code span` with a '/' or a file extension (.cpp .hpp .cu .py .md .yaml .json .txt
.cmake .sh), or a Markdown link target. It may be written from the repository root, from src/ or
src/collbench/ (the layers' folders: `coll/registry.cpp`), from docs/ (links), or as a bare file
name that some tracked file has (`annotate.cpp`). Spans with a placeholder (<name>), a glob whose
folder exists, or a function call are not paths. Exit 1 naming each missing one as FILE:LINE.

    python3 scripts/check_doc_paths.py            # the two documents
    python3 scripts/check_doc_paths.py DOC...     # others (tests/e2e/test_lint.py)
"""
import fnmatch
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("docs/architecture.md", "docs/design.md")
EXTENSIONS = (".cpp", ".hpp", ".h", ".cu", ".py", ".md", ".yaml", ".json", ".txt", ".cmake", ".sh", ".in")
BASES = ("", "src/", "src/collbench/", "docs/")
SPAN = re.compile(r"`([^`\s]+)`")
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


def tracked():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True).stdout.split()
    return set(out)


def looks_like_path(token):
    if token.startswith(("-", "http", "$")) or "(" in token or "<" in token or "=" in token:
        return False
    if token[0].isdigit() or token.startswith("."):  # a unit (800Gb/s) or a bare extension (.cpp)
        return False
    if "::" in token or token.startswith("#"):
        return False
    return "/" in token or token.endswith(EXTENSIONS)


def exists(token, files, folders):
    token = token.rstrip(".,;:")
    for base in BASES:
        candidate = (base + token).rstrip("/")
        if "*" in candidate:
            if any(fnmatch.fnmatch(f, candidate) for f in files):
                return True
            continue
        if candidate in files or candidate in folders:
            return True
    if token.endswith("/"):  # a folder named from a parent the text gives (`backend/` ... `mpi/`)
        return any(d.endswith("/" + token.rstrip("/")) for d in folders)
    if "/" not in token:  # a bare file name (or glob): some tracked file has it
        return any(fnmatch.fnmatch(f.rsplit("/", 1)[-1], token) for f in files)
    return any(f.endswith("/" + token) for f in files)


def main():
    files = tracked()
    folders = {f.rsplit("/", i)[0] for f in files for i in range(1, f.count("/") + 1)}
    missing = []
    for doc in sys.argv[1:] or DOCS:
        for n, line in enumerate((ROOT / doc).read_text(encoding="utf-8").splitlines(), 1):
            tokens = [t for t in SPAN.findall(line) if looks_like_path(t)]
            # Links are relative to the document's folder.
            tokens += [os.path.normpath(os.path.join("docs", t)) for t in LINK.findall(line) if not t.startswith("http")]
            for token in tokens:
                if not exists(token, files, folders):
                    missing.append(f"{doc}:{n}: '{token}' names no file or folder of the repository")
    for m in missing:
        print(m)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
