#!/usr/bin/env python3
"""Checks that every #include "collbench/..." in src/ goes down the layers of docs/architecture.md
(or stays inside its own layer), and that the layers have no cycle. Run by `scripts/lint layers`
(CI: ctest label lint), and that src/cli neither includes <mpi.h> nor calls MPI_ (it goes through
run/session.hpp). Exit 1 naming each upward include and MPI use with its line, 0 when there is none.

A file's layer is its directory under src/collbench (src/cli is `cli`), with three exceptions in
backend/: mpi/ and nccl/ are layers of their own, and the registry (registry.*, policy.cpp, which
chooses among the backends) sits above both."""
import re
import sys
from pathlib import Path

# Each layer and the layers it may include directly (anything reachable through them is allowed too).
LAYERS = {
    "core": [],
    "stats": ["core"],
    "yamlio": ["core"],
    "model": ["core", "yamlio", "record"],
    "workload": ["core", "yamlio"],
    "overlap": ["core", "workload"],
    "plan": ["core", "overlap"],
    "record": ["core", "stats"],
    "compare": ["record"],
    "scaling": ["record", "model"],
    "gate": ["record", "yamlio"],
    "locate": ["record", "model"],
    "report": ["record", "model", "compare", "scaling", "gate", "locate"],
    "sim": ["core", "model"],
    "backend_api": ["core", "overlap"],
    "backend_mpi": ["backend_api"],
    "backend_nccl": ["backend_mpi"],
    "backend_registry": ["backend_mpi", "backend_nccl"],
    "coll": ["model", "workload", "overlap", "backend_api", "backend_nccl"],
    "accept": ["yamlio", "plan", "record", "report", "coll"],
    "run": ["coll", "backend_registry", "plan", "record", "report"],
    "step": ["model", "workload", "record", "report"],
    "cli": ["run", "accept", "sim", "step"],
}
REGISTRY_FILES = {"registry.hpp", "registry.cpp", "policy.cpp"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"collbench/([^"]+)"', re.M)
# The CLI reaches MPI through run/ (session.hpp's Control, MpiSession, world_rank): no <mpi.h>, no MPI_ call.
CLI_MPI = re.compile(r'^[ \t]*#[ \t]*include[ \t]+<mpi\.h>|\bMPI_[A-Z][A-Za-z0-9_]*\s*\(', re.M)


def layer_of(path: str) -> str:
    """path: relative to src/ (collbench/run/runner.cpp, cli/main.cpp)."""
    parts = path.split("/")
    if parts[0] == "cli":
        return "cli"
    top = parts[1]
    if top == "backend":
        if len(parts) > 3 and parts[2] in ("mpi", "nccl"):
            return "backend_" + parts[2]
        return "backend_registry" if parts[-1] in REGISTRY_FILES else "backend_api"
    return top


def closure(layers: dict[str, list[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}

    def visit(name: str, stack: tuple[str, ...]) -> set[str]:
        if name in stack:
            raise SystemExit(f"check_layers: the table itself has a cycle: {' -> '.join(stack + (name,))}")
        if name not in out:
            reach: set[str] = set()
            for dep in layers[name]:
                reach |= {dep} | visit(dep, stack + (name,))
            out[name] = reach
        return out[name]

    for name in layers:
        visit(name, ())
    return out


def main() -> int:
    # scripts/check_layers.py [SRC_DIR]: the repository's src/ by default.
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "src"
    allowed = closure(LAYERS)
    problems = []
    for f in sorted(src.rglob("*")):
        if f.suffix not in (".hpp", ".cpp", ".h", ".cu", ".cuh", ".in"):
            continue
        rel = f.relative_to(src).as_posix()
        here = layer_of(rel)
        if here not in LAYERS:
            problems.append(f"src/{rel}: layer '{here}' is not in scripts/check_layers.py's table")
            continue
        text = f.read_text(errors="replace")
        if here == "cli":
            code = "\n".join(re.sub(r"(?<!:)//.*", "", line) for line in text.splitlines())
            for m in CLI_MPI.finditer(code):
                line = code.count("\n", 0, m.start()) + 1
                problems.append(f"src/{rel}:{line}: '{m.group(0).strip()}': the CLI calls MPI through run/ (session.hpp)")
        for m in INCLUDE.finditer(text):
            there = layer_of("collbench/" + m.group(1))
            if there != here and there not in allowed[here]:
                problems.append(f"src/{rel}: includes collbench/{m.group(1)} ({here} -> {there}: not below {here})")
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        mpi = sum("the CLI calls MPI" in p for p in problems)
        print(f"check_layers: {len(problems) - mpi} upward include(s), {mpi} MPI use(s) in the CLI; the layers: "
              "docs/architecture.md", file=sys.stderr)
        return 1
    print(f"check_layers: every include goes down ({len(LAYERS)} layers), no MPI call in the CLI")
    return 0


if __name__ == "__main__":
    sys.exit(main())
