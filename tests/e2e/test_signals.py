"""Signals and dead ranks (issue 20 item 4). SIGINT or SIGTERM, to mpiexec (MPICH's Hydra
forwards it to every rank) or to one rank, stops the run within about a second with exit 3,
naming the signal, the rank and the case; every finished case stays in the results file as
complete JSONL, and --resume measures the rest. A rank killed outright (SIGKILL) is ended by the
launcher: Hydra kills the other ranks at once and exits with the killed rank's signal number;
collbench cannot speak then, but the file stays valid and resumable. A rank 0 frozen with its
watchdog (SIGSTOP) is reported by rank 1's watchdog."""
import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import BIN, MPIEXEC, _EMPTY_CONFIG, read_jsonl, run

# 6 cases of about half a second each: long enough to signal in the middle, short to resume.
ARGS = ["run", "allreduce", "-b", "8", "-e", "16K", "-f", "4", "--min-time", "0.5s", "--max-time", "0.5s",
        "--budget", "0", "--max-noise", "0.000001", "--max-iters", "100000000", "-w", "1", "--format", "none"]
CASES = 6


def start(out, np):
    env = dict(os.environ, XDG_CONFIG_HOME=_EMPTY_CONFIG)
    env.pop("COLLBENCH_FAULT", None)
    return subprocess.Popen([MPIEXEC, "-n", str(np), BIN] + ARGS + ["--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def rank_pids_after_two_cases(out, proc):
    """The ranks' pids from the run header, once two cases are in the file."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        lines = out.read_text().splitlines() if out.exists() else []
        if len(lines) >= 3:
            return {h["rank"]: h["pid"] for h in json.loads(lines[0])["hosts"]}
        time.sleep(0.05)
    raise AssertionError("the run wrote no two cases within 60 s")


def signal_and_wait(proc, pid, signum):
    t0 = time.monotonic()
    os.kill(pid, signum)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err, time.monotonic() - t0


def assert_valid_and_resumable(out, np, validator):
    text = out.read_text()
    assert text.endswith("\n")
    records = [json.loads(line) for line in text.splitlines()]  # every line complete
    assert records[0]["kind"] == "run_header" and len(records) >= 3
    for r in records:
        validator.validate(r)
    p = run(ARGS + ["--out", out, "--resume"], np=np, timeout=120)
    assert p.returncode == 0, p.stderr
    cases = [r for r in read_jsonl(out) if r["kind"] == "case"]
    assert len(cases) == CASES and len({c["case_key"] for c in cases}) == CASES
    return records


STOP = re.compile(r"^collbench: error: rank (\d+) \(host [^,]+, pid (\d+)\) received (SIGINT|SIGTERM) during case (\d+) "
                  r"\(allreduce \d+ B float32\) (?:setup|verification|warm-up iteration \d+|iteration \d+); stopping "
                  r"the run \(exit 3\): every case finished before it stays in the results file, and --resume measures "
                  r"the rest$", re.M)


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_signal_to_mpiexec_stops_within_a_second_with_exit_3(tmp_path, validator, signame):
    out = tmp_path / "r.jsonl"
    proc = start(out, 2)
    rank_pids_after_two_cases(out, proc)
    code, err, elapsed = signal_and_wait(proc, proc.pid, getattr(signal, signame))
    assert code == 3, err
    assert elapsed < 1.5, elapsed
    stops = STOP.findall(err)
    # Every rank got it: rank 0 reports at once and aborts before the others' turn (0.45 s later)
    # unless the machine is very busy; each line names the signal.
    assert stops and stops[0][0] == "0" and all(s[2] == signame for s in stops), err
    records = assert_valid_and_resumable(out, 2, validator)
    assert len(records) - 1 >= int(stops[0][3])  # the cases before the one named are in the file


def test_a_signal_delivered_twice_is_one_stop_with_one_report(tmp_path):
    # Slurm signals every task and srun forwards the same signal: each rank gets it twice, a few
    # milliseconds apart. That is one stop: the watchdog's one report, not every rank leaving at
    # once with its fallback line (a repeat a second or more later still forces the exit).
    out = tmp_path / "r.jsonl"
    proc = start(out, 2)
    rank_pids_after_two_cases(out, proc)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    assert time.monotonic() - t0 < 1.5
    lines = [line for line in err.splitlines() if line.startswith("collbench: error")]
    assert len(lines) == 1 and STOP.match(lines[0]) and " during case " in lines[0], err


@pytest.mark.parametrize("np,victim,signame", [(2, 1, "SIGTERM"), (4, 3, "SIGTERM"), (4, 0, "SIGINT"),
                                               (2, 0, "SIGINT")])
def test_signal_to_one_rank_names_it_and_exits_3(tmp_path, validator, np, victim, signame):
    out = tmp_path / "r.jsonl"
    proc = start(out, np)
    pids = rank_pids_after_two_cases(out, proc)
    code, err, elapsed = signal_and_wait(proc, pids[victim], getattr(signal, signame))
    assert code == 3, err
    assert elapsed < 1.5, elapsed
    stops = STOP.findall(err)
    assert len(stops) == 1, err
    assert (int(stops[0][0]), int(stops[0][1]), stops[0][2]) == (victim, pids[victim], signame)
    assert_valid_and_resumable(out, np, validator)


@pytest.mark.parametrize("np,victim", [(2, 1), (4, 2)])
def test_killed_rank_ends_the_job_and_the_file_stays_resumable(tmp_path, validator, np, victim):
    out = tmp_path / "r.jsonl"
    proc = start(out, np)
    pids = rank_pids_after_two_cases(out, proc)
    code, err, _ = signal_and_wait(proc, pids[victim], signal.SIGKILL)
    # Hydra kills the other ranks at once and exits with the killed rank's signal number; it names
    # a pid, which the run header's `hosts` maps to its rank.
    assert code != 0
    assert_valid_and_resumable(out, np, validator)


@pytest.mark.parametrize("np", [2, 4])
def test_frozen_rank_0_is_reported_by_rank_1(tmp_path, validator, np):
    # SIGSTOP freezes rank 0 with its watchdog thread (a hung node): rank 1's watchdog reports it
    # a few seconds after its own deadline, naming rank 0 as not answering, and aborts with exit 3.
    # (Frozen between cases, the others wait for rank 0 inside the case's setup, and are listed
    # as not arrived there.)
    out = tmp_path / "r.jsonl"
    env = dict(os.environ, XDG_CONFIG_HOME=_EMPTY_CONFIG)
    env.pop("COLLBENCH_FAULT", None)
    proc = subprocess.Popen([MPIEXEC, "-n", str(np), BIN] + ARGS + ["--timeout", "2s", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    pids = rank_pids_after_two_cases(out, proc)
    try:
        code, err, elapsed = signal_and_wait(proc, pids[0], signal.SIGSTOP)
    finally:
        if proc.poll() is None:
            os.kill(pids[0], signal.SIGCONT)
    assert code == 3, err
    assert elapsed < 30, elapsed
    assert re.search(r"collbench: error: watchdog: case \d+ \(allreduce \d+ B float32\) (?:iteration \d+|warm-up "
                     r"iteration \d+|verification|setup) exceeded the 2 s timeout; ranks that did not arrive: .*; no "
                     r"answer from: 0 \(host [^)]+\) \(reported by rank 1: rank 0 did not\); aborting \(exit 3\)",
                     err), err
    text = out.read_text()
    assert text.endswith("\n")
    for line in text.splitlines():
        validator.validate(json.loads(line))


def test_frozen_ranks_0_and_1_give_one_report_from_rank_2(tmp_path, validator):
    # Ranks 0 and 1 frozen together (a node lost where ranks 0 and 1 share it): the next reporter in
    # line (rank 2, 12 s after its deadline) speaks alone, and names only 0 and 1 as silent; rank
    # 3, alive, answers it even while it would report itself (before, ranks 2 and 3 both reported,
    # each naming the other as silent).
    out = tmp_path / "r.jsonl"
    env = dict(os.environ, XDG_CONFIG_HOME=_EMPTY_CONFIG)
    env.pop("COLLBENCH_FAULT", None)
    proc = subprocess.Popen([MPIEXEC, "-n", "4", BIN] + ARGS + ["--timeout", "2s", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    pids = rank_pids_after_two_cases(out, proc)
    try:
        os.kill(pids[1], signal.SIGSTOP)
        code, err, elapsed = signal_and_wait(proc, pids[0], signal.SIGSTOP)
    finally:
        for r in (0, 1):
            if proc.poll() is None:
                os.kill(pids[r], signal.SIGCONT)
    assert code == 3, err
    assert elapsed < 40, elapsed
    reports = [line for line in err.splitlines() if line.startswith("collbench: error: watchdog:")]
    assert len(reports) == 1, err
    assert re.search(r"; no answer from: 0 \(host [^)]+\), 1 \(host [^)]+\) \(reported by rank 2: rank 0 did not\); "
                     r"aborting \(exit 3\)$", reports[0]), reports[0]
    for line in out.read_text().splitlines():
        validator.validate(json.loads(line))


# locate runs its methods one after the other (issue 37 item 5): between two phases no case runs,
# yet a stop signal there must end the job as during a case: the rank's report, and MPI_Abort
# with exit 3 (one rank's own exit lets Hydra answer with the signal it kills the others with).
LOCATE = ["locate", "--methods", "skew,pairwise", "--skew-bytes", "64K", "--pair-bytes", "64K", "--min-iters", "5"]


def start_locate(out_dir, pair_max_time):
    env = dict(os.environ, XDG_CONFIG_HOME=_EMPTY_CONFIG)
    env.pop("COLLBENCH_FAULT", None)
    return subprocess.Popen([MPIEXEC, "-n", "2", BIN] + LOCATE + ["--max-time", pair_max_time, "--out-dir",
                                                                  str(out_dir)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def pids_after_the_skew_phase(out_dir, proc):
    """The ranks' pids, once the skew phase's runner has finished (its header then holds the
    communicators it created): rank 0 is between the phases or just past the next one's start."""
    path = out_dir / "records-skew.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        first = path.read_text().split("\n", 1)[0] if path.exists() else ""
        if first:
            header = json.loads(first)
            if header.get("communicators"):
                return {h["rank"]: h["pid"] for h in header["hosts"]}
        time.sleep(0.0005)
    raise AssertionError("the skew phase did not end within 60 s")


LOCATE_STOP = re.compile(r"^collbench: error: rank 1 \(host [^,]+, pid (\d+)\) received SIGTERM (?:between cases|during "
                         r"the run's start \([a-z ]+\)); "
                         r"stopping the run \(exit 3\): no report is written; with --out-dir, the records of the "
                         r"cases finished before it stay in its records-\*\.jsonl", re.M)


@pytest.mark.parametrize("rank_0", ["frozen", "running"])
def test_sigterm_to_one_rank_between_locates_phases_aborts_with_exit_3(tmp_path, rank_0):
    # frozen: rank 0 stopped (SIGSTOP) at the end of the skew phase, so rank 1 waits between the
    # phases when the signal comes. running: rank 0 goes on at once and the short pairwise phase
    # ends within rank 1's report delay, so the report falls to the end of locate's watchdog.
    proc = start_locate(tmp_path, "300ms" if rank_0 == "frozen" else "1ms")
    pids = pids_after_the_skew_phase(tmp_path, proc)
    os.kill(pids[0], signal.SIGSTOP)
    try:
        time.sleep(0.3)  # rank 1 reaches the point where it waits for rank 0
        os.kill(pids[1], signal.SIGTERM)
        if rank_0 == "running":
            os.kill(pids[0], signal.SIGCONT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.kill(pids[0], signal.SIGCONT)
            proc.kill()
    assert proc.returncode == 3, err
    stops = LOCATE_STOP.findall(err)
    # The watchdog's report (host, pid, where), which it follows with MPI_Abort(3); a rank leaving
    # on its own prints the handler's line instead, without host or place.
    assert stops == [str(pids[1])], err
