"""Command line: python3 -m collbench_plot {busbw,weak-scaling,rank-heatmap,traffic-matrix,step,step-published,
published-points} ...

Writes PNG and SVG files into --out (default: the current directory), prints their paths,
and exits 0; bad input (unreadable file, another schema version, malformed report) exits 2
with a message naming the file and line, as collbench does.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Sequence

from . import __version__
from .records import SCHEMA, CollbenchPlotWarning, InputError, all_cases, read_many


def _formats(text: str) -> list[str]:
    formats = [f.strip().lower() for f in text.split(",") if f.strip()]
    bad = [f for f in formats if f not in ("png", "svg", "pdf")]
    if not formats or bad:
        raise argparse.ArgumentTypeError(f"unknown format(s) {', '.join(bad) or text!r}; accepted: png, svg, pdf")
    return formats


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python3 -m collbench_plot",
        description=f"Plots from collbench result files (JSONL, schema {SCHEMA}).",
    )
    p.add_argument("--version", action="version", version=f"collbench_plot {__version__} (reads {SCHEMA})")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--out", "-o", default=".", metavar="DIR", help="output folder (default: current directory)")
        sp.add_argument("--format", default="png,svg", type=_formats, metavar="LIST",
                        help="comma list of png, svg, pdf (default: png,svg)")

    sp = sub.add_parser("busbw", help="busbw vs size (log-log) with bound and expected lines")
    sp.add_argument("files", nargs="+", metavar="FILE.jsonl")
    common(sp)
    sp = sub.add_parser("weak-scaling", help="E(N) and %% of bound vs N from a weak-scaling report JSON")
    sp.add_argument("report", metavar="REPORT.json")
    common(sp)
    sp = sub.add_parser("step", help="step time stacked by phase, TFLOP/s per GPU and retention (collbench step JSON)")
    sp.add_argument("report", metavar="STEP.json")
    common(sp)
    sp = sub.add_parser("step-published",
                        help="the step model's TFLOP/s per GPU beside each layout's published figures (step JSONs)")
    sp.add_argument("reports", nargs="+", metavar="STEP.json")
    common(sp)
    sp = sub.add_parser("published-points",
                        help="published nccl-tests points (profiles/published/SYSTEM.yaml) with the model's lines")
    sp.add_argument("published", metavar="PUBLISHED.yaml")
    sp.add_argument("model", metavar="MODEL.json", help="collbench model COLLECTIVE ... --format json at those GPUs")
    sp.add_argument("--collective", default="allreduce", help="which points (default: allreduce)")
    common(sp)
    sp = sub.add_parser("rank-heatmap", help="per-rank mean time heatmap (stragglers)")
    sp.add_argument("files", nargs="+", metavar="FILE.jsonl")
    common(sp)
    sp = sub.add_parser("traffic-matrix", help="MoE traffic matrix heatmaps (workload.traffic_matrix)")
    sp.add_argument("files", nargs="+", metavar="FILE.jsonl")
    common(sp)
    return p


def run(args: argparse.Namespace) -> list[str]:
    # Imported here so that --help and --version work without matplotlib.
    from . import plots

    if args.command == "weak-scaling":
        return plots.plot_weak_scaling(plots.load_weak_scaling(args.report), args.out, args.format)
    if args.command == "step":
        from . import step_plot

        return step_plot.plot_step(step_plot.load_step(args.report), args.out, args.format)
    if args.command in ("step-published", "published-points"):
        from . import evidence_plots as ev

        if args.command == "step-published":
            return ev.plot_step_published(ev.load_step_reports(args.reports), args.out, args.format)
        return ev.plot_published_points(ev.load_published(args.published), ev.load_model_rows(args.model),
                                        args.collective, args.out, args.format)
    files = read_many(args.files)
    names = ", ".join(args.files)
    if args.command == "busbw":
        paths = plots.plot_busbw(all_cases(files), args.out, args.format)
        what = "case with status 'ok', bytes > 0 and busbw_gbps > 0"
    elif args.command == "rank-heatmap":
        paths = plots.plot_rank_heatmap(files, args.out, args.format)
        what = "case with per_rank.mean_us"
    else:
        paths = plots.plot_traffic_matrices(all_cases(files), args.out, args.format)
        what = "case with workload.traffic_matrix"
    if not paths:
        raise InputError(f"nothing to plot: no {what} in {names}")
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def show(message, category, filename, lineno, file=None, line=None):
        prefix = "warning" if issubclass(category, CollbenchPlotWarning) else category.__name__
        print(f"collbench_plot: {prefix}: {message}", file=sys.stderr)

    warnings.showwarning = show
    warnings.simplefilter("always", CollbenchPlotWarning)  # one line per file, not once per process
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print(
            "collbench_plot: error: matplotlib is not installed for this Python "
            f"({sys.executable}); install it with 'apt-get install python3-matplotlib' (Debian/Ubuntu, then "
            "use /usr/bin/python3) or 'python3 -m pip install matplotlib'",
            file=sys.stderr,
        )
        return 2
    try:
        paths = run(args)
    except InputError as e:
        print(f"collbench_plot: error: {e}", file=sys.stderr)
        return 2
    for p in paths:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
