"""Inputs that are pipes (issue 37 item 7): `collbench report <(...)` and `collbench sweep --dry-run
<(...)` read a process substitution (/dev/fd/N) or a named FIFO to its end, as they read a file:
the same output, and a bad line named by the pipe's path. Reading a FIFO that has no writer
blocks, as for any program; these tests always start the writer."""
import json
import os
import subprocess
import threading

from conftest import BIN, SOURCE_DIR, _EMPTY_CONFIG, run

BASELINE = SOURCE_DIR / "results" / "baselines" / "cpu-2rank.jsonl"  # 100 KB: more than a pipe's 64 KiB buffer
SWEEP = SOURCE_DIR / "profiles" / "sweeps" / "cpu-smoke.yaml"


def bash(script, timeout=120):
    """Runs SCRIPT in bash, where "$CB" is the binary (process substitution needs bash)."""
    env = dict(os.environ, CB=BIN, XDG_CONFIG_HOME=_EMPTY_CONFIG)
    env.pop("COLLBENCH_FAULT", None)
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=timeout, env=env)


def cases_in(path):
    return sum(1 for line in path.read_text().splitlines() if json.loads(line)["kind"] == "case")


def without_source_line(stdout):
    """The output with the line naming the input file left out (it names /dev/fd/N for a pipe)."""
    return "\n".join(line for line in stdout.splitlines() if not line.startswith(("# file:", "# sweep ")))


def test_report_reads_a_process_substitution_as_it_reads_the_file():
    direct = run(["report", BASELINE])
    assert direct.returncode == 0, direct.stderr
    piped = bash(f'"$CB" report <(cat "{BASELINE}")')
    assert piped.returncode == 0, piped.stderr
    assert "# file: /dev/fd/" in piped.stdout
    assert without_source_line(piped.stdout) == without_source_line(direct.stdout)
    rows = [line for line in piped.stdout.splitlines() if not line.startswith("#")]
    assert len(rows) == cases_in(BASELINE)  # every record, not only the first 64 KiB


def test_report_html_and_csv_from_a_process_substitution(tmp_path):
    html = tmp_path / "r.html"
    p = bash(f'"$CB" report <(cat "{BASELINE}") --html "{html}" --format csv')
    assert p.returncode == 0, p.stderr
    rows = p.stdout.splitlines()
    assert len(rows) == cases_in(BASELINE) + 1 and rows[0].startswith("file,collective,"), p.stdout[:500]
    assert html.read_text().count("<svg") >= 1


def test_report_weak_scaling_reads_process_substitutions(tmp_path):
    out = tmp_path / "ws"
    p = bash(f'"$CB" report weak-scaling <(cat "{BASELINE}") --ranks none --no-plots --out "{out}"')
    assert p.returncode == 0, p.stderr
    assert (out / "report.json").stat().st_size > 0 and "/dev/fd/" in (out / "report.md").read_text()


def test_sweep_dry_run_reads_a_process_substitution_as_it_reads_the_file():
    direct = run(["sweep", "--dry-run", SWEEP])
    assert direct.returncode == 0, direct.stderr
    piped = bash(f'"$CB" sweep --dry-run <(cat "{SWEEP}")')
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.startswith("# sweep 'cpu-smoke' from /dev/fd/")
    assert without_source_line(piped.stdout) == without_source_line(direct.stdout)


def test_a_bad_sweep_through_a_pipe_names_the_pipe_and_line():
    p = bash('"$CB" sweep --dry-run <(printf "name: p\\ncases:\\n  - {collective: allredux, bytes: 8}\\n")')
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("collbench: error: /dev/fd/"), p.stderr
    assert ":3: key 'collective': unknown collective 'allredux'; accepted: allreduce," in p.stderr, p.stderr


def write_later(fifo, data):
    """Opens FIFO for writing in a thread (blocks until the reader opens it) and writes DATA."""
    def writer():
        with open(fifo, "wb") as f:
            f.write(data)
    t = threading.Thread(target=writer, daemon=True)
    t.start()
    return t


def test_named_fifos_for_report_and_sweep(tmp_path):
    results_fifo, sweep_fifo = tmp_path / "results.fifo", tmp_path / "sweep.fifo"
    os.mkfifo(results_fifo)
    os.mkfifo(sweep_fifo)
    writer = write_later(results_fifo, BASELINE.read_bytes())
    p = run(["report", results_fifo, "--format", "csv"], timeout=60)
    writer.join(10)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[1].startswith(f"{results_fifo},allreduce,mpi,")
    writer = write_later(sweep_fifo, SWEEP.read_bytes())
    p = run(["sweep", "--dry-run", sweep_fifo], timeout=60)
    writer.join(10)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"# sweep 'cpu-smoke' from {sweep_fifo}: 35 case(s)")
