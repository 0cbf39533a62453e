"""The README's evidence against real hardware (scripts/front-page-figures):

- `step-published`: per shipped layout, the step model's delivered TFLOP/s per GPU (`collbench step
  --format json`, a MODEL output) beside the published figures that layout carries (NVIDIA's
  Megatron-Bridge performance summary, one point per release; docs/step.md).
- `published-points`: busbw vs size of the published nccl-tests points of a system
  (profiles/published/<system>.yaml: measured by their source, cited) with the model's bound and
  expected value at the same GPU counts (`collbench model ... --format json`).

Plots only render: every number comes from the files given."""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from matplotlib.figure import Figure

from .plots import DEFAULT_FORMATS, format_bytes, save, slug
from .records import InputError, read_json_file
from .step_plot import check_step

# ---------------------------------------------------------------------------------------------
# step-published


def published_step_points(reports: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per (report, point) that carries published figures: label, model and published TFLOP/s."""
    out = []
    for r in reports:
        system = r.get("system")
        name = system.get("name") if isinstance(system, dict) else system
        for p in r["points"]:
            published = p.get("published") or []
            if not published:
                continue
            figures = [float(q["tflops_per_gpu"]) for q in published]
            out.append({"label": f"{r.get('workload', '?')}\n{name}\n{p['gpus']} GPUs",
                        "model": float(p["delivered_tflops_per_gpu"]), "published": figures,
                        "releases": [str(q.get("release", "?")) for q in published]})
    return out


def load_step_reports(paths: Sequence[str]) -> list[dict[str, Any]]:
    reports = [check_step(read_json_file(path), path) for path in paths]
    for path, r in zip(paths, reports, strict=True):
        for pi, p in enumerate(r["points"]):
            for qi, q in enumerate(p.get("published") or []):
                v = q.get("tflops_per_gpu") if isinstance(q, dict) else None
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise InputError(f"{path}: points[{pi}].published[{qi}].tflops_per_gpu: expected a number, "
                                     f"got {json.dumps(v)}")
    if not published_step_points(reports):
        raise InputError(f"nothing to plot: no point with published figures in {', '.join(paths)}")
    return reports


def step_published_figure(reports: Sequence[dict[str, Any]]) -> Figure:
    points = published_step_points(reports)
    x = list(range(len(points)))
    fig = Figure(figsize=(max(6.0, 1.5 * len(points) + 2), 4.4))
    ax = fig.subplots()
    ax.bar(x, [p["model"] for p in points], 0.55, color="tab:blue", alpha=0.8,
           label="MODEL: collbench step, defaults (not measured)")
    first = True
    for xi, p in zip(x, points, strict=True):
        ax.plot([xi] * len(p["published"]), p["published"], linestyle="none", marker="o", color="black",
                markersize=5, label="published: NVIDIA Megatron-Bridge performance summary (one per release)"
                if first else None)
        first = False
        low, high = p["model"] / max(p["published"]), p["model"] / min(p["published"])
        ratio = f"x{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"x{low:.2f}-{high:.2f}"
        ax.annotate(ratio, (xi, p["model"]), textcoords="offset points", xytext=(0, 3), ha="center", fontsize=7)
    ax.set_xticks(x)
    ax.set_xticklabels([p["label"] for p in points], fontsize=7)
    ax.set_ylabel("TFLOP/s per GPU (training step)")
    ax.set_ylim(0, 1.15 * max(max(p["model"], *p["published"]) for p in points))
    ax.grid(True, axis="y", linewidth=0.3, alpha=0.6)
    ax.legend(fontsize=7, loc="lower right")
    fig.suptitle("Training step: the model's TFLOP/s per GPU against published figures "
                 "(label: model / published)", fontsize=9)
    return fig


def plot_step_published(reports: Sequence[dict[str, Any]], out_dir: str,
                        formats: Sequence[str] = DEFAULT_FORMATS) -> list[str]:
    return save(step_published_figure(reports), out_dir, "step_published", formats)


# ---------------------------------------------------------------------------------------------
# published-points

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*$", re.I)
_BUSBW = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*GB/s\s*$")


def parse_size(text: Any, where: str) -> int:
    """nccl-tests sizes of the published files: 4G = 4 GiB (1024^n), or a plain byte count."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    m = _SIZE.match(str(text))
    if not m:
        raise InputError(f"{where}: expected a size such as 4G, got {json.dumps(text)}")
    return int(float(m.group(1)) * 1024 ** " KMGT".index((m.group(2) or " ").upper()))


def load_published(path: str) -> dict[str, Any]:
    """profiles/published/<system>.yaml: its points as numbers (bytes, busbw in GB/s, GPUs, domains)."""
    try:
        import yaml
    except ImportError as e:
        raise InputError("reading published points needs PyYAML (apt-get install python3-yaml)") from e
    try:
        with open(path) as f:
            doc = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        raise InputError(f"{path}: {e}") from e
    if not isinstance(doc, dict) or not isinstance(doc.get("points"), list):
        raise InputError(f"{path}: expected 'system' and a list 'points' (profiles/published/README.md)")
    points = []
    for i, p in enumerate(doc["points"]):
        where = f"{path}: points[{i}]"
        sizes = p.get("domain_sizes") if isinstance(p, dict) else None
        if not isinstance(sizes, list) or not sizes or not all(isinstance(s, int) for s in sizes):
            raise InputError(f"{where}.domain_sizes: expected a list of GPU counts")
        m = _BUSBW.match(str(p.get("busbw", "")))
        if not m:
            raise InputError(f"{where}.busbw: expected e.g. 839.16GB/s, got {json.dumps(p.get('busbw'))}")
        points.append({"collective": p.get("collective"), "gpus": sum(sizes), "domains": len(sizes),
                       "bytes": parse_size(p.get("bytes"), f"{where}.bytes"), "busbw": float(m.group(1)),
                       "source": str(p.get("source", ""))})
    return {"system": doc.get("system"), "points": points}


def load_model_rows(path: str) -> list[dict[str, Any]]:
    """`collbench model COLLECTIVE ... --format json`: the modelled rows (GPUs, bytes, bound, expected)."""
    doc = read_json_file(path)
    rows = doc.get("rows") if isinstance(doc, dict) else None
    if doc.get("kind") != "model" or not isinstance(rows, list):
        raise InputError(f"{path}: expected collbench model --format json output (\"kind\": \"model\", \"rows\")")
    out = []
    for i, r in enumerate(rows):
        if not r.get("modelled"):
            continue
        for key in ("bytes", "bound_busbw_gbps", "expected_busbw_gbps"):
            if not isinstance(r.get(key), (int, float)):
                raise InputError(f"{path}: rows[{i}].{key}: expected a number, got {json.dumps(r.get(key))}")
        out.append({"gpus": sum(r["domain_sizes"]), "bytes": r["bytes"], "bound": r["bound_busbw_gbps"],
                    "expected": r["expected_busbw_gbps"], "algo": r.get("algo_modelled", "?")})
    return out


def published_points_figure(published: dict[str, Any], rows: Sequence[dict[str, Any]], collective: str) -> Figure:
    points = [p for p in published["points"] if p["collective"] == collective]
    gpu_counts = sorted({p["gpus"] for p in points})
    if not points:
        raise InputError(f"nothing to plot: no published {collective} point")
    fig = Figure(figsize=(7.5, 4.4))
    ax = fig.subplots()
    colours = ["tab:blue", "tab:red", "tab:green", "tab:purple"]
    for i, n in enumerate(gpu_counts):
        colour = colours[i % len(colours)]
        model = sorted((r for r in rows if r["gpus"] == n), key=lambda r: r["bytes"])
        mine = [p for p in points if p["gpus"] == n]
        domains = mine[0]["domains"]
        if model:
            ax.plot([r["bytes"] for r in model], [r["bound"] for r in model], linestyle="--", color=colour,
                    label=f"{n} GPUs: MODEL bound")
            ax.plot([r["bytes"] for r in model], [r["expected"] for r in model], linestyle="-", color=colour,
                    label=f"{n} GPUs: MODEL expected ({model[-1]['algo']})")
        ax.plot([p["bytes"] for p in mine], [p["busbw"] for p in mine], linestyle="none", marker="o",
                markersize=7, color=colour, markeredgecolor="black",
                label=f"{n} GPUs ({domains} rack{'s' if domains > 1 else ''}): published, measured by its source")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(format_bytes)
    ax.set_xlabel("size (nccl-tests convention)")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_ylim(bottom=0)
    ax.grid(True, linewidth=0.3, alpha=0.6)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    sources = sorted({p["source"].split(" (")[0].split(",")[0] for p in points})
    fig.suptitle(f"{published['system']} {collective}: published nccl-tests points (measured: {', '.join(sources)})\n"
                 "against the MODEL's bound and expected value at the same GPU counts", fontsize=9)
    return fig


def plot_published_points(published: dict[str, Any], rows: Sequence[dict[str, Any]], collective: str, out_dir: str,
                          formats: Sequence[str] = DEFAULT_FORMATS) -> list[str]:
    fig = published_points_figure(published, rows, collective)
    return save(fig, out_dir, slug("published", published.get("system"), collective), formats)
