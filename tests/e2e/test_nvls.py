"""NVLink SHARP cases from the command line on a machine without a GPU (docs/nvls.md): every in-switch
algorithm on --backend nccl fails like any GPU request (exit 2, naming the missing device or the
missing backend), never a crash; the shipped NVLS sweeps load and cover the issue's sizes."""
import re

import pytest

from conftest import SOURCE_DIR, run


@pytest.mark.parametrize("algo", ["cb-multimem", "nvls", "nvlstree", "symmetric"])
def test_in_switch_algorithms_without_gpu_exit_2(algo):
    p = run(["run", "allreduce", "-b", "1M", "-e", "1M", "--backend", "nccl", "--algo", algo,
             "--buffers", "symmetric"])
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "nccl" in p.stderr
    # A CUDA build names the missing GPU; a CPU-only build says the backend is not built.
    assert "GPU" in p.stderr or "not built" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and "terminate" not in p.stderr


@pytest.mark.parametrize("name", ["nvls-gb300.yaml", "nvls-hgx.yaml"])
def test_nvls_sweeps_cover_moe_tp_and_large_sizes(name):
    p = run(["sweep", "--dry-run", SOURCE_DIR / "profiles" / "sweeps" / name, "--assume-ranks", "8"])
    assert p.returncode == 0, p.stderr
    rows = [l.split() for l in p.stdout.splitlines() if l and not l.startswith("#")]
    algos = {r[5] for r in rows}
    assert {"nvls", "ring", "tree", "symmetric", "cb-multimem"} <= algos
    sizes = {r[2] for r in rows}
    for s in ["64KiB", "256MiB", "8GiB"]:
        assert s in sizes, (s, sorted(sizes))
    assert {r[1] for r in rows} >= {"allreduce", "reducescatter", "allgather"}
    # 8 GiB out of place: 16 GiB of buffers per rank.
    assert re.search(r"buffer memory per rank: at most 16GiB", p.stdout), p.stdout
