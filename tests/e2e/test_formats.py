"""Outputs fed to the checks of their real consumers (issue 20 items 9-12): the acceptance
Prometheus file to `promtool check metrics` and to node-exporter's textfile rules (two racks' files
in one directory), the JUnit XML of accept and gate to a Jenkins/Ant JUnit XSD
(tests/data/formats/junit.xsd, with the public schemas it follows), the Google Benchmark export to
the fields compare.py reads, and the results JSON Schema to jsonschema's error (it names the field).
"""
import json
import re
import shutil
import subprocess

import pytest

from conftest import SCHEMA_PATH, SOURCE_DIR, run, quick_accept_profile

BASELINE = SOURCE_DIR / "results" / "baselines" / "cpu-2rank.jsonl"

PROFILE = quick_accept_profile("formats", "two quick checks for the output-format tests")


@pytest.fixture(scope="module")
def racks(tmp_path_factory):
    """One acceptance per rack (COLLBENCH_RACK r2 and r10), each in its own out dir."""
    base = tmp_path_factory.mktemp("formats")
    profile = base / "formats.yaml"
    profile.write_text(PROFILE)
    outs = {}
    for rack in ("r2", "r10"):
        out = base / rack
        p = run(["accept", profile, "--out-dir", out], np=2, env={"COLLBENCH_RACK": rack}, timeout=120)
        assert p.returncode == 0, p.stdout + p.stderr
        outs[rack] = out
    return outs


# ---- Prometheus ------------------------------------------------------------------------------

def parse_prom(text):
    """{family: help}, [(name, labels dict, value)] of a text-format file."""
    helps, samples = {}, []
    for line in text.splitlines():
        if line.startswith("# HELP "):
            _, _, name, help_text = line.split(" ", 3)
            assert name not in helps, f"{name} declared twice"
            helps[name] = help_text
        elif line.startswith("# TYPE "):
            assert line.split()[3] == "gauge"
        else:
            m = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)', line)
            assert m, line
            labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
            samples.append((m.group(1), labels, float(m.group(3))))
    return helps, samples


def test_prometheus_uses_base_units_one_family_per_unit(racks):
    helps, samples = parse_prom((racks["r2"] / "collbench_accept.prom").read_text())
    verdict = json.loads((racks["r2"] / "verdict.json").read_text())
    units = ("_seconds", "_bytes_per_second", "_ratio", "_info", "_status", "_checks", "_success", "_ranks")
    for name in helps:
        assert name.endswith(units), name
        assert not re.search(r"_(us|gbps|ms)$", name), name
    # a measured value in base units: the JSON's p50 in us / 1e6 and busbw in GB/s x 1e9
    by_check = {r["check"]: r for r in verdict["rows"]}
    seconds = {s[1]["check"]: s[2] for s in samples if s[0] == "collbench_accept_measured_time_seconds"}
    assert seconds["latency"] == pytest.approx(by_check["latency"]["time_us"] / 1e6, rel=1e-12)
    bw = {s[1]["check"]: s[2] for s in samples if s[0] == "collbench_accept_measured_bus_bandwidth_bytes_per_second"}
    assert bw["bandwidth"] == pytest.approx(by_check["bandwidth"]["busbw_gbps"] * 1e9, rel=1e-12)
    # thresholds: the latency ceiling of 1 s in seconds, the busbw floor of 1e-6 GB/s = 1000 B/s
    limits = {(s[0], s[1]["check"], s[1]["kind"]): s[2] for s in samples if s[0].startswith("collbench_accept_threshold")}
    assert limits[("collbench_accept_threshold_seconds", "latency", "max_time_us")] == 1.0
    assert limits[("collbench_accept_threshold_bytes_per_second", "bandwidth", "min_busbw_gbps")] == 1000.0
    # every series names host, rack, run and profile; the run is the records' run id
    run_id = json.loads((racks["r2"] / verdict["record_files"][0].split("/")[-1]).read_text().splitlines()[0])["run_id"]
    for _, labels, _ in samples:
        assert labels["rack"] == "r2" and labels["profile"] == "formats" and labels["host"]
        assert run_id in labels["run"].split(",")
    info = [s for s in samples if s[0] == "collbench_accept_run_info"]
    assert len(info) == 1 and info[0][2] == 1 and info[0][1]["system"] == "none"


def test_two_racks_share_one_textfile_directory(racks, tmp_path):
    """node-exporter's textfile collector merges every *.prom file of its directory: a family must
    have the same HELP and TYPE in every file, and no series may appear twice."""
    textfile = tmp_path / "textfile"
    textfile.mkdir()
    for rack, out in racks.items():
        shutil.copy(out / "collbench_accept.prom", textfile / f"collbench_accept_{rack}.prom")
    seen, helps_all = set(), {}
    for path in sorted(textfile.glob("*.prom")):
        helps, samples = parse_prom(path.read_text())
        for name, help_text in helps.items():
            assert helps_all.setdefault(name, help_text) == help_text, f"{name}: HELP differs between files"
        for name, labels, _ in samples:
            key = (name, tuple(sorted(labels.items())))
            assert key not in seen, f"duplicate series {key}"
            seen.add(key)
    assert len(seen) > 20


def test_promtool_check_metrics_passes(racks):
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (Debian: apt-get install prometheus); the format rules are checked above")
    for out in racks.values():
        text = (out / "collbench_accept.prom").read_text()
        p = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
        assert p.returncode == 0 and p.stdout.strip() == "" and p.stderr.strip() == "", p.stdout + p.stderr


# ---- JUnit -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def junit_schema():
    etree = pytest.importorskip("lxml.etree")
    return etree, etree.XMLSchema(etree.parse(str(SOURCE_DIR / "tests" / "data" / "formats" / "junit.xsd")))


def validate_junit(junit_schema, path):
    etree, schema = junit_schema
    doc = etree.parse(str(path))
    assert schema.validate(doc), str(schema.error_log)
    return doc.getroot()


def test_accept_junit_validates(racks, junit_schema):
    root = validate_junit(junit_schema, racks["r2"] / "junit.xml")
    assert root.get("skipped") is None
    suite = root.find("testsuite")
    assert suite.get("skipped") == "0" and float(suite.get("time")) > 0
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", suite.get("timestamp"))


def test_gate_junit_validates_with_timestamp_and_real_times(tmp_path, junit_schema):
    junit = tmp_path / "gate.xml"
    p = run(["gate", "--baseline", BASELINE, "--current", BASELINE, "--junit", junit])
    assert p.returncode == 0, p.stdout + p.stderr
    root = validate_junit(junit_schema, junit)
    suite = root.find("testsuite")
    assert float(suite.get("time")) > 0 and root.get("time") == suite.get("time")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", suite.get("timestamp"))
    # testcase time: the record's mean x iterations, in seconds (hand-computed from the file)
    records = {r["case_key"]: r for r in map(json.loads, BASELINE.read_text().splitlines()) if r["kind"] == "case"}
    for case in suite.findall("testcase"):
        r = records[case.get("name")]
        assert case.get("time") == f"{r['time_us']['mean'] * r['iterations'] / 1e6:.3f}"


def test_junit_schema_refuses_skipped_on_testsuites(tmp_path, junit_schema):
    """The XSD would catch the old output: a skipped attribute on <testsuites>."""
    bad = tmp_path / "bad.xml"
    bad.write_text('<?xml version="1.0"?>\n<testsuites tests="0" failures="0" errors="0" skipped="0">'
                   '<testsuite name="s" tests="0" failures="0" errors="0" time="0" timestamp="2026-01-01T00:00:00"/>'
                   '</testsuites>\n')
    etree, schema = junit_schema
    assert not schema.validate(etree.parse(str(bad)))
    assert "skipped" in str(schema.error_log)


# ---- Google Benchmark ------------------------------------------------------------------------

def test_gbench_export_has_the_shape_compare_py_reads(tmp_path):
    out = tmp_path / "g.json"
    p = run(["export-gbench", BASELINE, "--out", out])
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    records = [r for r in map(json.loads, BASELINE.read_text().splitlines()) if r["kind"] == "case"]
    benches = doc["benchmarks"]
    # compare.py pairs entries by name and time_unit and prints real_time/cpu_time as whole units
    for b in benches:
        assert b["time_unit"] == "ns"
        assert isinstance(b["real_time"], float) or isinstance(b["real_time"], int)
        assert b["cpu_time"] == b["real_time"]
        assert b["run_type"] in ("iteration", "aggregate")
        assert isinstance(b["family_index"], int) and b["per_family_instance_index"] == 0
    medians = {b["run_name"]: b for b in benches if b.get("aggregate_name") == "median"}
    for r in records:
        iters = [b for b in benches if b["name"] == r["case_key"] and b["run_type"] == "iteration"]
        assert iters, r["case_key"]
        if r["case_key"] in medians:  # 10 repetitions of at least 5 samples: block medians
            assert len(iters) == 10 and [b["repetition_index"] for b in iters] == list(range(10))
            assert medians[r["case_key"]]["real_time"] > 100  # microseconds would print as a 1-digit number
    # aggregates only: no iteration entry of a case with repetitions
    agg = tmp_path / "agg.json"
    assert run(["export-gbench", BASELINE, "--aggregates-only", "--out", agg]).returncode == 0
    names = [b["name"] for b in json.loads(agg.read_text())["benchmarks"] if b["run_type"] == "iteration"]
    assert not set(names) & set(medians)


def test_gbench_leaves_waived_cases_out(tmp_path):
    lines = BASELINE.read_text().splitlines()
    header, first = json.loads(lines[0]), json.loads(lines[1])
    waived = dict(first, status="waived", reason="not on this backend", time_us=None, samples_us=[], bytes=123,
                  case_key=first["case_key"].replace(f"|{first['bytes']}|", "|123|"))
    src = tmp_path / "w.jsonl"
    src.write_text("\n".join(json.dumps(x) for x in (header, first, waived)) + "\n")
    out = tmp_path / "w.json"
    p = run(["export-gbench", src, "--out", out])
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    assert all(b["run_name"] == first["case_key"] for b in doc["benchmarks"])
    assert doc["context"]["collbench_waived_cases"] == [waived["case_key"] + ": not on this backend"]


# ---- JSON Schema -----------------------------------------------------------------------------

@pytest.mark.parametrize("field,value,message", [
    ("bytes", "big", "'big' is not of type 'integer'"),
    ("status", "skipped", "'skipped' is not one of ['ok', 'waived', 'failed']"),
    ("time_us", {"p50": 1.0}, "'p5' is a required property"),
    ("model", {"system": "x"}, "'bound_time_us' is a required property"),
])
def test_schema_error_names_the_bad_field(field, value, message):
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))
    record = json.loads(BASELINE.read_text().splitlines()[1])
    assert not list(validator.iter_errors(record))
    record[field] = value
    error = jsonschema.exceptions.best_match(validator.iter_errors(record))
    assert list(error.absolute_path) == [field]
    assert error.message == message


def test_schema_error_names_the_bad_header_field_and_kind():
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))
    header = json.loads(BASELINE.read_text().splitlines()[0])
    header["launcher"] = "pbs"
    error = jsonschema.exceptions.best_match(validator.iter_errors(header))
    assert list(error.absolute_path) == ["launcher"]
    assert error.message == "'pbs' is not one of ['mpiexec', 'srun', 'singleton']"
    header["kind"] = "header"
    error = jsonschema.exceptions.best_match(validator.iter_errors(header))
    assert list(error.absolute_path) == ["kind"]
    assert error.message == "'header' is not one of ['run_header', 'case']"
