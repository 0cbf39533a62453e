"""The training-step plot: `collbench step --format json` output (docs/step.md) as, per GPU count,
a stacked bar of the step time (compute, exposed EP, TP and PP communication, the pipeline bubble,
exposed DP) beside delivered TFLOP/s per GPU and its retention, in the weak-scaling plot's style.
Plots only render: every number comes from the JSON."""

from __future__ import annotations

import json
from typing import Any, Sequence

from matplotlib.figure import Figure

from .plots import DEFAULT_FORMATS, _where, save, slug
from .records import InputError, read_json_file

# Stack order, bottom to top: (label, colour, how the point gives it in microseconds).
SEGMENTS = (
    ("compute", "tab:blue", lambda p: p["compute_us"]),
    ("exposed EP", "tab:red", lambda p: group_exposed_us(p, "ep")),
    ("exposed TP", "tab:orange", lambda p: group_exposed_us(p, "tp")),
    ("exposed PP", "tab:purple", lambda p: group_exposed_us(p, "pp")),
    ("pipeline bubble", "tab:gray", lambda p: p["bubble_us"]),
    ("exposed DP", "tab:green", lambda p: p["dp_exposed_us"]),
)
POINT_NUMBERS = ("step_time_s", "compute_us", "bubble_us", "dp_exposed_us", "delivered_tflops_per_gpu", "retention")
PHASE_NUMBERS = ("exposed_per_step_us",)
PHASE_TEXTS = ("name", "group", "source")


def group_exposed_us(point: dict[str, Any], group: str) -> float:
    """Exposed time per step of the phases whose `group` is `group` (tp, ep or pp)."""
    return sum(float(ph["exposed_per_step_us"]) for ph in point["phases"] if ph["group"] == group)


def data_source(report: dict[str, Any]) -> str:
    """'model' when any phase's collective time came from the model (fallback included), else 'measured'."""
    sources = (ph["source"] for p in report["points"] for ph in p["phases"])
    return "model" if any(s.startswith("model") for s in sources) else "measured"


def load_step(path: str) -> dict[str, Any]:
    """Reads and checks `collbench step --format json` output."""
    return check_step(read_json_file(path), path)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _check_point(p: Any, pi: int, path: str) -> None:
    w = _where("points", pi)
    if not isinstance(p, dict):
        raise InputError(f"{path}: {w}: expected an object")
    gpus = p.get("gpus")
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1:
        raise InputError(f"{path}: {w}.gpus: expected a positive integer, got {json.dumps(gpus)}")
    for key in POINT_NUMBERS:
        if not _is_number(p.get(key)):
            raise InputError(f"{path}: {w}.{key}: expected a number, got {json.dumps(p.get(key))}")
    if not isinstance(p.get("phases"), list):
        raise InputError(f"{path}: {w}.phases: expected a list")
    for qi, ph in enumerate(p["phases"]):
        pw = _where("points", pi, "phases", qi)
        if not isinstance(ph, dict):
            raise InputError(f"{path}: {pw}: expected an object")
        for key in PHASE_NUMBERS:
            if not _is_number(ph.get(key)):
                raise InputError(f"{path}: {pw}.{key}: expected a number, got {json.dumps(ph.get(key))}")
        for key in PHASE_TEXTS:
            if not isinstance(ph.get(key), str):
                raise InputError(f"{path}: {pw}.{key}: expected a string, got {json.dumps(ph.get(key))}")


def check_step(report: Any, path: str = "<step>") -> dict[str, Any]:
    if not isinstance(report, dict):
        raise InputError(f"{path}: expected a JSON object with \"kind\": \"step\" (collbench step --format json)")
    if report.get("kind") != "step":
        raise InputError(f"{path}: kind: expected \"step\" (collbench step --format json), "
                         f"got {json.dumps(report.get('kind'))}")
    points = report.get("points")
    if not isinstance(points, list) or not points:
        raise InputError(f"{path}: points: expected a non-empty list")
    for pi, p in enumerate(points):
        _check_point(p, pi, path)
    return report


def _title(report: dict[str, Any]) -> str:
    system = report.get("system")
    name = system.get("name") if isinstance(system, dict) else system
    parts = [f"{report.get('workload', '?')}, layout {report.get('layout', '?')}, {name or '?'}"]
    source = data_source(report)
    parts.append("collective times: MODEL (analytic, not measured)" if source == "model"
                 else "collective times: measured")
    return " — ".join(parts)


def step_figure(report: dict[str, Any]) -> Figure:
    """Left: the stacked step time (s) per GPU count; right: delivered TFLOP/s per GPU (bars) and
    retention (line, second axis)."""
    points = sorted(report["points"], key=lambda p: p["gpus"])
    x = list(range(len(points)))
    labels = [str(p["gpus"]) for p in points]
    fig = Figure(figsize=(10.5, 4.2))
    ax_t, ax_f = fig.subplots(1, 2)
    bottom = [0.0] * len(points)
    for label, colour, value in SEGMENTS:
        heights = [value(p) / 1e6 for p in points]
        ax_t.bar(x, heights, 0.6, bottom=bottom, color=colour, label=label)
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    ax_t.plot(x, [p["step_time_s"] for p in points], linestyle="none", marker="_", markersize=18, color="black",
              label="step time")
    ax_t.set_ylabel("time per step (s)")
    ax_f.bar(x, [p["delivered_tflops_per_gpu"] for p in points], 0.6, color="tab:blue",
             label="delivered TFLOP/s per GPU")
    ax_f.set_ylabel("delivered TFLOP/s per GPU")
    ax_r = ax_f.twinx()
    ax_r.plot(x, [100.0 * p["retention"] for p in points], marker="o", color="tab:orange", label="retention")
    ax_r.set_ylabel("retention (% of the first GPU count)")
    ax_r.set_ylim(0, 105)
    for ax in (ax_t, ax_f):
        ax.set_xticks(x)
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_xlabel("GPUs")
        ax.grid(True, axis="y", linewidth=0.3, alpha=0.6)
    ax_t.legend(fontsize=7, loc="best")
    handles = ax_f.get_legend_handles_labels()[0] + ax_r.get_legend_handles_labels()[0]
    ax_f.legend(handles, [h.get_label() for h in handles], fontsize=7, loc="lower left")
    fig.suptitle(_title(report), fontsize=10)
    return fig


def plot_step(report: dict[str, Any], out_dir: str, formats: Sequence[str] = DEFAULT_FORMATS) -> list[str]:
    system = report.get("system")
    name = system.get("name") if isinstance(system, dict) else system
    stem = slug("step", report.get("workload"), report.get("layout"), name)
    return save(step_figure(report), out_dir, stem, formats)
