"""`collbench report` and `collbench import` end to end: real CPU runs at 1, 2 and 4 ranks become a
weak-scaling report folder (Markdown, JSON in the plotting package's structure, PNGs); nccl-tests
logs become records that validate against the schema; two runs give a comparison; bad files exit 2
naming file and line."""
import json
import os
import struct
import subprocess
from pathlib import Path

import pytest

from conftest import FAST, SOURCE_DIR, read_jsonl, run

FIXTURES = SOURCE_DIR / "tests" / "data" / "nccl-tests"
PYTHON = os.environ.get("COLLBENCH_PYTHON", "/usr/bin/python3" if Path("/usr/bin/python3").exists() else "python3")


def has_matplotlib():
    return subprocess.run([PYTHON, "-c", "import matplotlib"], capture_output=True).returncode == 0


def png_size(path):
    """(width, height) from the PNG header; fails on anything that is not a PNG."""
    data = Path(path).read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """allreduce 1K..64K at 1, 2 and 4 ranks (one results file each), all with --progress yield: the
    auto mode yields only where ranks outnumber cores (4 here), and weak scaling leaves a point of
    another mode out of E(N)."""
    d = tmp_path_factory.mktemp("runs")
    paths = []
    for n in (1, 2, 4):
        out = d / f"ar{n}.jsonl"
        p = run(["run", "allreduce", "-b", "1K", "-e", "64K", "-f", "8", "--progress", "yield", "--format", "none",
                 "--out", out] + FAST, np=n)
        assert p.returncode == 0, p.stderr
        paths.append(out)
    return paths


def check_weak_scaling_json(report):
    """The structure plotting/README.md documents for `python3 -m collbench_plot weak-scaling`."""
    assert report["schema"] == "collbench.weak_scaling/1"
    assert isinstance(report["groups"], list) and report["groups"]
    for g in report["groups"]:
        assert isinstance(g["key"], dict)
        assert isinstance(g["points"], list) and g["points"]
        seen = set()
        for p in g["points"]:
            n = p["num_ranks"]
            assert isinstance(n, int) and not isinstance(n, bool) and n >= 1
            projected = p.get("projected", False)
            assert isinstance(projected, bool)
            assert (n, projected) not in seen
            seen.add((n, projected))
            for k in ("efficiency", "pct_bound"):
                assert k in p and (p[k] is None or isinstance(p[k], (int, float)))
            for k in ("efficiency_ci", "pi", "pct_bound_ci", "pct_bound_pi"):
                v = p.get(k)
                assert v is None or (len(v) == 2 and v[0] <= v[1]), (k, v)
            if projected:
                assert "p50_us" not in p and "busbw_gbps" not in p  # never mixed into measured columns
            else:
                assert p["p50_us"] > 0


def test_weak_scaling_report_folder(runs, tmp_path, validator):
    for path in runs:
        for rec in read_jsonl(path):
            validator.validate(rec)
    out = tmp_path / "report"
    p = run(["report", "weak-scaling"] + runs + ["--out", out])
    assert p.returncode == 0, p.stderr
    md = (out / "report.md").read_text()
    report = json.loads((out / "report.json").read_text())
    check_weak_scaling_json(report)
    # One group per size, each with measured points at 1, 2 and 4 ranks; no system: no projection.
    assert len(report["groups"]) == 3
    for g in report["groups"]:
        assert g["key"]["collective"] == "allreduce"
        assert [pt["num_ranks"] for pt in g["points"]] == [1, 2, 4]
        assert g["reference_ranks"] == 2  # busbw is 0 on one rank
        e = {pt["num_ranks"]: pt for pt in g["points"]}
        assert e[1]["efficiency"] is None
        assert e[2]["efficiency"] == 1.0
        assert e[4]["efficiency"] > 0
        assert e[4]["efficiency_ci"][0] <= e[4]["efficiency"] <= e[4]["efficiency_ci"][1]
        # E(N) is the busbw ratio of the records themselves.
        assert abs(e[4]["efficiency"] - e[4]["busbw_gbps"] / e[2]["busbw_gbps"]) < 1e-9
        assert e[4]["packing"] and e[4]["slowest_rank"]["host"]
    assert "no projection" in report["projection_status"]
    assert "# Weak scaling" in md and "E(N)" in md and "### Measured" in md
    assert "no projection" in md

    pngs = sorted(out.glob("*.png"))
    if not has_matplotlib():
        assert "matplotlib" in p.stderr
        pytest.skip(f"{PYTHON} has no matplotlib: report.md and report.json checked, PNGs not drawn")
    ws = [x for x in pngs if x.name.startswith("weak_scaling_")]
    assert len(ws) == 3, [x.name for x in pngs]
    assert any(x.name.startswith("busbw_") for x in pngs)
    assert any(x.name.startswith("rank_heatmap_") for x in pngs)
    for x in pngs:
        assert x.stat().st_size > 10_000, x
        w, h = png_size(x)
        assert 400 <= w <= 4000 and 200 <= h <= 4000, (x.name, w, h)
    w, h = png_size(ws[0])
    assert w > h  # E(N) and % of bound side by side
    for x in ws:
        assert f"]({x.name})" in md  # linked from the report


def test_weak_scaling_without_matplotlib_writes_md_and_json(runs, tmp_path):
    out = tmp_path / "report"
    p = run(["report", "weak-scaling"] + runs + ["--out", out, "--ranks", "none"],
            env={"COLLBENCH_PYTHON": str(tmp_path / "no-such-python3")})
    assert p.returncode == 0, p.stderr
    assert (out / "report.md").stat().st_size > 0
    check_weak_scaling_json(json.loads((out / "report.json").read_text()))
    assert not list(out.glob("*.png"))
    assert "apt-get install python3-matplotlib" in p.stderr and "pip install matplotlib" in p.stderr
    assert "apt-get install python3-matplotlib" in (out / "report.md").read_text()


def with_model(src, dst, system):
    """A copy of a results file whose cases carry a model object naming `system`."""
    lines = []
    for rec in read_jsonl(src):
        if rec["kind"] == "case" and rec["time_us"]:
            p50 = rec["time_us"]["p50"]
            rec["model"] = {"system": system, "bound_time_us": 0.5 * p50, "bound_algbw_gbps": 2 * rec["algbw_gbps"],
                            "bound_busbw_gbps": 2 * rec["busbw_gbps"], "expected_time_us": 0.8 * p50,
                            "expected_busbw_gbps": 1.25 * rec["busbw_gbps"], "efficiency": 0.5,
                            "wire_bytes_per_rank": 0.0}
        lines.append(json.dumps(rec))
    dst.write_text("\n".join(lines) + "\n")
    return dst


def test_projection_refused_across_systems_unless_asked(runs, tmp_path, validator):
    files = [with_model(r, tmp_path / r.name, "h100-hgx") for r in runs]
    for rec in read_jsonl(files[1]):
        validator.validate(rec)
    p = run(["report", "weak-scaling"] + files + ["--system", "gb300-nvl72", "--out", tmp_path / "refused", "--no-plots"])
    assert p.returncode == 2
    assert "--project-onto" in p.stderr and "h100-hgx" in p.stderr
    out = tmp_path / "onto"
    p = run(["report", "weak-scaling"] + files + ["--project-onto", "gb300-nvl72", "--ranks", "8,256",
                                                    "--out", out, "--no-plots"])
    assert p.returncode == 0, p.stderr
    report = json.loads((out / "report.json").read_text())
    check_weak_scaling_json(report)
    assert report["cross_system"] is True
    assert "projected onto gb300-nvl72" in report["title"] and "h100-hgx" in report["title"]
    md = (out / "report.md").read_text()
    assert md.splitlines()[0].startswith("# Weak scaling measured on h100-hgx, projected onto gb300-nvl72")
    projected = [pt for g in report["groups"] for pt in g["points"] if pt["projected"]]
    assert {pt["num_ranks"] for pt in projected} == {8, 256}
    for pt in projected:
        assert pt["pi"][0] <= pt["efficiency"] <= pt["pi"][1]
        assert pt["extrapolation_warning"] == (pt["num_ranks"] > 16)
    assert "more than 4x" in p.stderr  # 256 is 64x the largest measured N


def test_report_compares_two_runs(tmp_path):
    paths = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.jsonl"
        p = run(["run", "allreduce", "-b", "1K", "-e", "64K", "-f", "8", "--format", "none", "--out", out] + FAST, np=2)
        assert p.returncode == 0, p.stderr
        paths.append(out)
    p = run(["report"] + paths)
    assert p.returncode == 0, p.stderr
    assert f"# file: {paths[0]}" in p.stdout
    assert f"# compare by run: {paths[1]}  vs baseline  {paths[0]}" in p.stdout
    rows = [l.split() for l in p.stdout.splitlines() if l.startswith(" ") and "allreduce" in l and len(l.split()) == 16]
    assert [int(r[7]) for r in rows] == [1024, 8192, 65536]
    for r in rows:
        base, other, ratio = float(r[8]), float(r[9]), float(r[10])
        assert abs(ratio - other / base) < 0.01 * ratio + 0.002
    csv = run(["report"] + paths + ["--format", "csv"])
    assert csv.returncode == 0 and csv.stdout.startswith("compare_by,baseline,other,")
    assert len(csv.stdout.strip().splitlines()) == 4
    md = run(["report"] + paths + ["--format", "markdown", "--compare-by", "run"])
    assert md.returncode == 0 and "## Comparison by run" in md.stdout and "| allreduce |" in md.stdout
    one = run(["report", paths[0], "--format", "csv"])
    assert one.returncode == 0 and one.stdout.startswith("file,collective,")


def test_report_bad_file_names_file_and_line(runs, tmp_path):
    lines = runs[1].read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], lines[1][:-10] + "#", lines[2]]) + "\n")
    for args in (["report", bad], ["report", "weak-scaling", bad, "--out", tmp_path / "r", "--no-plots"]):
        p = run(args)
        assert p.returncode == 2, p.stderr
        assert f"{bad}:2:" in p.stderr, p.stderr
    missing = run(["report", tmp_path / "missing.jsonl"])
    assert missing.returncode == 2 and "missing.jsonl" in missing.stderr


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*") if p.suffix in (".txt", ".json")))
def test_import_fixture_validates(name, tmp_path, validator):
    out = tmp_path / "imported.jsonl"
    p = run(["import", FIXTURES / name, "--out", out])
    assert p.returncode == 0, p.stderr
    records = read_jsonl(out)
    header, cases = records[0], records[1:]
    assert header["kind"] == "run_header" and header["launcher"] == "singleton"
    assert header["config"]["source"] == "nccl-tests"
    assert cases
    for rec in records:
        validator.validate(rec)
    for c in cases:
        assert c["source"] == "nccl-tests" and c["backend"] == "nccl"
        assert c["domain_sizes"] == [c["num_ranks"]]
        assert c["samples_us"] and c["time_us"]["p50"] > 0
        if c["bytes"] > 0 and c["time_us"]["p50"] > 1.0:
            from_time = c["bytes"] / (c["time_us"]["p50"] * 1e-6) / 1e9
            assert abs(c["algbw_gbps"] - from_time) <= 0.006 + 0.001 * from_time, c["case_key"]


def test_import_preserves_busbw_and_feeds_reports(tmp_path):
    out = tmp_path / "ar8.jsonl"
    p = run(["import", FIXTURES / "all_reduce_8xH100.txt", "--out", out])
    assert p.returncode == 0, p.stderr
    log_rows = {}
    for line in (FIXTURES / "all_reduce_8xH100.txt").read_text().splitlines():
        f = line.split()
        if f and f[0].isdigit() and len(f) >= 13:
            log_rows[int(f[0])] = (float(f[5]), float(f[7]), float(f[9]), float(f[11]))
    cases = read_jsonl(out)[1:]
    assert len(cases) == 2 * len(log_rows)
    for c in cases:
        t_out, bus_out, t_in, bus_in = log_rows[c["bytes"]]
        assert c["time_us"]["p50"] == (t_in if c["in_place"] else t_out)
        assert c["busbw_gbps"] == (bus_in if c["in_place"] else bus_out)
    # Existing output needs --force; the imported file reads as a report.
    again = run(["import", FIXTURES / "all_reduce_8xH100.txt", "--out", out])
    assert again.returncode == 2 and "--force" in again.stderr
    assert run(["import", FIXTURES / "all_reduce_8xH100.txt", "--out", out, "--force"]).returncode == 0
    table = run(["report", out])
    assert table.returncode == 0 and "allreduce" in table.stdout


def test_import_bad_log_exits_2_with_line(tmp_path):
    bad = tmp_path / "all_reduce_perf.txt"
    text = (FIXTURES / "all_reduce_8xH100.txt").read_text().splitlines()
    idx = next(i for i, l in enumerate(text) if l.split() and l.split()[0] == "2048")
    text[idx] = text[idx].replace("float", "float 12x", 1)
    bad.write_text("\n".join(text) + "\n")
    p = run(["import", bad, "--out", tmp_path / "x.jsonl"])
    assert p.returncode == 2
    assert f"{bad}:{idx + 1}" in p.stderr, p.stderr
    assert not (tmp_path / "x.jsonl").exists()
    empty = tmp_path / "empty.txt"
    empty.write_text("nothing here\n")
    p = run(["import", empty, "--out", tmp_path / "y.jsonl"])
    assert p.returncode == 2 and "empty.txt" in p.stderr


# ---- placement of imported logs (docs/report.md, "Placement of imported logs") ------------------


def test_import_with_system_places_and_models(tmp_path, validator):
    out = tmp_path / "rs16.jsonl"
    p = run(["import", FIXTURES / "reduce_scatter_16rank_mpirun_tagged.txt", "--system", "h100-hgx", "--out", out])
    assert p.returncode == 0, p.stderr
    records = read_jsonl(out)
    for rec in records:
        validator.validate(rec)
    header, cases = records[0], records[1:]
    assert header["system"]["name"] == "h100-hgx"
    assert header["config"]["placement_note"] == (
        "placement given at import (system h100-hgx (8-GPU domain)): domains of 8 ranks in rank order, the last "
        "one partial")
    big = next(c for c in cases if c["bytes"] == 1 << 30)
    assert big["domain_sizes"] == [8, 8] and big["num_domains"] == 2
    assert big["case_key"].endswith("|16|8,8")
    # Ring reduce-scatter over two HGX nodes: (n-1)/n x S over the 8 x 50 GB/s NICs of a node
    # (below 450 GB/s of NVLink): 15/16 x 2^30 B / 400 GB/s = 2516.5824 us.
    assert big["model"]["system"] == "h100-hgx"
    assert big["model"]["bound_time_us"] == pytest.approx(15 / 16 * 2**30 / 400e9 * 1e6, rel=1e-12)
    # A domain larger than the profile's is refused, naming both.
    bad = run(["import", FIXTURES / "reduce_scatter_16rank_mpirun_tagged.txt", "--system", "h100-hgx",
               "--ranks-per-domain", "9", "--out", tmp_path / "no.jsonl"])
    assert bad.returncode == 2
    assert "--ranks-per-domain 9 exceeds the 8-GPU scale-up domain of 'h100-hgx'" in bad.stderr
    assert not (tmp_path / "no.jsonl").exists()


def test_weak_scaling_places_imported_records_and_states_packing(tmp_path):
    imported = tmp_path / "ar8.jsonl"
    assert run(["import", FIXTURES / "all_reduce_8xH100.txt", "--out", imported]).returncode == 0
    out = tmp_path / "ws"
    p = run(["report", "weak-scaling", imported, "--system", "h100-hgx", "--ranks-per-domain", "4",
             "--ranks", "12,16,10", "--no-plots", "--out", out])
    assert p.returncode == 0, p.stderr
    rep = json.loads((out / "report.json").read_text())
    assert rep["packing"] == "full" and rep["base_ranks"] is None
    group = next(g for g in rep["groups"] if g["key"]["bytes_per_rank"] == 536870912 and g["key"]["place"] == "in-place")
    measured = [pt for pt in group["points"] if not pt["projected"]]
    projected = {pt["num_ranks"]: pt for pt in group["points"] if pt["projected"]}
    assert measured[0]["packing"] == "2x4" and measured[0]["anomaly"] is False
    model = run(["model", "allreduce", "--system", "h100-hgx", "--domain-sizes", "4,4", "-b", "512M", "-e", "512M",
                 "--format", "json"])
    assert model.returncode == 0, model.stderr
    assert measured[0]["bound_time_us"] == pytest.approx(json.loads(model.stdout)["rows"][0]["bound_time_us"])
    # Whole domains of 4: 12 = 3x4 and 16 = 4x4 projected; 10 is not, and a note says what would be.
    assert sorted(projected) == [12, 16]
    assert projected[12]["packing"] == "3x4" and projected[12]["packing_rule"] == "full"
    assert "packing 3x4: whole domains of 4 ranks (--packing full)" in projected[12]["notes"]
    assert ("no projection at N=10: 10 ranks do not fill domains of 4 (whole domains: N=8 or 12); pass --packing "
            "even (5x2) or --packing partial (2x4+2)") in group["notes"]
    md = (out / "report.md").read_text()
    assert "packing 3x4: whole domains of 4 ranks" in md
    # The model's validated range on a GPU profile (docs/model.md): h100-hgx has no published points.
    assert ("- validated range: h100-hgx allreduce: not checked against any published measurement (docs/model.md, "
            "\"Validated range\")") in md
    assert all(p["method"] == "extrapolated from the largest measured N" for p in projected.values())


def test_weak_scaling_base_and_policy_flags_are_checked(runs, tmp_path):
    ok = run(["report", "weak-scaling"] + runs + ["--base", "4", "--metric", "time", "--ranks", "none", "--no-plots",
                                                  "--out", tmp_path / "b4"])
    assert ok.returncode == 0, ok.stderr
    rep = json.loads((tmp_path / "b4" / "report.json").read_text())
    assert rep["base_ranks"] == 4
    for g in rep["groups"]:
        assert g["reference_ranks"] == 4
        e = {pt["num_ranks"]: pt for pt in g["points"]}
        assert e[4]["efficiency"] == 1.0
        assert e[1]["efficiency"] == pytest.approx(e[4]["p50_us"] / e[1]["p50_us"])
    bad = run(["report", "weak-scaling"] + runs + ["--base", "3", "--no-plots", "--out", tmp_path / "b3"])
    assert bad.returncode == 2
    assert "--base 3: no group has a measured point at N=3 with a positive busbw; measured N: 1, 2, 4" in bad.stderr
    assert not (tmp_path / "b3").exists()
    packing = run(["report", "weak-scaling"] + runs + ["--packing", "racks", "--no-plots", "--out", tmp_path / "p"])
    assert packing.returncode == 2
    assert "unknown --packing 'racks'" in packing.stderr and "full, even, partial" in packing.stderr
    anomaly = run(["report", "weak-scaling"] + runs + ["--anomaly-below", "120", "--no-plots", "--out", tmp_path / "a"])
    assert anomaly.returncode == 2
    assert "--anomaly-below 120: expected a percentage of the bound from 0 (off) to 100" in anomaly.stderr


def test_weak_scaling_leaves_a_point_of_another_progress_mode_out_of_e_n(tmp_path):
    # issue 37 item 10: N=1 spinning and N=2 yielding are not comparable; the N=2 point gets no
    # E(N), and the report and stderr say why, unless --allow-mixed-progress.
    files = []
    for n, progress in ((1, "spin"), (2, "yield")):
        out = tmp_path / f"n{n}.jsonl"
        p = run(["run", "allreduce", "-b", "1K", "-e", "1K", "--progress", progress, "--format", "none", "--out", out]
                + FAST, np=n)
        assert p.returncode == 0, p.stderr
        files.append(out)
    args = ["report", "weak-scaling"] + files + ["--metric", "time", "--ranks", "none", "--no-plots"]
    what = "mixed progress modes (progress yield at N=2, spin at the reference N0=1)"
    p = run(args + ["--out", tmp_path / "strict"])
    assert p.returncode == 0, p.stderr
    assert f"collbench: warning: allreduce 1024 B: {what}; N=2 left out of E(N) (--allow-mixed-progress keeps it)" \
        in p.stderr, p.stderr
    points = json.loads((tmp_path / "strict" / "report.json").read_text())["groups"][0]["points"]
    assert [pt["efficiency"] is None for pt in points] == [False, True]
    assert f"N=2 left out of E(N): {what}" in (tmp_path / "strict" / "report.md").read_text()
    p = run(args + ["--out", tmp_path / "allowed", "--allow-mixed-progress"])
    assert p.returncode == 0, p.stderr
    assert f"{what}; E(N=2) kept by --allow-mixed-progress" in p.stderr, p.stderr
    points = json.loads((tmp_path / "allowed" / "report.json").read_text())["groups"][0]["points"]
    assert all(pt["efficiency"] is not None for pt in points)
