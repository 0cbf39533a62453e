"""`collbench accept`: the cpu-local profile passes at 2 ranks (judged on its floors without a
calibrated profile, and on fractions of the model with one); an injected slow rank (20 ms per
operation) fails it and is named; the JUnit XML, JSON, Markdown and Prometheus outputs agree;
bad input exits 2 with nothing written."""
import json
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import read_jsonl, run

SLOW_RANK = {"COLLBENCH_FAULT": "delay:rank=1,us=20000"}


def verdict(out_dir):
    return json.loads((out_dir / "verdict.json").read_text())


def junit_counts(path):
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    suite = suites[0]
    cases = suite.findall("testcase")
    failures = [c for c in cases if c.find("failure") is not None]
    skipped = [c for c in cases if c.find("skipped") is not None]
    for element in (root, suite):
        assert int(element.get("tests")) == len(cases)
        assert int(element.get("failures")) == len(failures)
        assert element.get("errors") == "0"
    assert int(suite.get("skipped")) == len(skipped) and root.get("skipped") is None  # Jenkins' XSD: not on testsuites
    for c in cases:
        assert c.get("classname").startswith("collbench.accept.cpu-local.")
        assert c.get("name")
    # time: the run's wall seconds on the suites, each row's timed seconds on its testcase
    suite_time = float(suite.get("time"))
    assert float(root.get("time")) == suite_time > 0
    times = [float(c.get("time")) for c in cases]
    assert all(0 <= t <= suite_time for t in times) and any(t > 0 for t in times)  # 0: nothing measured
    return len(cases), failures, skipped


def prometheus_samples(path):
    """name{labels} value lines of a node-exporter textfile, checked for the format's rules."""
    samples, families = [], []
    for line in path.read_text().splitlines():
        if line.startswith("# HELP "):
            families.append(line.split()[2])
            continue
        if line.startswith("# TYPE "):
            assert line.split()[2] == families[-1] and line.split()[3] == "gauge"
            continue
        m = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)', line)
        assert m, line
        name, labels, value = m.groups()
        assert name.startswith("collbench_accept_") and name == families[-1]
        float(value)
        samples.append((name, dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', labels)), float(value)))
    assert len(families) == len(set(families)), "each family is declared once"
    return samples


def check_outputs_agree(out_dir, validator):
    v = verdict(out_dir)
    assert v["schema"] == "collbench.accept/1"
    rows = v["rows"]
    n, failures, skipped = junit_counts(out_dir / "junit.xml")
    assert n == len(rows) == v["counts"]["total"]
    assert len(failures) == v["counts"]["fail"] == sum(r["verdict"] == "FAIL" for r in rows)
    assert len(skipped) == v["counts"]["waived"]
    samples = prometheus_samples(out_dir / "collbench_accept.prom")
    status = [(s[1]["check"], s[1]["domain"], s[1]["verdict"]) for s in samples
              if s[0] == "collbench_accept_check_status" and s[2] == 1]
    assert len(status) == len(rows)
    for r in rows:
        domain = "all" if r["domain"] is None else str(r["domain"])
        assert (r["check"], domain, r["verdict"]) in status
    success = [s for s in samples if s[0] == "collbench_accept_success"]
    assert success[0][2] == (1 if v["exit_code"] == 0 else 0)
    md = (out_dir / "verdict.md").read_text()
    assert md.count("\n| ") == len(rows) + 1  # header + one line per row
    records = sorted(out_dir.glob("records-*.jsonl"))
    assert [str(p) for p in records] == sorted(v["record_files"])
    for path in records:
        lines = read_jsonl(path)
        assert lines[0]["kind"] == "run_header"
        for line in lines:
            validator.validate(line)
    return v


def test_cpu_local_passes_on_floors_without_a_calibrated_profile(tmp_path, validator):
    out = tmp_path / "acc"
    p = run(["accept", "cpu-local", "--out-dir", out], np=2, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "-> exit 0" in p.stdout
    v = check_outputs_agree(out, validator)
    assert v["system"] is None and "calibrate" in v["system_note"]
    rows = {(r["check"], r["domain"]): r for r in v["rows"]}
    assert set(c for c, _ in rows) == {"allreduce-latency", "allreduce-bandwidth", "alltoall-moe", "pairwise",
                                       "hierarchical-allreduce", "per-rank-reduction"}
    # Per-domain: one row per one-rank domain; the others one row for all ranks.
    assert ("per-rank-reduction", 0) in rows and ("per-rank-reduction", 1) in rows
    for r in v["rows"]:
        assert r["verdict"] == "PASS", r
        fractions = [l for l in r["limits"] if l["kind"].startswith("fraction_of")]
        assert all(not l["judged"] for l in fractions)  # no model: the floors decide
        assert any(l["judged"] and l["passed"] for l in r["limits"])
        assert len(r["repetitions"]["time_us"]) == 3
    # The required algorithm ran (hierarchical reports itself).
    hier = [r for r in read_jsonl(out / "records-ranks-per-domain-1.jsonl")[1:] if r["algo_requested"] == "hierarchical"]
    assert hier and all(r["algo_used"] == "hierarchical" for r in hier)
    # Per-domain statistics are in the scope-domain records.
    dom = [r for r in read_jsonl(out / "records-ranks-per-domain-1.jsonl")[1:] if r["scope"] == "domain"]
    assert dom and all(len(r["per_domain"]) == 2 for r in dom)


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    """A cpu-local profile measured on this host (quickly: 2 repetitions)."""
    config = tmp_path_factory.mktemp("config")
    p = run(["calibrate", "--repetitions", "2"], np=2, env={"XDG_CONFIG_HOME": str(config)}, timeout=300)
    assert p.returncode == 0, p.stderr
    return {"XDG_CONFIG_HOME": str(config)}


def test_cpu_local_passes_against_the_calibrated_model(tmp_path, validator, calibrated):
    out = tmp_path / "acc"
    p = run(["accept", "cpu-local", "--out-dir", out], np=2, env=calibrated, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    v = check_outputs_agree(out, validator)
    assert v["system"] == "cpu-local"
    judged = [l for r in v["rows"] for l in r["limits"] if l["kind"] == "fraction_of_expected"]
    assert judged and all(l["judged"] and l["passed"] for l in judged)
    for r in v["rows"]:
        if any(l["kind"] == "fraction_of_expected" for l in r["limits"]):
            assert r["model"]["expected_busbw_gbps"] > 0


def test_slow_rank_fails_and_is_named(tmp_path, validator, calibrated):
    out = tmp_path / "slow"
    p = run(["accept", "cpu-local", "--out-dir", out, "--allow-faults"], np=2, env={**calibrated, **SLOW_RANK},
            timeout=300)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAILED" in p.stderr
    v = check_outputs_agree(out, validator)
    assert v["fault"] == SLOW_RANK["COLLBENCH_FAULT"]
    rows = {(r["check"], r["domain"]): r for r in v["rows"]}
    # Judged per domain: only rank 1's domain fails.
    assert rows[("per-rank-reduction", 0)]["verdict"] == "PASS"
    assert rows[("per-rank-reduction", 1)]["verdict"] == "FAIL"
    # Checks over both ranks fail and name rank 1 as the straggler.
    for check in ("allreduce-latency", "allreduce-bandwidth", "pairwise"):
        r = rows[(check, None)]
        assert r["verdict"] == "FAIL", r
        assert re.search(r"rank 1 \(host [^)]+\) slow on its own", r["reason"]), r["reason"]
        assert not any("rank 0 slow" in e for e in r["evidence"])
    failures = junit_counts(out / "junit.xml")[1]
    assert any(re.search(r"rank 1 \(host [^)]+\) slow on its own", f.find("failure").get("message"))
               for f in failures)
    assert re.search(r"rank 1 \(host [^)]+\) slow on its own", p.stdout)


def test_refuses_injected_faults_without_allow_faults(tmp_path):
    out = tmp_path / "never"
    p = run(["accept", "cpu-local", "--out-dir", out], np=2, env=SLOW_RANK)
    assert p.returncode == 2
    assert "--allow-faults" in p.stderr
    assert not out.exists()


def test_bad_profile_names_file_line_key_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nchecks:\n  - name: ar\n    collective: allreduce\n    bytes: 1M\n"
                   "    threshold: {fraction_of_bound: 0.5}\n    repetitons: 3\n")
    out = tmp_path / "out"
    p = run(["accept", bad, "--out-dir", out], np=2)
    assert p.returncode == 2
    assert f"{bad}:7" in p.stderr and "repetitons" in p.stderr and "did you mean 'repetitions'" in p.stderr
    assert p.stderr.count("error:") == 1  # one message, not one per rank
    assert not out.exists()
    p = run(["accept", "cpu-locl"], np=2)
    assert p.returncode == 2 and "did you mean 'cpu-local'" in p.stderr


def test_existing_results_need_force(tmp_path):
    out = tmp_path / "acc"
    out.mkdir()
    (out / "verdict.json").write_text("{}")
    p = run(["accept", "cpu-local", "--out-dir", out, "--repetitions", "1"], np=2)
    assert p.returncode == 2 and "--force" in p.stderr
    assert (out / "verdict.json").read_text() == "{}"


def test_list_and_dry_run():
    p = run(["accept", "--list"])
    assert p.returncode == 0
    assert p.stdout.split() == ["cpu-local", "gb200-nvl72", "gb300-nvl72", "gb300-nvl72-sim", "h100-hgx", "testbed"]
    p = run(["accept", "gb300-nvl72", "--dry-run", "--assume-ranks", "144"])
    assert p.returncode == 0, p.stderr
    assert "domains 72,72" in p.stdout
    assert "rack-nvls-allreduce" in p.stdout and "fabric-rail-pairs" in p.stdout
    # 71 rounds of the in-rack round-robin, once per repetition.
    assert len(re.findall(r"rack-pairwise-nvlink +rep 1 .* round \d+", p.stdout)) == 71
    p = run(["accept", "gb300-nvl72", "--dry-run"])
    assert p.returncode == 2 and "at least 72 ranks" in p.stderr
