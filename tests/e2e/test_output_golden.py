"""Every subcommand's output in every format, against golden files written by the binary before
the writer registry (issue 36 item 4; commit 97a802e): the registry must not change a byte.

The goldens live in tests/data/golden/, one file per output (NAME.stdout, and NAME.FILE for what
a case writes to files). Outputs of the commands that read files only (report, model, step, gate,
locate --results) are compared byte for byte. Outputs that carry measured times, run ids or the
time of day (run, sweep, accept, JUnit timestamps, the HTML page's generator line) are compared
byte for byte after masking (mask() below): every number, run id and git sha becomes '#', the
unit of a time or a rate 'T' or 'R', every run of blanks one space, and accept's evidence of a
late rank (found or not as the shared cores schedule the ranks) is dropped, so the layout, the
columns, the keys and the words must still be identical.

Regenerate after an intended change of an output (and review the diff):
    COLLBENCH_UPDATE_GOLDEN=1 COLLBENCH_BIN=build/src/collbench python3 -m pytest -q tests/e2e/test_output_golden.py
To prove a refactor changes nothing, write the goldens with the old binary into another folder
(COLLBENCH_GOLDEN_DIR) and run the test with the new one: scripts/compare-outputs does both."""
import functools
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import BIN, SOURCE_DIR, run, quick_accept_profile

# COLLBENCH_GOLDEN_DIR: another folder of goldens (scripts/compare-outputs writes an old binary's there).
GOLDEN = Path(os.environ.get("COLLBENCH_GOLDEN_DIR", SOURCE_DIR / "tests" / "data" / "golden"))
UPDATE = os.environ.get("COLLBENCH_UPDATE_GOLDEN") == "1"

BASELINE = "results/baselines/cpu-2rank.jsonl"
SIM_72 = "results/simulated/allreduce-16M-72.jsonl"
SIM_144 = "results/simulated/allreduce-16M-144.jsonl"
STEP_DATA = "tests/data/step"
STEP = ["step", "--workload", f"{STEP_DATA}/tiny-workload.yaml", "--layout", f"{STEP_DATA}/tiny-layout.yaml",
        "--system", f"{STEP_DATA}/tiny-cpu.yaml", "--gpus", "2,4"]
RUN = ["run", "allreduce", "-b", "8", "-e", "4K", "-f", "8", "--iters", "5", "-w", "1"]
ACCEPT_PROFILE = quick_accept_profile("golden", "two quick checks for the golden output test")

# name, arguments ({tmp} is the case's scratch folder, {accept} the accept profile), files the
# command writes into {tmp}, masked?, mpiexec ranks (None: a singleton).
CASES = []


def case(name, args, files=(), masked=False, np=None):
    CASES.append(pytest.param(name, args, tuple(files), masked, np, id=name))


for fmt in ("table", "markdown", "csv"):
    case(f"report-one-{fmt}", ["report", BASELINE, "--format", fmt])
    case(f"report-compare-{fmt}", ["report", SIM_72, SIM_144, "--format", fmt])
    case(f"report-no-compare-{fmt}", ["report", SIM_72, SIM_144, "--compare-by", "none", "--format", fmt])
    case(f"report-system-{fmt}", ["report", SIM_72, "--system", "gb300-nvl72", "--format", fmt])
case("report-html", ["report", SIM_72, SIM_144, "--html", "{tmp}/page.html"], ["page.html"], masked=True)
for fmt in ("table", "json", "csv"):
    case(f"model-allreduce-{fmt}", ["model", "allreduce", "--system", "h100-hgx", "--algo", "nvls,ring", "-b", "8",
                                    "-e", "8G", "-f", "64", "--format", fmt])
    case(f"model-alltoall-{fmt}", ["model", "alltoall", "--system", "gb300-nvl72", "--ranks", "256,1024",
                                   "--ranks-per-domain", "72", "-b", "1M", "-e", "1G", "-f", "32", "--format", fmt])
    case(f"model-moe-{fmt}", ["model", "moe-dispatch", "--ep-size", "8,64", "--tokens", "4096", "--format", fmt])
    case(f"model-moe-system-{fmt}", ["model", "moe-combine", "--system", "gb300-nvl72", "--ep-size", "64,256",
                                     "--format", fmt])
for fmt in ("table", "json", "markdown"):
    case(f"step-{fmt}", STEP + ["--format", fmt])
    case(f"step-degrade-{fmt}", STEP + ["--degrade", "nic:0.5", "--fallback", "model", "--format", fmt])
    case(f"gate-{fmt}", ["gate", "--baseline", BASELINE, "--current", BASELINE, "--format", fmt])
case("gate-files", ["gate", "--baseline", BASELINE, "--current", BASELINE, "--junit", "{tmp}/gate.xml", "--json",
                    "{tmp}/gate.json", "--markdown", "{tmp}/gate.md"], ["gate.xml", "gate.json", "gate.md"],
     masked=True)
for fmt in ("text", "json"):
    case(f"locate-results-{fmt}", ["locate", "--results", BASELINE, "--methods", "skew", "--format", fmt])
for fmt in ("table", "jsonl", "csv", "none"):
    case(f"run-{fmt}", RUN + ["--format", fmt], masked=True, np=2)
    case(f"sweep-{fmt}", ["sweep", "profiles/sweeps/cpu-smoke.yaml", "--iters", "3", "--format", fmt], masked=True,
         np=2)
case("run-nccl-tests", RUN + ["--layout", "nccl-tests"], masked=True, np=2)
case("run-rooted-table", ["run", "broadcast", "-b", "8", "-e", "64", "-f", "8", "--iters", "5", "-r", "1"],
     masked=True, np=2)
for fmt in ("table", "json", "markdown", "none"):
    case(f"accept-{fmt}", ["accept", "{accept}", "--format", fmt], masked=True, np=2)
case("accept-out-dir", ["accept", "{accept}", "--out-dir", "{tmp}/out", "--format", "none"],
     ["out/verdict.json", "out/verdict.md", "out/junit.xml"], masked=True, np=2)
for fmt in ("table", "json", "markdown", "none"):
    case(f"report-accept-{fmt}", ["report", "accept", "tests/data/golden/inputs/verdict.json", "--format", fmt])


@functools.cache
def profiles_root():
    """The folder whose profiles/ the binary reads (its source tree or install prefix): printed as <src>."""
    p = run(["--version"])
    m = re.search(r"^profiles: (.*)/profiles$", p.stdout, re.M)
    assert m, p.stdout
    return m.group(1)


NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def mask(text):
    """Numbers, run ids and git shas become '#', a time's or a rate's unit (which follows its size) 'T'
    or 'R', blanks one space."""
    text = re.sub(r"\(git [0-9a-z-]+\)", "(git #)", text)  # the HTML page's generator: the build's git sha
    text = re.sub(r"\d{8}T\d{6}Z[-0-9a-f]*", "#", text)  # run ids (20261206T101413Z-3f9a2b1c)
    text = NUMBER.sub("#", text)
    text = re.sub(r"#( ?)(ns|us|ms|s)\b", r"#\1T", text)
    text = re.sub(r"#( ?)[kKMGT]?i?B/s\b", r"#\1R", text)
    # accept's evidence of a late rank: there or not as the shared cores happen to schedule the ranks
    text = re.sub(r'"evidence": \[[^\]]*\]', '"evidence": []', text)
    text = re.sub(r";? ?rank # \(host [^)]*\) slow on its own:[^\n\"|<]*", "", text)
    return re.sub(r"[ \t]+", " ", text)


def outputs(name, args, files, np, tmp_path):
    tmp = tmp_path / name
    tmp.mkdir()
    accept = tmp_path / "golden.yaml"
    accept.write_text(ACCEPT_PROFILE)
    argv = [str(a).replace("{tmp}", str(tmp)).replace("{accept}", str(accept)) for a in args]
    p = run(argv, np=np, cwd=SOURCE_DIR, timeout=300, env={"COLLBENCH_RACK": "golden"})
    assert p.returncode in (0, 1), p.stderr
    out = {f"{name}.stdout": p.stdout}
    for f in files:
        out[f"{name}.{f.replace('/', '-')}"] = (tmp / f).read_text()
    return {k: normalized(v, tmp_path) for k, v in out.items()}


def normalized(text, tmp_path):
    """Paths that depend on the machine: the scratch folder, the binary and its profiles' folder."""
    return text.replace(str(tmp_path), "{tmp}").replace(BIN, "<bin>").replace(profiles_root() + "/", "<src>/")


@pytest.mark.parametrize("name,args,files,masked,np", CASES)
def test_output_unchanged(name, args, files, masked, np, tmp_path):
    for golden_name, text in outputs(name, args, files, np, tmp_path).items():
        golden = GOLDEN / golden_name
        if UPDATE:
            golden.write_text(text)
            continue
        assert golden.exists(), f"{golden} missing: regenerate with COLLBENCH_UPDATE_GOLDEN=1"
        # The same normalisation as the output: a path inside the goldens' inputs (a record's argv)
        # may name the folder this binary reads its profiles from, which the output shows as <src>/.
        expected = golden.read_text().replace(profiles_root() + "/", "<src>/")
        if masked:
            assert mask(text) == mask(expected), golden_name
        else:
            assert text == expected, golden_name


# The multiplex: several formats in one run give the bytes each gives alone.
@pytest.mark.parametrize("name,args,extra", [
    ("gate", ["gate", "--baseline", BASELINE, "--current", BASELINE], ["json", "markdown"]),
    ("model-allreduce", ["model", "allreduce", "--system", "h100-hgx", "--algo", "nvls,ring", "-b", "8", "-e", "8G",
                         "-f", "64"], ["json", "csv"]),
    ("step", STEP, ["json", "markdown"]),
    ("report-compare", ["report", SIM_72, SIM_144], ["markdown", "csv"]),
    ("locate-results", ["locate", "--results", BASELINE, "--methods", "skew"], ["json"]),
])
def test_several_formats_in_one_run(name, args, extra, tmp_path):
    if UPDATE:
        pytest.skip("writing goldens")
    console = "text" if name.startswith("locate") else "table"
    targets = []
    for fmt in extra:
        targets += ["--format", f"{fmt}={tmp_path / fmt}"]
    p = run(args + targets, cwd=SOURCE_DIR)
    assert p.returncode == 0, p.stderr
    assert normalized(p.stdout, tmp_path) == (GOLDEN / f"{name}-{console}.stdout").read_text()
    for fmt in extra:
        assert normalized((tmp_path / fmt).read_text(), tmp_path) == (GOLDEN / f"{name}-{fmt}.stdout").read_text(), fmt


def test_run_streams_each_format_to_its_file(tmp_path):
    if UPDATE:
        pytest.skip("writing goldens")
    p = run(RUN + ["--format", "none", "--format", f"csv={tmp_path / 'r.csv'}", "--format",
                   f"table={tmp_path / 'r.txt'}"], np=2, cwd=SOURCE_DIR)
    assert p.returncode == 0, p.stderr
    assert p.stdout == ""
    assert mask((tmp_path / "r.csv").read_text()) == mask((GOLDEN / "run-csv.stdout").read_text())
    assert mask((tmp_path / "r.txt").read_text()) == mask((GOLDEN / "run-table.stdout").read_text())


def test_run_refuses_to_replace_a_format_file_without_force(tmp_path):
    """A measurement is costly to repeat: run's --format FMT=PATH replaces a non-empty file only
    with --force (as --out does), refused before anything runs; an empty file, a device and
    --force are written."""
    kept = tmp_path / "r.csv"
    kept.write_text("earlier results\n")
    p = run(RUN + ["--format", "none", "--format", f"csv={kept}"], cwd=SOURCE_DIR)
    assert p.returncode == 2, p.stderr
    assert f"--format csv={kept}: '{kept}' exists and is not empty; pass --force to replace it" in p.stderr
    assert kept.read_text() == "earlier results\n"
    p = run(RUN + ["--format", "none", "--format", f"csv={kept}", "--force"], cwd=SOURCE_DIR)
    assert p.returncode == 0, p.stderr
    assert kept.read_text().startswith("collective,")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    p = run(RUN + ["--format", "none", "--format", f"table={empty}", "--format", "csv=/dev/null"], cwd=SOURCE_DIR)
    assert p.returncode == 0, p.stderr
    assert empty.read_text() != ""


def test_run_refuses_a_format_file_that_is_another_output(tmp_path):
    """Two formats into one file, or a format into the --out file, would interleave; a --resume
    continues only --out, so it refuses a format file that holds something."""
    x = tmp_path / "x.txt"
    p = run(RUN + ["--format", "none", "--format", f"csv={x}", "--format", f"table={x}"], cwd=SOURCE_DIR)
    assert p.returncode == 2, p.stderr
    assert f"--format table={x}: '{x}' is also the file of --format csv={x}; give each output its own file" in p.stderr
    assert not x.exists()
    out = tmp_path / "r.jsonl"
    p = run(RUN + ["--out", str(out), "--format", f"jsonl={tmp_path / '.' / 'r.jsonl'}"], cwd=SOURCE_DIR)
    assert p.returncode == 2 and "is also the --out file, where the records go already" in p.stderr, p.stderr
    assert not out.exists()
    p = run(RUN + ["--out", str(out), "--format", "none", "--format", f"csv={x}"], cwd=SOURCE_DIR)
    assert p.returncode == 0, p.stderr
    p = run(RUN + ["--out", str(out), "--resume", "--format", "none", "--format", f"csv={x}"], cwd=SOURCE_DIR)
    assert p.returncode == 2, p.stderr
    assert "exists and is not empty; --resume continues only the --out file" in p.stderr


def test_an_open_descriptor_is_appended_to_never_replaced(tmp_path):
    """/dev/stdout redirected with >> to a log: the writers append to the log (a rename or a
    truncation would lose its earlier lines), and run does not refuse it as an existing file."""
    log = tmp_path / "job.log"
    log.write_text("earlier line\n")
    cmd = f"{BIN} report {BASELINE} --format none --format markdown=/dev/stdout >> {log}"
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, cwd=SOURCE_DIR, timeout=120)
    assert p.returncode == 0, p.stderr
    text = log.read_text()
    assert text.startswith("earlier line\n") and "|" in text
    cmd = f"{BIN} {' '.join(RUN)} --format none --format table=/dev/stdout >> {log}"
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, cwd=SOURCE_DIR, timeout=120)
    assert p.returncode == 0, p.stderr
    assert log.read_text().startswith(text) and len(log.read_text()) > len(text)
    # --out too: records appended to the log, no "exists and is not empty", no lock beside /dev/stdout.
    before = log.read_text()
    cmd = f"{BIN} {' '.join(RUN)} --format none --out /dev/stdout >> {log}"
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, cwd=SOURCE_DIR, timeout=120)
    assert p.returncode == 0, p.stderr
    added = log.read_text()[len(before):]
    assert log.read_text().startswith(before) and '"kind":"run_header"' in added and '"kind":"case"' in added
    assert not os.path.exists("/dev/stdout.lock")
    p = run(RUN + ["--format", "none", "--out", "/dev/stdout", "--resume"], cwd=SOURCE_DIR)
    assert p.returncode == 2 and "'/dev/stdout' is an open descriptor, not a file to continue" in p.stderr
    # A reader that stops early ends the run (the descriptor is duplicated, never reopened
    # read-write, which kept the pipe open and blocked the writer).
    cmd = f"{BIN} {' '.join(RUN)} --format none --out /dev/stdout | head -n 1"
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, cwd=SOURCE_DIR, timeout=120)
    assert p.stdout.startswith('{"argv"')


def test_outputs_on_one_stream_are_refused_devices_may_repeat(tmp_path):
    p = run(RUN + ["--format", "csv=/dev/stdout"], cwd=SOURCE_DIR)
    assert p.returncode == 2
    assert "'/dev/stdout' is also standard output, where --format table goes" in p.stderr
    p = run(RUN + ["--out", "/dev/stdout"], cwd=SOURCE_DIR)
    assert p.returncode == 2 and "--out '/dev/stdout' is also standard output" in p.stderr
    p = run(RUN + ["--format", "none", "--format", "csv=/dev/null", "--format", "table=/dev/null"], cwd=SOURCE_DIR)
    assert p.returncode == 0, p.stderr
    # A descriptor the shell did not give (here one MPI may have opened) is never written.
    p = run(RUN + ["--format", "none", "--format", "csv=/dev/fd/9", "--out", str(tmp_path / "r.jsonl")],
            cwd=SOURCE_DIR)
    assert p.returncode == 2 and "descriptor 9 was not given to collbench for output" in p.stderr, p.stderr
    assert not (tmp_path / "r.jsonl").exists()
    p = run(RUN + ["--format", "none", "--format", "csv=/dev/stdin"], cwd=SOURCE_DIR)
    assert p.returncode == 2 and "descriptor 0 is standard input, not an output" in p.stderr, p.stderr


def test_bad_format_names_flag_value_and_accepted(tmp_path):
    p = run(["gate", "--baseline", BASELINE, "--current", BASELINE, "--format", "xml"], cwd=SOURCE_DIR)
    assert p.returncode == 2
    assert "--format 'xml'" in p.stderr and "accepted: table, json, markdown, junit, none" in p.stderr
    p = run(["model", "allreduce", "--format", "table", "--format", "csv"], cwd=SOURCE_DIR)
    assert p.returncode == 2 and "one format goes to standard output" in p.stderr
    p = run(["model", "allreduce", "--format", f"json={tmp_path / 'no' / 'x.json'}"], cwd=SOURCE_DIR)
    assert p.returncode == 2 and "does not exist" in p.stderr
