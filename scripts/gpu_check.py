#!/usr/bin/env python3
"""Reads what scripts/gpu-check's steps wrote and prints each step's one summary line.

Each subcommand prints `STATUS<TAB>text` on its first line (STATUS: ok, missed = ran but the issue's
target was not met, unsupported = the build refused the mode, failed = nothing usable), then a
Markdown table for summary.md. Targets (issue 34): check kernels >= 50% of device copy at 1 GiB;
isolated timing within 3% of -G at 8 MiB and above; a default sweep <= 1.5x nccl-tests' wall time.

  kernels BENCH_JSON                       bench_gpu_kernels --benchmark_format=json output
  timing ISO GRAPH NT|- [GRAPH_LOG]        collbench isolated / -G records (JSONL), nccl-tests -G output
                                           ("-": none), the -G run's console (its refusal, if any)
  sweep CB_WALL NT_WALL                    wall seconds of the two default sweeps (NT_WALL "-": none)
"""

import json
import re
import sys

GIB = 1 << 30
SIZES = [8, 8 << 20, 32 << 20, 128 << 20]
KERNEL_TARGET = 0.5
TIMING_TOLERANCE = 0.03
SWEEP_TARGET = 1.5


def size_name(b):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift} {unit}"
    return f"{b} B"


def kernel_ratios(doc):
    """{kernel name: ratio to device copy} at 1 GiB, from Google Benchmark JSON.

    A benchmark's own ratio counter (any counter whose name holds "ratio") wins; otherwise its
    bytes_per_second over BM_DeviceCopy's at the same size."""
    rows = {}
    for b in doc.get("benchmarks", []):
        name = b.get("run_name") or b.get("name", "")
        parts = name.split("/")
        if str(GIB) not in parts or b.get("run_type", "iteration") != "iteration":
            continue
        kernel = "/".join(p for p in parts if p != str(GIB) and not p.endswith("_time"))
        rows[kernel] = b
    copy = rows.pop("BM_DeviceCopy", None)
    copy_bw = float(copy.get("bytes_per_second", 0)) if copy else 0.0
    out = {}
    for kernel, b in sorted(rows.items()):
        own = [v for k, v in b.items() if "ratio" in k.lower() and isinstance(v, (int, float))]
        if own:
            out[kernel] = float(own[0])
        elif copy_bw > 0 and "bytes_per_second" in b:
            out[kernel] = float(b["bytes_per_second"]) / copy_bw
    return out


def cmd_kernels(path):
    try:
        with open(path) as f:
            text = f.read()
        doc = json.loads(text[text.index("{") :])
    except (OSError, ValueError) as e:
        return "failed", f"no benchmark JSON ({e})", []
    ratios = kernel_ratios(doc)
    if not ratios:
        return "failed", "no 1 GiB kernel beside BM_DeviceCopy in the benchmark output", []
    worst = min(ratios, key=ratios.get)
    below = sorted(k for k, r in ratios.items() if r < KERNEL_TARGET)
    status = "ok" if not below else "missed"
    text = (
        f"{len(ratios) - len(below)}/{len(ratios)} kernels >= {KERNEL_TARGET:.0%} of copy at 1 GiB; "
        f"lowest {worst} {ratios[worst]:.3f}"
    )
    table = ["| kernel (1 GiB) | ratio to copy |", "|---|---:|"]
    table += [f"| {k} | {r:.3f} |" for k, r in sorted(ratios.items())]
    return status, text, table


def record_times(path):
    """({bytes: mean us} of the ok cases, [reasons of the waived ones]) of a collbench JSONL file."""
    times, reasons = {}, []
    try:
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                r = json.loads(line)
                if r.get("kind") != "case":
                    continue
                if r.get("status") == "ok":
                    times[int(r["bytes"])] = float(r["time_us"]["mean"])
                elif r.get("reason"):
                    reasons.append(r["reason"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return times, reasons


NT_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+\S+\s+\S+\s+-?\d+\s+([0-9.]+)\s")


def nccl_tests_times(path):
    """{bytes: out-of-place time us} from all_reduce_perf's table."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                m = NT_ROW.match(line)
                if m:
                    out[int(m.group(1))] = float(m.group(3))
    except OSError:
        pass
    return out


def refusal(log_path):
    """The line of a refused run's console that says why (collbench's own message), or ""."""
    try:
        with open(log_path) as f:
            lines = [ln.strip() for ln in f if ln.strip() and not ln.startswith("$ ")]
    except OSError:
        return ""
    said = [ln for ln in lines if ln.startswith("collbench") and "note:" not in ln]
    return (said or lines or [""])[-1]


def cmd_timing(iso_path, graph_path, nt_path="-", graph_log=None):
    nt_path = None if nt_path == "-" else nt_path
    iso, iso_why = record_times(iso_path)
    graph, graph_why = record_times(graph_path)
    nt = nccl_tests_times(nt_path) if nt_path else {}
    if not any(b in iso for b in SIZES):
        why = f": {iso_why[0]}" if iso_why else ""
        return "failed", f"no isolated all-reduce record at {', '.join(map(size_name, SIZES))}{why}", []
    table = ["| bytes | isolated (us) | -G 20 (us) | isolated / -G | nccl-tests -G 20 (us) |", "|---:|---:|---:|---:|---:|"]
    for b in SIZES:
        ratio = f"{iso[b] / graph[b]:.3f}" if b in iso and b in graph else "-"
        cells = [f"{iso[b]:.2f}" if b in iso else "-", f"{graph[b]:.2f}" if b in graph else "-", ratio]
        cells.append(f"{nt[b]:.2f}" if b in nt else "-")
        table.append(f"| {size_name(b)} | " + " | ".join(cells) + " |")
    nt_note = "" if nt else "; nccl-tests: all_reduce_perf not on PATH" if not nt_path else "; nccl-tests: no rows"
    if not any(b in graph for b in SIZES):
        why = graph_why[0] if graph_why else (graph_log and refusal(graph_log)) or "no -G record"
        return "unsupported", f"-G 20 not supported by this build: {why}{nt_note}", table
    big = [b for b in SIZES if b >= 8 << 20 and b in iso and b in graph]
    off = [b for b in big if abs(iso[b] / graph[b] - 1) > TIMING_TOLERANCE]
    ratios = ", ".join(f"{size_name(b)} {iso[b] / graph[b]:.3f}" for b in big)
    status = "ok" if big and not off else "missed"
    return status, f"isolated / -G 20 (target within {TIMING_TOLERANCE:.0%} at >= 8 MiB): {ratios}{nt_note}", table


def cmd_sweep(cb_wall, nt_wall):
    cb = float(cb_wall)
    if nt_wall == "-":
        return "ok", f"collbench default sweep {cb:.1f} s; all_reduce_perf not on PATH: no comparison", []
    nt = float(nt_wall)
    ratio = cb / nt if nt > 0 else float("inf")
    status = "ok" if ratio <= SWEEP_TARGET else "missed"
    text = f"default sweep {cb:.1f} s vs all_reduce_perf {nt:.1f} s: {ratio:.2f}x (target <= {SWEEP_TARGET}x)"
    return status, text, []


def main(argv):
    commands = {"kernels": (cmd_kernels, 1, 1), "timing": (cmd_timing, 3, 4), "sweep": (cmd_sweep, 2, 2)}
    if not argv or argv[0] not in commands:
        print(__doc__, file=sys.stderr)
        return 2
    fn, lo, hi = commands[argv[0]]
    args = argv[1:]
    if not lo <= len(args) <= hi:
        print(f"gpu_check.py {argv[0]}: expected {lo}-{hi} arguments, got {len(args)}", file=sys.stderr)
        return 2
    status, text, table = fn(*args)
    print(f"{status}\t{text}")
    for row in table:
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
