"""--verify auto|host|device (docs/measurement.md "Where inputs are written and results checked"):
bad values and device verification on the mpi backend exit 2 with a message; host and auto verify
the same cases on the mpi backend (its only path is the host), a corrupt fault included; every
measuring subcommand takes the flag."""
import pytest

from conftest import FAST, read_jsonl, run


def test_bad_value_exits_2_naming_the_accepted_ones():
    p = run(["run", "allreduce", "-b", "8", "-e", "8", "--verify", "gpu"])
    assert p.returncode == 2, p.stderr
    assert "--verify gpu: accepted: auto, host, device" in p.stderr


def test_device_on_the_mpi_backend_exits_2_before_anything_runs(tmp_path):
    out = tmp_path / "r.jsonl"
    p = run(["run", "allreduce", "-b", "8", "-e", "8", "--verify", "device", "--out", out], np=2)
    assert p.returncode == 2, p.stderr
    assert "--verify device: the mpi backend has no device verification" in p.stderr
    assert "use --verify host or auto" in p.stderr
    assert not out.exists()


@pytest.mark.parametrize("mode", ["host", "auto"])
def test_host_and_auto_verify_every_case_on_mpi(tmp_path, mode):
    out = tmp_path / "r.jsonl"
    p = run(["run", "allreduce", "-b", "1K", "-e", "4K", "-f", "4", "-o", "sum,max", "--in-place", "both",
             "--verify", mode, "--out", out, "--format", "none"] + FAST, np=2)
    assert p.returncode == 0, p.stderr
    cases = read_jsonl(out)[1:]
    assert len(cases) == 8
    assert all(c["status"] == "ok" and c["checked"] for c in cases), cases


@pytest.mark.parametrize("mode", ["host", "auto"])
def test_corrupt_fault_is_caught_in_either_mode(tmp_path, mode):
    out = tmp_path / "bad.jsonl"
    p = run(["run", "alltoall", "-b", "4K", "-e", "4K", "--verify", mode, "--out", out] + FAST, np=2,
            env={"COLLBENCH_FAULT": "corrupt:rank=1"})
    assert p.returncode == 1, p.stdout + p.stderr
    assert read_jsonl(out)[1]["wrong"] == {"total": 1, "by_rank": {"1": 1}}


@pytest.mark.parametrize("sub", ["run", "sweep", "accept", "locate"])
def test_every_measuring_subcommand_documents_the_flag(sub):
    p = run([sub, "--help"])
    assert p.returncode == 0, p.stderr
    assert "--verify" in p.stdout
