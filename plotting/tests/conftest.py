"""Synthetic collbench records (schema collbench.result/1) for the plotting tests."""

from __future__ import annotations

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCHEMA = "collbench.result/1"


def header(run_id: str = "run-a", num_ranks: int = 4) -> dict:
    return {
        "kind": "run_header",
        "schema": SCHEMA,
        "run_id": run_id,
        "started_at": "2026-01-01T00:00:00Z",
        "tool": {"version": "0.1.0", "git_sha": "abc1234", "backends_built": ["mpi"]},
        "argv": ["collbench", "run", "allreduce"],
        "config": {},
        "launcher": "mpiexec",
        "mpi_library": "MPICH 4.0",
        "cuda_runtime": None,
        "cuda_driver": None,
        "nccl_version": None,
        "hosts": [{"host": f"node{r // 2}", "pid": 100 + r} for r in range(num_ranks)],
        "env": {},
        "system": None,
        "fault": None,
    }


def case(collective: str = "allreduce", nbytes: int = 1024, num_ranks: int = 4, busbw: float | None = 10.0,
         algo: str = "auto", in_place: bool = False, model: bool = False, run_id: str = "run-a",
         per_rank: list[float] | None = None, status: str = "ok", workload: dict | None = None) -> dict:
    p50 = nbytes / 1e3 / busbw if busbw else 5.0
    c = {
        "kind": "case", "schema": SCHEMA, "run_id": run_id,
        "case_key": f"{collective}|sum|float32|mpi|{algo}|global|{in_place}|{nbytes}|{num_ranks}|[{num_ranks}]",
        "collective": collective, "redop": "sum", "dtype": "float32", "backend": "mpi",
        "algo_requested": algo, "algo_used": None, "scope": "global", "in_place": in_place,
        "timing": "isolated", "buffers": "host", "graph": False,
        "bytes": nbytes, "count": nbytes // 4, "bytes_per_rank_send": nbytes, "bytes_per_rank_recv": nbytes,
        "bytes_max_rank": None, "bytes_logical_total": None,
        "num_ranks": num_ranks, "domain_sizes": [num_ranks], "num_domains": 1,
        "iterations": 100, "warmup": 5,
        "time_us": {"p50": p50, "p5": p50 * 0.95, "p95": p50 * 1.1, "p99": p50 * 1.2, "min": p50 * 0.9,
                    "max": p50 * 1.3, "mean": p50, "stdev": p50 * 0.05, "cv": 0.05,
                    "ci95_low": p50 * 0.99, "ci95_high": p50 * 1.01},
        "samples_us": [p50] * 3, "samples_dropped": 0,
        "per_rank": {"mean_us": per_rank or [p50] * num_ranks, "max_us": per_rank or [p50] * num_ranks,
                     "wait_us": [1.0] * num_ranks},
        "stop_reason": "noise",
        "algbw_gbps": busbw, "busbw_gbps": busbw,
        "checked": True, "wrong": {"total": 0, "by_rank": {}},
        "model": None, "workload": workload, "overlap": None,
        "status": status, "reason": None, "fault": None,
    }
    if model:
        c["model"] = {"system": "cpu-local", "bound_time_us": p50 * 0.5, "bound_algbw_gbps": busbw * 2,
                      "bound_busbw_gbps": busbw * 2, "expected_time_us": p50 * 0.8,
                      "expected_busbw_gbps": busbw * 1.25, "efficiency": 0.5, "wire_bytes_per_rank": nbytes}
    return c


def write_jsonl(path, records, trailing: str | None = None) -> str:
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
        if trailing is not None:
            f.write(trailing)
    return str(path)


@pytest.fixture
def sweep_file(tmp_path):
    """A run over 3 sizes x 2 algorithms with model fields, one in-place series."""
    records = [header()]
    for algo in ("auto", "ring"):
        for i, nbytes in enumerate((1024, 65536, 4 * 1024 * 1024)):
            records.append(case(nbytes=nbytes, busbw=1.0 + 10 * i, algo=algo, model=True))
    for nbytes in (1024, 65536):
        records.append(case(nbytes=nbytes, busbw=2.0, in_place=True))
    return write_jsonl(tmp_path / "sweep.jsonl", records)
