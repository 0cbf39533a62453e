"""Crash safety (docs/interfaces.md section 4): a run that dies mid-sweep (watchdog abort, or one rank
killed with SIGKILL) leaves only complete JSON lines behind, and `--resume` then completes the
sweep with exactly one record per case; --resume refuses another configuration and never
duplicates the run header."""
import json
import os
import signal
import subprocess
import time

from conftest import BIN, FAST, MPIEXEC, _EMPTY_CONFIG, read_jsonl, run

SIZES = [8, 64, 512, 4096, 32768]


def case_bytes(records):
    return [r["bytes"] for r in records if r["kind"] == "case"]


def complete_lines(path):
    """Every newline-terminated line must be one JSON object; an unterminated tail is allowed
    (the reader skips it) and returned separately."""
    text = path.read_text()
    *lines, tail = text.split("\n")
    return [json.loads(line) for line in lines if line.strip()], tail


def test_resume_after_watchdog_abort_refuses_other_faults_and_completes_the_sweep(tmp_path, validator):
    out = tmp_path / "r.jsonl"
    base = ["run", "allreduce", "-b", "8", "-e", "32K", "-f", "8", "--timeout", "3s", "--out", out,
            "--format", "none"] + FAST
    p = run(base, np=2, env={"COLLBENCH_FAULT": "hang:rank=1,case=2,iter=3"}, timeout=120)
    assert p.returncode == 3, (p.returncode, p.stderr)
    first = out.read_text()
    records = read_jsonl(out)
    assert [r["kind"] for r in records] == ["run_header", "case", "case"]
    assert case_bytes(records) == SIZES[:2]

    # The file's records carry the injected hang: a clean --resume would mix two fault settings.
    p = run(base + ["--resume"], np=2, timeout=120)
    assert p.returncode == 2, p.stderr
    assert "with other injected faults (COLLBENCH_FAULT 'hang:rank=1,case=2,iter=3' in the file vs none now)" \
        in p.stderr, p.stderr
    assert out.read_text() == first

    # The same file without the faulted run's marks (as a clean run killed there would leave it)
    # resumes to every case once, in sweep order, the measured ones kept byte for byte.
    clean = [json.loads(line) for line in first.splitlines()]
    for r in clean:
        r["fault"] = None  # a required field (null: no faults)
    first = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in clean)
    out.write_text(first)
    p = run(base + ["--resume"], np=2, timeout=120)
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    assert text.startswith(first)
    records = read_jsonl(out)
    assert [r["kind"] for r in records].count("run_header") == 1
    assert case_bytes(records) == SIZES
    assert len({r["case_key"] for r in records if r["kind"] == "case"}) == len(SIZES)
    for r in records:
        validator.validate(r)

    # Resuming a complete file runs nothing and writes nothing.
    p = run(base + ["--resume"], np=2, timeout=120)
    assert p.returncode == 0, p.stderr
    assert out.read_text() == text


def test_sigkill_of_one_rank_then_resume_completes_the_sweep(tmp_path, validator):
    out = tmp_path / "k.jsonl"
    # Each case takes about 300 ms, so the kill lands mid-sweep.
    args = ["run", "alltoall", "-b", "64", "-e", "64K", "-f", "4", "--min-time", "300ms", "--max-time", "300ms",
            "-w", "1", "--timeout", "10s", "--out", out, "--format", "none"]
    sizes = [64, 256, 1024, 4096, 16384, 65536]
    env = dict(os.environ, XDG_CONFIG_HOME=_EMPTY_CONFIG)
    env.pop("COLLBENCH_FAULT", None)
    proc = subprocess.Popen([MPIEXEC, "-n", "2", BIN] + [str(a) for a in args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        header = None
        while time.monotonic() < deadline:
            if out.exists():
                done, _ = complete_lines(out)
                if len(done) >= 3:  # the header and two cases are on disk
                    header = done[0]
                    break
            time.sleep(0.02)
        assert header is not None, "the run never wrote two cases"
        victim = next(h["pid"] for h in header["hosts"] if h["rank"] == 1)
        os.kill(victim, signal.SIGKILL)
        killed_at = time.monotonic()
        _, stderr = proc.communicate(timeout=60)
        # The launcher notices and ends the job well within the watchdog timeout.
        assert proc.returncode != 0, stderr
        assert time.monotonic() - killed_at < 30
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    done, tail = complete_lines(out)
    assert done[0]["kind"] == "run_header"
    measured = case_bytes(done)
    assert 2 <= len(measured) < len(sizes) and measured == sizes[:len(measured)]
    for r in done:
        validator.validate(r)

    p = run(args + ["--resume"], np=2, timeout=120)
    assert p.returncode == 0, p.stderr
    if tail:
        assert "truncated" in p.stderr
    records = read_jsonl(out)  # every line complete again
    assert [r["kind"] for r in records].count("run_header") == 1
    assert case_bytes(records) == sizes
    assert records[1:1 + len(measured)] == done[1:]  # earlier measurements untouched


def test_resume_refuses_another_configuration_and_names_the_difference(tmp_path):
    out = tmp_path / "c.jsonl"
    base = ["run", "allreduce", "-b", "8", "-e", "64", "-f", "8", "--out", out, "--format", "none"] + FAST
    assert run(base, np=2).returncode == 0
    before = out.read_text()
    p = run(["run", "allreduce", "-b", "8", "-e", "512", "-f", "8", "--out", out, "--format", "none", "--resume"]
            + FAST, np=2)
    assert p.returncode == 2
    assert "different configuration (2 case(s) in the file vs 3 now)" in p.stderr, p.stderr
    p = run(base[:-len(FAST)] + ["--max-time", "200ms", "--min-time", "0", "--max-iters", "20", "-w", "1",
                                 "--resume"], np=2)
    assert p.returncode == 2
    assert "case 0: max_time_s 0.1 vs 0.2" in p.stderr, p.stderr
    p = run(base + ["--resume", "--ranks-per-domain", "1"], np=2)
    assert p.returncode == 2 and "domain_sizes [2] vs [1,1]" in p.stderr, p.stderr
    assert out.read_text() == before  # a refusal writes nothing


def test_resume_of_a_header_only_file_writes_no_second_header(tmp_path):
    out = tmp_path / "h.jsonl"
    base = ["run", "allreduce", "-b", "8", "-e", "64", "-f", "8", "--out", out, "--format", "none"] + FAST
    assert run(base, np=2).returncode == 0
    lines = out.read_text().splitlines(keepends=True)
    out.write_text(lines[0])  # killed right after the header
    p = run(base + ["--resume"], np=2)
    assert p.returncode == 0, p.stderr
    records = read_jsonl(out)
    assert [r["kind"] for r in records] == ["run_header", "case", "case"]


def test_resume_of_cases_without_a_header_is_refused(tmp_path):
    out = tmp_path / "n.jsonl"
    base = ["run", "allreduce", "-b", "8", "-e", "64", "-f", "8", "--out", out, "--format", "none"] + FAST
    assert run(base, np=2).returncode == 0
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[1:]))
    p = run(base + ["--resume"], np=2)
    assert p.returncode == 2
    assert "holds cases but no run header" in p.stderr and "--force" in p.stderr
    assert out.read_text() == "".join(lines[1:])


def test_readers_warn_on_a_truncated_last_line_naming_file_and_line(tmp_path):
    out = tmp_path / "t.jsonl"
    base = ["run", "allreduce", "-b", "8", "-e", "64", "-f", "8", "--out", out, "--format", "none"] + FAST
    assert run(base, np=2).returncode == 0
    text = out.read_text()
    cut = tmp_path / "cut.jsonl"
    cut.write_text(text[:-40])  # the last case loses its end and its newline
    expected = f"{cut}:3: skipped a truncated last line"
    for args in (["report", cut], ["gate", "--baseline", out, "--current", cut], ["export-gbench", cut]):
        p = run(args)
        assert p.returncode in (0, 4), (args, p.returncode, p.stderr)
        assert expected in p.stderr, (args, p.stderr)
