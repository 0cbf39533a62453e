"""The four plots: busbw vs size, weak scaling, per-rank heatmap, MoE traffic matrix.

Every function takes parsed records (or the weak-scaling report), writes one figure per
group in each requested format (PNG and SVG by default) into out_dir, and returns the paths
written. Figures are built on matplotlib's Agg backend without pyplot's global state, so
this runs headless and in threads. Plots only render: every number comes from the records.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import statistics
import warnings
from collections import defaultdict
from typing import Any, Iterable, Sequence

import matplotlib

matplotlib.use("Agg")

from matplotlib.colors import LogNorm, TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from .records import (
    WEAK_SCALING_SCHEMA,
    CollbenchPlotWarning,
    InputError,
    ResultFile,
    get,
    number,
    read_json_file,
)

DEFAULT_FORMATS = ("png", "svg")

# One busbw figure per distinct value of these case fields.
BUSBW_GROUP_KEYS = ("collective", "algo_requested", "dtype", "backend", "scope", "num_ranks")


# ---------------------------------------------------------------------------------------------
# Helpers


def _warn(message: str) -> None:
    warnings.warn(message, CollbenchPlotWarning, stacklevel=3)


def slug(*parts: Any) -> str:
    clean = [re.sub(r"[^A-Za-z0-9._+-]+", "-", str(p)).strip("-") for p in parts if p is not None and p != ""]
    return "_".join(c for c in clean if c)[:120] or "plot"


def format_bytes(value: float, _pos: Any = None) -> str:
    """1024 -> '1K', 1048576 -> '1M' (binary, as nccl-tests sizes are usually given)."""
    if value <= 0:
        return "0"
    for unit, scale in (("T", 2**40), ("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if value >= scale:
            q = value / scale
            return f"{q:g}{unit}"
    return f"{value:g}"


def save(fig: Figure, out_dir: str, stem: str, formats: Sequence[str] = DEFAULT_FORMATS) -> list[str]:
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for fmt in formats:
        path = os.path.join(out_dir, f"{stem}.{fmt}")
        kwargs: dict[str, Any] = {"format": fmt, "bbox_inches": "tight"}
        if fmt == "png":
            kwargs["dpi"] = 120
        if fmt == "svg":
            kwargs["metadata"] = {"Date": None}  # reproducible output
        fig.savefig(path, **kwargs)
        paths.append(path)
    return paths


def _unique_stem(stem: str, used: set[str]) -> str:
    candidate, i = stem, 2
    while candidate in used:
        candidate = f"{stem}_{i}"
        i += 1
    used.add(candidate)
    return candidate


def _cmap(name: str) -> Any:
    """A private copy of a colormap (so set_bad never changes the shared one)."""
    registry = getattr(matplotlib, "colormaps", None)
    cmap = registry[name] if registry is not None else matplotlib.cm.get_cmap(name)
    return copy.copy(cmap)


def _title(parts: Iterable[Any]) -> str:
    return " · ".join(str(p) for p in parts if p not in (None, ""))


# ---------------------------------------------------------------------------------------------
# busbw vs size


def plot_busbw(cases: Iterable[dict[str, Any]], out_dir: str, formats: Sequence[str] = DEFAULT_FORMATS) -> list[str]:
    """busbw vs bytes (log-log), one figure per (collective, algo, dtype, backend, scope,
    num_ranks); one line per source file / in-place / timing; the model's bound and expected
    busbw as dashed and dotted lines where records carry `model`; a p5..p95 band where the
    records carry `time_us` percentiles."""
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    skipped_status = skipped_size = 0
    for c in cases:
        if c.get("status", "ok") != "ok":
            skipped_status += 1
            continue
        size = number(c.get("bytes"))
        bw = number(c.get("busbw_gbps"))
        if size is None or size <= 0 or bw is None or bw <= 0:
            skipped_size += 1
            continue
        groups[tuple(c.get(k) for k in BUSBW_GROUP_KEYS)].append(c)
    if skipped_status:
        _warn(f"busbw: {skipped_status} case(s) not 'ok' (waived or failed) left out")
    if skipped_size:
        _warn(f"busbw: {skipped_size} case(s) with 0 bytes or no positive busbw left out (log axes)")

    paths: list[str] = []
    used: set[str] = set()
    for key, group in sorted(groups.items(), key=lambda kv: tuple(str(k) for k in kv[0])):
        collective, algo, dtype, backend, scope, num_ranks = key
        fig = Figure(figsize=(7.5, 4.8))
        ax = fig.add_subplot()

        series: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
        for c in group:
            series[(c.get("_source", ""), bool(c.get("in_place")), c.get("timing") or "")].append(c)
        sources = {s[0] for s in series}
        in_places = {s[1] for s in series}
        timings = {s[2] for s in series}
        for (source, in_place, timing), sc in sorted(series.items(), key=lambda kv: tuple(str(k) for k in kv[0])):
            sc = sorted(sc, key=lambda c: c["bytes"])
            x = [float(c["bytes"]) for c in sc]
            y = [float(c["busbw_gbps"]) for c in sc]
            label_parts = []
            if len(sources) > 1:
                label_parts.append(source)
            if len(in_places) > 1:
                label_parts.append("in-place" if in_place else "out-of-place")
            if len(timings) > 1:
                label_parts.append(timing)
            label = " ".join(label_parts) or "measured (p50)"
            (line,) = ax.plot(x, y, marker="o", markersize=3.5, linewidth=1.4, label=label)
            # busbw at the p95 and p5 times: the spread of the measurement.
            lo, hi, xb = [], [], []
            for c, bw in zip(sc, y, strict=True):
                p50 = number(get(c, "time_us", "p50"))
                p5 = number(get(c, "time_us", "p5"))
                p95 = number(get(c, "time_us", "p95"))
                if p50 and p5 and p95 and p5 > 0 and p95 > 0:
                    xb.append(float(c["bytes"]))
                    lo.append(bw * p50 / p95)
                    hi.append(bw * p50 / p5)
            if len(xb) >= 2:
                ax.fill_between(xb, lo, hi, color=line.get_color(), alpha=0.15, linewidth=0)

        # Model lines: one value per size (the cases of a group share the system profile).
        for field, style, name in (
            ("bound_busbw_gbps", "--", "bound"),
            ("expected_busbw_gbps", ":", "expected"),
        ):
            per_size: dict[float, float] = {}
            systems = set()
            for c in group:
                v = number(get(c, "model", field))
                if v is not None and v > 0:
                    per_size.setdefault(float(c["bytes"]), v)
                    systems.add(get(c, "model", "system", default="model"))
            if per_size:
                xs = sorted(per_size)
                label = f"{name} ({', '.join(sorted(map(str, systems)))})"
                ax.plot(xs, [per_size[s] for s in xs], style, color="black" if name == "bound" else "dimgray",
                        linewidth=1.2, label=label)

        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(format_bytes))
        ax.set_xlabel("size (bytes, nccl-tests convention)")
        ax.set_ylabel("busbw (GB/s)")
        ranks = f"{num_ranks} ranks" if num_ranks is not None else None
        ax.set_title(_title([collective, algo, dtype, backend, scope, ranks]), fontsize=10)
        ax.grid(True, which="both", linewidth=0.3, alpha=0.6)
        ax.legend(fontsize=8, loc="best")
        stem = _unique_stem(slug("busbw", collective, algo, dtype, backend, scope, f"n{num_ranks}"), used)
        paths += save(fig, out_dir, stem, formats)
    return paths


# ---------------------------------------------------------------------------------------------
# Weak scaling


def _where(*parts: Any) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _interval(value: Any, where: str, path: str) -> tuple[float, float] | None:
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or len(value) != 2
        or any(number(v) is None for v in value)
        or float(value[0]) > float(value[1])
    ):
        raise InputError(f"{path}: {where}: expected [low, high] with low <= high, or null; got {json.dumps(value)}")
    return float(value[0]), float(value[1])


def load_weak_scaling(path: str) -> dict[str, Any]:
    """Reads and checks the weak-scaling report JSON (structure in plotting/README.md)."""
    return check_weak_scaling(read_json_file(path), path)


def check_weak_scaling(report: Any, path: str = "<report>") -> dict[str, Any]:
    if not isinstance(report, dict):
        raise InputError(f"{path}: expected a JSON object with a 'groups' list")
    schema = report.get("schema")
    if schema is not None and schema != WEAK_SCALING_SCHEMA:
        raise InputError(f"{path}: schema {schema!r} is not supported; this reader reads '{WEAK_SCALING_SCHEMA}'")
    groups = report.get("groups")
    if not isinstance(groups, list) or not groups:
        raise InputError(f"{path}: 'groups' must be a non-empty list")
    for gi, g in enumerate(groups):
        w = _where("groups", gi)
        if not isinstance(g, dict):
            raise InputError(f"{path}: {w}: expected an object")
        if not isinstance(g.get("key"), dict):
            raise InputError(f"{path}: {w}.key: expected an object such as {{\"collective\": \"allreduce\", ...}}")
        points = g.get("points")
        if not isinstance(points, list) or not points:
            raise InputError(f"{path}: {w}.points: expected a non-empty list")
        seen = set()
        for pi, p in enumerate(points):
            pw = _where("groups", gi, "points", pi)
            if not isinstance(p, dict):
                raise InputError(f"{path}: {pw}: expected an object")
            n = p.get("num_ranks")
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise InputError(f"{path}: {pw}.num_ranks: expected a positive integer, got {json.dumps(n)}")
            projected = p.get("projected", False)
            if not isinstance(projected, bool):
                raise InputError(f"{path}: {pw}.projected: expected true or false, got {json.dumps(projected)}")
            if (n, projected) in seen:
                raise InputError(f"{path}: {pw}: num_ranks {n} appears twice")
            seen.add((n, projected))
            for k in ("efficiency", "pct_bound"):
                if p.get(k) is not None and number(p.get(k)) is None:
                    raise InputError(f"{path}: {pw}.{k}: expected a number or null, got {json.dumps(p.get(k))}")
            for k in ("efficiency_ci", "pi", "pct_bound_ci", "pct_bound_pi"):
                _interval(p.get(k), f"{pw}.{k}", path)
            if projected and p.get("pi") is None:
                _warn(f"{path}: {pw}: a projected point without a prediction interval 'pi'")
    return report


def _key_title(key: dict[str, Any]) -> str:
    order = ("collective", "algo", "algo_requested", "dtype", "backend", "scope", "bytes_per_rank", "bytes")
    parts = []
    for k in order:
        if k in key and key[k] is not None:
            v = key[k]
            if k in ("bytes_per_rank", "bytes") and number(v) is not None:
                v = format_bytes(float(v)) + ("/rank" if k == "bytes_per_rank" else "")
            parts.append(str(v))
    parts += [f"{k}={v}" for k, v in key.items() if k not in order and v is not None]
    return " · ".join(parts)


def measured_kind(points: Sequence[dict[str, Any]]) -> str:
    """Legend word for a group's non-projected points: simulated runs (docs/simulation.md) are never
    called measured."""
    return "simulated (SimGrid SMPI)" if points and all(p.get("simulated") for p in points) else "measured"


def split_projected(points: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Projected points within 4x of the largest measured N, and those beyond ("model only")."""
    projected = [p for p in points if p.get("projected")]
    return [p for p in projected if not p.get("model_only")], [p for p in projected if p.get("model_only")]


def plot_weak_scaling(report: dict[str, Any], out_dir: str, formats: Sequence[str] = DEFAULT_FORMATS) -> list[str]:
    """Per group: E(N) (left) and % of bound (right) vs N; measured points with their
    confidence intervals, projected points hollow with the prediction-interval band."""
    paths: list[str] = []
    used: set[str] = set()
    for gi, g in enumerate(report["groups"]):
        points = sorted(g["points"], key=lambda p: (p["num_ranks"], p.get("projected", False)))
        measured = [p for p in points if not p.get("projected", False)]
        fig = Figure(figsize=(10.5, 4.2))
        ax_e, ax_b = fig.subplots(1, 2)

        for ax, value_key, ci_key, pi_key, ideal, ylabel in (
            (ax_e, "efficiency", "efficiency_ci", "pi", 1.0, "weak-scaling efficiency E(N)"),
            (ax_b, "pct_bound", "pct_bound_ci", "pct_bound_pi", 100.0, "% of analytic bound"),
        ):
            mx = [p["num_ranks"] for p in measured if number(p.get(value_key)) is not None]
            my = [float(p[value_key]) for p in measured if number(p.get(value_key)) is not None]
            if mx:
                lo_err, hi_err = [], []
                for p in measured:
                    if number(p.get(value_key)) is None:
                        continue
                    ci = p.get(ci_key)
                    v = float(p[value_key])
                    lo_err.append(max(0.0, v - ci[0]) if ci else 0.0)
                    hi_err.append(max(0.0, ci[1] - v) if ci else 0.0)
                kind = measured_kind(measured)
                ax.errorbar(mx, my, yerr=[lo_err, hi_err], marker="o", capsize=3, linewidth=1.4,
                            color="tab:blue", label=kind + (" (95% CI)" if any(lo_err + hi_err) else ""))
            near, far = ([p for p in part if number(p.get(value_key)) is not None] for part in split_projected(points))
            px = [p["num_ranks"] for p in near]
            py = [float(p[value_key]) for p in near]
            if px:
                # Continue from the calibration point into the projection, then shade the interval.
                cal = (g.get("calibration") or {}).get("num_ranks")
                anchor = [(n, y) for n, y in zip(mx, my, strict=True) if n == cal] or list(zip(mx, my, strict=True))[-1:]
                anchor_x = [anchor[0][0]] if anchor and anchor[0][0] < px[0] else []
                anchor_y = [anchor[0][1]] if anchor_x else []
                ax.plot(anchor_x + px, anchor_y + py, "--", marker="o", markerfacecolor="white",
                        color="tab:orange", linewidth=1.2, label="projected")
                band = [(p["num_ranks"], p.get(pi_key)) for p in near if p.get(pi_key)]
                if band:
                    bx = anchor_x + [b[0] for b in band]
                    blo = anchor_y + [b[1][0] for b in band]
                    bhi = anchor_y + [b[1][1] for b in band]
                    ax.fill_between(bx, blo, bhi, color="tab:orange", alpha=0.2, linewidth=0,
                                    label="prediction interval")
            if far:
                # More than 4x beyond the largest measured N: the model alone, dashed, gray, labelled.
                ax.plot([p["num_ranks"] for p in far], [float(p[value_key]) for p in far], "--", marker="s",
                        markerfacecolor="white", color="tab:gray", linewidth=1.2, label="model only (> 4x measured N)")
            ax.axhline(ideal, color="gray", linewidth=0.8, linestyle=":", label="ideal" if ideal == 1.0 else "bound")
            all_n = sorted({p["num_ranks"] for p in points})
            ax.set_xscale("log", base=2)
            ax.set_xticks(all_n)
            ax.set_xticklabels([str(n) for n in all_n], fontsize=8)
            ax.minorticks_off()
            ax.set_xlabel("ranks N")
            ax.set_ylabel(ylabel)
            ax.grid(True, linewidth=0.3, alpha=0.6)
            if mx or px or far:
                ax.legend(fontsize=8, loc="best")
            else:
                ax.text(0.5, 0.5, "no values", transform=ax.transAxes, ha="center", va="center", color="gray")
        title = g.get("label") or _key_title(g["key"])
        if report.get("system"):
            title += f" — {report['system']}"
        if measured_kind(measured) != "measured":
            title += " — SIMULATED (SimGrid SMPI), not measured"
        fig.suptitle(title, fontsize=10)
        stem = _unique_stem(slug("weak_scaling", gi, *[v for v in g["key"].values() if not isinstance(v, (list, dict))]),
                            used)
        paths += save(fig, out_dir, stem, formats)
    return paths


# ---------------------------------------------------------------------------------------------
# Per-rank heatmap (stragglers)


def plot_rank_heatmap(files: Iterable[ResultFile], out_dir: str, formats: Sequence[str] = DEFAULT_FORMATS) -> list[str]:
    """One heatmap per (file, rank count): a row per case, a column per rank, colour = the
    rank's mean time over the median rank's. A straggler is a column that stays hot; the bar
    below averages each rank over the cases."""
    paths: list[str] = []
    used: set[str] = set()
    for f in files:
        by_n: dict[int, list[tuple[dict[str, Any], list[float]]]] = defaultdict(list)
        bad = 0
        for c in f.cases:
            times = get(c, "per_rank", "mean_us")
            if not isinstance(times, list) or not times:
                continue
            values = [number(t) for t in times]
            n = c.get("num_ranks")
            if any(v is None or v <= 0 for v in values) or (isinstance(n, int) and n != len(values)):
                bad += 1
                continue
            by_n[len(values)].append((c, values))  # type: ignore[arg-type]
        if bad:
            _warn(f"{f.path}: {bad} case(s) with an unusable per_rank.mean_us (nulls, zeros or the wrong length) left out")
        for n, rows in sorted(by_n.items()):
            rows.sort(key=lambda r: (str(r[0].get("collective")), str(r[0].get("algo_requested")),
                                     str(r[0].get("dtype")), str(r[0].get("scope")), r[0].get("bytes") or 0))
            matrix = []
            labels = []
            for c, values in rows:
                med = statistics.median(values)
                matrix.append([v / med for v in values])
                labels.append(_title([c.get("collective"), c.get("algo_requested"), c.get("dtype"),
                                      format_bytes(float(c.get("bytes") or 0))]))
            vmax = max(max(r) for r in matrix)
            vmin = min(min(r) for r in matrix)
            height = min(2.0 + 0.22 * len(rows), 30.0)
            width = min(4.0 + 0.25 * n, 30.0)
            fig = Figure(figsize=(width, height + 1.2))
            ax, ax_bar = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [max(height, 1.0), 1.0]})
            norm = TwoSlopeNorm(vmin=min(vmin, 0.999), vcenter=1.0, vmax=max(vmax, 1.001))
            im = ax.imshow(matrix, aspect="auto", cmap="coolwarm", norm=norm, interpolation="nearest")
            cb = fig.colorbar(im, ax=[ax, ax_bar], fraction=0.04, pad=0.02)
            cb.set_label("mean time / median rank")
            if len(labels) <= 60:
                ax.set_yticks(range(len(labels)))
                ax.set_yticklabels(labels, fontsize=7)
            else:
                ax.set_ylabel(f"{len(labels)} cases")
            per_rank = [statistics.fmean(r[j] for r in matrix) for j in range(n)]
            slowest = max(range(n), key=lambda j: per_rank[j])
            colors = ["tab:red" if j == slowest else "tab:gray" for j in range(n)]
            ax_bar.bar(range(n), per_rank, color=colors)
            ax_bar.axhline(1.0, color="black", linewidth=0.6)
            ax_bar.set_ylabel("mean", fontsize=8)
            ax_bar.set_ylim(min(0.95, min(per_rank) - 0.01), max(1.05, max(per_rank) + 0.01))
            ax_bar.set_xlabel("rank")
            if n <= 64:
                ax_bar.set_xticks(range(n))
                ax_bar.set_xticklabels([str(j) for j in range(n)], fontsize=7)
            host = None
            hosts = get(f.header, "hosts")
            if isinstance(hosts, list) and slowest < len(hosts) and isinstance(hosts[slowest], dict):
                host = hosts[slowest].get("host")
            ax.set_title(f"per-rank mean time — {f.label}, {n} ranks; slowest on average: rank {slowest}"
                         + (f" ({host})" if host else "") + f", {per_rank[slowest]:.2f}x median", fontsize=10)
            stem = _unique_stem(slug("rank_heatmap", os.path.splitext(os.path.basename(f.path))[0], f"n{n}"), used)
            paths += save(fig, out_dir, stem, formats)
    return paths


# ---------------------------------------------------------------------------------------------
# MoE traffic matrix


def _check_matrix(m: Any, where: str) -> list[list[float]]:
    if not isinstance(m, list) or not m or not all(isinstance(r, list) for r in m):
        raise InputError(f"{where}: workload.traffic_matrix must be a list of lists (rows = source ranks)")
    n = len(m)
    out = []
    for i, r in enumerate(m):
        if len(r) != n:
            raise InputError(f"{where}: workload.traffic_matrix row {i} has {len(r)} entries; the matrix must be "
                             f"{n} x {n}")
        row = []
        for j, v in enumerate(r):
            x = number(v)
            if x is None or x < 0:
                raise InputError(f"{where}: workload.traffic_matrix[{i}][{j}] = {json.dumps(v)}; expected bytes >= 0")
            row.append(x)
        out.append(row)
    return out


def plot_traffic_matrices(cases: Iterable[dict[str, Any]], out_dir: str,
                          formats: Sequence[str] = DEFAULT_FORMATS) -> list[str]:
    """One heatmap per case with workload.traffic_matrix: bytes from source rank (row) to
    destination rank (column), log colour scale, domain boundaries drawn from domain_sizes."""
    paths: list[str] = []
    used: set[str] = set()
    for c in cases:
        raw = get(c, "workload", "traffic_matrix")
        if raw is None:
            continue
        where = f"{c.get('_path', '?')}:{c.get('_line', '?')}"
        m = _check_matrix(raw, where)
        n = len(m)
        if isinstance(c.get("num_ranks"), int) and c["num_ranks"] != n:
            raise InputError(f"{where}: workload.traffic_matrix is {n} x {n} but num_ranks is {c['num_ranks']}")
        positives = [v for r in m for v in r if v > 0]
        size = min(3.5 + 0.12 * n, 16.0)
        fig = Figure(figsize=(size + 1.5, size))
        ax = fig.add_subplot()
        cmap = _cmap("viridis")
        cmap.set_bad("white")  # zero bytes on the log scale
        if positives and max(positives) / min(positives) > 10:
            masked = [[v if v > 0 else math.nan for v in r] for r in m]
            im = ax.imshow(masked, cmap=cmap, norm=LogNorm(vmin=min(positives), vmax=max(positives)),
                           interpolation="nearest")
        else:
            im = ax.imshow(m, cmap=cmap, interpolation="nearest")
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04).set_label("bytes sent (source row -> destination column)")
        domains = c.get("domain_sizes")
        off_domain_text = ""
        if isinstance(domains, list) and len(domains) > 1 and all(isinstance(d, int) and d > 0 for d in domains) \
                and sum(domains) == n:
            edges, start = [], 0
            domain_of = []
            for d_idx, d in enumerate(domains):
                domain_of += [d_idx] * d
                start += d
                edges.append(start)
            for e in edges[:-1]:
                ax.axhline(e - 0.5, color="white", linewidth=1.0)
                ax.axvline(e - 0.5, color="white", linewidth=1.0)
            # Share of the bytes that leave their rank (diagonal excluded) that also leave the domain.
            sent = sum(m[i][j] for i in range(n) for j in range(n) if i != j)
            off = sum(m[i][j] for i in range(n) for j in range(n) if domain_of[i] != domain_of[j])
            if sent > 0:
                off_domain_text = f"; off-domain {100.0 * off / sent:.1f}% of bytes sent"
        ax.set_xlabel("destination rank")
        ax.set_ylabel("source rank")
        w = c.get("workload") or {}
        tokens = w.get("tokens_per_rank")
        ax.set_title(_title([w.get("name"), c.get("collective"),
                             f"{tokens} tokens/rank" if tokens is not None else None,
                             f"{n} ranks"]) + off_domain_text, fontsize=10)
        stem = _unique_stem(slug("traffic", c.get("collective"), w.get("name"), f"n{n}", f"t{tokens}"), used)
        paths += save(fig, out_dir, stem, formats)
    return paths
