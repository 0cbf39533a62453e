"""Bad input: exit code 2 and a message naming the bad value and the accepted ones."""
import pytest

from conftest import run

CASES = [
    (["run", "allredux"], ["'allredux'", "allreduce", "alltoall", "did you mean 'allreduce'"]),
    (["run", "allreduce", "-d", "float33"], ["'float33'", "bfloat16", "float8e4m3"]),
    (["run", "allreduce", "-o", "avg"], ["'avg'", "sum, prod, min, max"]),
    (["run", "allreduce", "-b", "1M", "-e", "8"], ["1048576", "-b", "-e"]),
    (["run", "allreduce", "-b", "8", "-e", "12QB"], ["12QB", "QB", "MiB"]),
    (["run", "allreduce", "-b", "-8"], ["-8", "negative"]),
    (["run", "allreduce", "--bogus-flag"], ["--bogus-flag"]),
    (["run", "allreduce", "--algo", "rign"], ["'rign'", "ring", "did you mean 'ring'"]),
    (["run", "allreduce", "--scope", "rack"], ["'rack'", "domain", "global"]),
    (["run", "allreduce", "--in-place", "maybe"], ["'maybe'", "off, on, both"]),
    (["run", "allreduce", "--max-time", "3 fortnights"], ["3 fortnights", "500ms"]),
    (["run", "allreduce", "--domain-sizes", "1,x"], ["'x'", "72,72,72,40"]),
    (["run", "allreduce", "--domain-sizes", "3,3"], ["sums to 6", "1 ranks"]),
    (["run", "allreduce", "--resume"], ["--out"]),
    (["run", "allreduce", "-c", "2"], ["-c", "0, 1"]),
    (["run", "allreduce", "-G", "20"], ["--graph/-G 20", "the mpi backend", "backends that support it: nccl"]),
    (["run"], ["COLLECTIVE", "allreduce"]),
    (["frobnicate"], ["frobnicate"]),
]


@pytest.mark.parametrize("args,needles", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_bad_input_exits_2_naming_value_and_choices(args, needles):
    p = run(args)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    for n in needles:
        assert n in p.stderr, (n, p.stderr)
    assert "error" in p.stderr


def test_bad_fault_spec_exits_2(tmp_path):
    p = run(["run", "allreduce", "-b", "8", "-e", "8"], env={"COLLBENCH_FAULT": "corupt:rank=1"})
    assert p.returncode == 2
    assert "did you mean 'corrupt'" in p.stderr


def test_bad_sweep_file_names_file_line_key(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("name: x\ncases:\n  - collective: allreduce\n    bytez: 8\n")
    p = run(["sweep", "--dry-run", f])
    assert p.returncode == 2
    assert f"{f}:4" in p.stderr and "'bytez'" in p.stderr and "did you mean 'bytes'" in p.stderr


def test_nccl_backend_without_gpu_exits_2():
    p = run(["run", "allreduce", "-b", "8", "-e", "8", "--backend", "nccl"])
    assert p.returncode == 2
    assert "nccl" in p.stderr
