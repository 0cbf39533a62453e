"""Communicator lifecycle (docs/measurement.md "Communicator lifecycle", issue 34 items 1-2): the
run header's `communicators` {created, max_live}, written into the results file when the run
ends, for sweeps over several algorithms and both scopes, alternating communicator sets, EP groups
and --repeats. On the MPI backend a set is 3 communicators: the world's duplicate, the domain
split and the cross-domain split."""
import subprocess

import pytest

from conftest import BIN, FAST, read_jsonl, run

RPD1 = ["--ranks-per-domain", "1"]


def header_of(path):
    return read_jsonl(path)[0]


def test_algorithms_and_scopes_share_one_set(tmp_path, validator):
    out = tmp_path / "a.jsonl"
    p = run(["run", "allreduce", "--algo", "auto,flat,hierarchical", "--scope", "domain,global", "-b", "4K", "-e",
             "4K", "--format", "jsonl", "--out", out] + RPD1 + FAST, np=2)
    assert p.returncode == 0, p.stderr
    records = read_jsonl(out)
    assert len(records) == 7
    for rec in records:
        validator.validate(rec)
    # auto, flat and hierarchical all run on the library's algorithms (one backend instance).
    assert records[0]["communicators"] == {"created": 3, "max_live": 3}


def test_alternating_sets_run_one_after_the_other(tmp_path):
    # Plain and overlap cases alternate: overlap mode polls, so it has its own set on MPI.
    sweep = tmp_path / "s.yaml"
    entries = []
    for scope in ("domain", "global"):
        for algo in ("auto", "hierarchical"):
            entries.append(f"  - {{collective: allreduce, bytes: 4K, scope: {scope}, algo: {algo}}}")
            entries.append(f"  - {{collective: allreduce, bytes: 4K, scope: {scope}, algo: {algo}, "
                           "overlap: 'sleep:time=1ms'}")
    sweep.write_text("name: alt\ncases:\n" + "\n".join(entries) + "\n")
    out = tmp_path / "s.jsonl"
    p = run(["sweep", sweep, "--out", out, "--format", "none"] + RPD1 + FAST[:-2], np=2)  # sweep has no -w
    assert p.returncode == 0, p.stderr
    records = read_jsonl(out)
    # Both sets' communicators were created; never more than one set's were alive.
    assert records[0]["communicators"] == {"created": 6, "max_live": 3}
    cases = records[1:]
    assert ["overlap=" in c["case_key"] for c in cases] == [False] * 4 + [True] * 4
    assert [(c["scope"], c["algo_requested"]) for c in cases[:4]] == [
        ("domain", "auto"), ("domain", "hierarchical"), ("global", "auto"), ("global", "hierarchical")]


def test_ep_groups_are_counted_with_their_set(tmp_path):
    out = tmp_path / "m.jsonl"
    p = run(["run", "moe-dispatch", "--tokens", "8", "--ep-size", "1", "--algo", "flat", "--out", out,
             "--format", "none"] + FAST, np=2)
    assert p.returncode == 0, p.stderr
    # The set's 3, and the EP groups' split of the world (one group of 1 rank per rank).
    assert header_of(out)["communicators"] == {"created": 4, "max_live": 4}


def test_each_repeat_pass_creates_its_sets_afresh(tmp_path):
    out = tmp_path / "r.jsonl"
    p = run(["run", "allreduce", "-b", "1K", "-e", "2K", "--repeats", "2", "--out", out, "--format", "none"] + FAST,
            np=2)
    assert p.returncode == 0, p.stderr
    assert header_of(out)["communicators"] == {"created": 6, "max_live": 3}


@pytest.mark.skipif("nccl" not in subprocess.run([BIN, "--version"], capture_output=True,
                                                 text=True).stdout.split("backends:")[-1].split(")")[0],
                    reason="built without the nccl backend")
def test_a_backend_that_cannot_start_fails_before_the_header(tmp_path):
    # Backends start up front (without communicators): NCCL that cannot be loaded fails on every
    # rank before the run header is written, not at the first case.
    out = tmp_path / "g.jsonl"
    p = run(["run", "allreduce", "-b", "8", "-e", "8", "--backend", "nccl", "--out", out], np=2,
            env={"COLLBENCH_NCCL_LIBRARY": "/nonexistent/libnccl.so.2"})
    assert p.returncode == 2, p.stderr
    assert "/nonexistent/libnccl.so.2" in p.stderr
    assert not out.exists() or out.stat().st_size == 0
